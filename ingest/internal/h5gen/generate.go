package h5gen

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sort"
)

// generatedGenome is the genome group GenerateTenXV2 writes.
const generatedGenome = "hg19"

// maxDensity bounds the density GenerateTenXV2 accepts: each entry is
// capped at probability pCap, so denser matrices are not reachable.
const (
	maxDensity = 0.8
	pCap       = 0.95
)

// GenerateTenXV2 writes a random CellRanger v2 file (genome group
// generatedGenome) of genes × cells with about density·genes·cells
// nonzeros and returns the exact count. It is deterministic in seed.
//
// The counts imitate UMI data: gene g has a log-normal detection rate r_g
// (so a few genes are common and most are rare), cell c a size factor s_c
// uniform in [0.5, 1.5], and entry (g, c) is nonzero with probability
// min(0.95, λ·r_g·s_c), λ chosen so the mean is density. A nonzero count is
// 1 plus a geometric draw with mean 4·p, so common genes also count higher.
// Gene rates come from the PCG stream (seed, 2⁶⁴-1), cell c from stream
// (seed, c), so the matrix does not depend on the order of generation.
//
// The arrays are built in memory (scigolib v0.14.0 writes a dataset in one
// call and cannot append): about 12 bytes per nonzero with int32 data and
// int64 indices, plus the encoded copy scigolib makes of each array.
// GenerateTenXV2Stream writes the same file in bounded memory.
func GenerateTenXV2(path string, genes, cells int, density float64, seed uint64, o Options) (nnz int64, err error) {
	if err := checkGenerate("GenerateTenXV2", genes, cells, density, o); err != nil {
		return 0, err
	}
	m := generate(genes, cells, density, seed)
	ids, names, barcodes := generatedNames(genes, cells)
	if err := WriteTenXV2(path, generatedGenome, m, ids, names, barcodes, o); err != nil {
		return 0, err
	}
	return int64(len(m.Data)), nil
}

// checkGenerate checks the arguments of the generator named fn.
func checkGenerate(fn string, genes, cells int, density float64, o Options) error {
	if genes <= 0 || cells <= 0 {
		return fmt.Errorf("h5gen: %s: %d genes × %d cells: both must be positive", fn, genes, cells)
	}
	if !(density >= 0 && density <= maxDensity) {
		return fmt.Errorf("h5gen: %s: density %v outside [0, %v]", fn, density, maxDensity)
	}
	return o.validate()
}

// generatedNames returns the gene ids, gene names and barcodes of a
// generated file.
func generatedNames(genes, cells int) (ids, names, barcodes []string) {
	ids = make([]string, genes)
	names = make([]string, genes)
	for g := range genes {
		ids[g] = fmt.Sprintf("ENSG%011d", g+1)
		names[g] = fmt.Sprintf("GENE%d", g+1)
	}
	barcodes = make([]string, cells)
	for c := range cells {
		barcodes[c] = barcode(uint32(c))
	}
	return ids, names, barcodes
}

// generate draws the matrix described at GenerateTenXV2.
func generate(genes, cells int, density float64, seed uint64) CSC {
	d := newModel(genes, density, seed).drawer()
	m := CSC{Genes: genes, Cells: cells, Indptr: make([]int64, cells+1)}
	expect := int(density*float64(genes)*float64(cells)*1.01) + 16
	m.Indices = make([]int64, 0, expect)
	m.Data = make([]float64, 0, expect)
	var gs []int32
	var counts []float64
	for c := range cells {
		gs, counts = d.cell(c, gs[:0], counts[:0])
		for i, g := range gs {
			m.Indices = append(m.Indices, int64(g))
			m.Data = append(m.Data, counts[i])
		}
		m.Indptr[c+1] = int64(len(m.Indices))
	}
	return m
}

// model holds what every cell's draw shares: the genes' rates and their
// bands of similar rate.
type model struct {
	seed  uint64
	genes int
	rate  []float64
	bands []band
}

// band is a set of genes whose rates are within a factor of two: in band
// k every probability is at most top times the cell's size, so candidates
// are found by geometric skips at that bound and kept with probability
// p/bound (≥ 1/2), which makes the work proportional to the nonzeros, not
// to the genes.
type band struct {
	genes []int32
	top   float64 // largest rate in the band
}

func newModel(genes int, density float64, seed uint64) *model {
	rng := rand.New(rand.NewPCG(seed, math.MaxUint64))
	rate := make([]float64, genes)
	for g := range rate {
		rate[g] = math.Exp(1.5 * rng.NormFloat64())
	}
	lambda := calibrate(rate, density)
	for g := range rate {
		rate[g] *= lambda
	}
	order := make([]int32, genes)
	for g := range order {
		order[g] = int32(g)
	}
	sort.Slice(order, func(i, j int) bool { return rate[order[i]] > rate[order[j]] })
	var bands []band
	for lo := 0; lo < genes; {
		top := rate[order[lo]]
		hi := lo
		for hi < genes && (hi == lo || rate[order[hi]] > top/2) {
			hi++
		}
		bands = append(bands, band{genes: order[lo:hi], top: top})
		lo = hi
	}
	return &model{seed: seed, genes: genes, rate: rate, bands: bands}
}

// drawer draws cells of a model; each goroutine needs its own.
type drawer struct {
	*model
	marks  []uint64
	counts []float64
	pcg    *rand.PCG
	r      *rand.Rand
}

func (m *model) drawer() *drawer {
	pcg := rand.NewPCG(0, 0)
	return &drawer{model: m, marks: make([]uint64, (m.genes+63)/64), counts: make([]float64, m.genes), pcg: pcg, r: rand.New(pcg)}
}

// cell appends cell c's nonzeros to genes and counts, genes rising. Cell c
// draws from PCG stream (seed, c) alone, so any drawer gives the same cell.
func (d *drawer) cell(c int, genes []int32, counts []float64) ([]int32, []float64) {
	d.pcg.Seed(d.seed, uint64(c))
	r := d.r
	size := 0.5 + r.Float64()
	for _, bd := range d.bands {
		bound := min(pCap, bd.top*size)
		if bound <= 0 {
			continue
		}
		logq := math.Log1p(-bound)
		for i := skip(r, logq, bound); i < len(bd.genes); i += 1 + skip(r, logq, bound) {
			g := bd.genes[i]
			p := min(pCap, d.rate[g]*size)
			if r.Float64()*bound >= p {
				continue
			}
			d.marks[g/64] |= 1 << (g % 64)
			d.counts[g] = 1 + geometric(r, 4*p)
		}
	}
	for w, word := range d.marks {
		for word != 0 {
			g := int32(w*64 + bits.TrailingZeros64(word))
			word &= word - 1
			genes = append(genes, g)
			counts = append(counts, d.counts[g])
		}
		d.marks[w] = 0
	}
	return genes, counts
}

// skip returns the number of failures before the first success of
// Bernoulli(p) trials, with logq = log(1-p).
func skip(r *rand.Rand, logq, p float64) int {
	if p >= 1 {
		return 0
	}
	return int(math.Log(1-r.Float64()) / logq)
}

// geometric returns a draw of the number of failures before a success with
// the given mean.
func geometric(r *rand.Rand, mean float64) float64 {
	if mean <= 0 {
		return 0
	}
	return math.Floor(math.Log(1-r.Float64()) / math.Log(mean/(1+mean)))
}

// calibrate returns λ such that the expected density
// mean over g and s of min(pCap, λ·rate[g]·s), s uniform on [0.5, 1.5],
// equals density (approximating s by a midpoint grid).
func calibrate(rate []float64, density float64) float64 {
	if density == 0 {
		return 0
	}
	expected := func(l float64) float64 {
		const n = 16
		var sum float64
		for _, r := range rate {
			for k := range n {
				s := 0.5 + (float64(k)+0.5)/n
				sum += min(pCap, l*r*s)
			}
		}
		return sum / float64(n*len(rate))
	}
	lo, hi := 0.0, 1.0
	for expected(hi) < density {
		hi *= 2
	}
	for range 60 {
		mid := (lo + hi) / 2
		if expected(mid) < density {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// barcode returns a distinct 16-base barcode with CellRanger's "-1" suffix
// for each c (an odd multiplier is a bijection on 32 bits).
func barcode(c uint32) string {
	x := c*0x9E3779B1 + 0x7F4A7C15
	var b [18]byte
	for i := range 16 {
		b[i] = "ACGT"[x>>(2*i)&3]
	}
	b[16], b[17] = '-', '1'
	return string(b[:])
}
