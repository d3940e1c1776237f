package simulate

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// Kind names a generative model.
type Kind int

const (
	// OrMachine is the paper's model: programs, usage and flip noise at
	// fixed rates (FlipOn, FlipOff).
	OrMachine Kind = iota
	// SingleCell adds what real single-cell data do: a baseline detection
	// rate per gene, a depth per cell, and Poisson detection that depends on
	// both (SingleCellParams).
	SingleCell
	// Digits draws the calculator digits of the paper's Fig. calc: the
	// seven segments of a seven-segment display as codes, each image a
	// digit lighting some of them, with the OrMachine kind's flip noise
	// (DigitsParams).
	Digits
)

var kindNames = [...]string{OrMachine: "ormachine", SingleCell: "singlecell", Digits: "digits"}

// String returns the kind's name as ParseKind reads it.
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ParseKind reads a kind's name: "ormachine", "singlecell" or "digits".
func ParseKind(s string) (Kind, error) {
	for k, name := range kindNames {
		if s == name {
			return Kind(k), nil
		}
	}
	return 0, fmt.Errorf("simulate: unknown kind %q (want %s, %s or %s)", s, OrMachine, SingleCell, Digits)
}

// MarshalText writes the kind's name, so that truth.json says "singlecell".
func (k Kind) MarshalText() ([]byte, error) {
	if k < 0 || int(k) >= len(kindNames) {
		return nil, fmt.Errorf("simulate: unknown kind %d", int(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText reads a kind's name.
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := ParseKind(string(b))
	*k = v
	return err
}

// SingleCellParams are the single-cell kind's parameters. Cell n has a size
// factor s_n = exp(DepthSigma·ξ_n) (lognormal, median 1; ξ standard normal).
// Gene d has a baseline rate μ_d, lognormal around BaselineMedian, or around
// HousekeepingMedian for the round(HousekeepingFraction·Genes) housekeeping
// genes, and a program lift ν_d, lognormal around LiftMedian (0 for
// housekeeping genes, which join no program). The UMI count of an entry is
// Poisson with mean s_n·(μ_d + ν_d·c_nd), where c_nd = OR_l (z_nl AND u_ld)
// says whether a program of the cell covers the gene, so the entry is
// detected with probability
//
//	P(x_nd = 1) = 1 − exp(−s_n·(μ_d + ν_d·c_nd)).
//
// Dropout of program genes thus falls with the cell's depth and the gene's
// lift, and background rises with depth and baseline.
//
// Program l (0-based) holds round(Genes·ProgramSizeMax·r^l) genes, r =
// (ProgramSizeMin/ProgramSizeMax)^(1/(L−1)), drawn from the ordinary
// (non-housekeeping) genes: program sizes fall geometrically from the first
// to the last, and programs may share genes. Every cell uses a number of
// programs drawn uniformly from ProgramsPerCellMin..ProgramsPerCellMax, each
// a distinct program chosen uniformly.
type SingleCellParams struct {
	DepthSigma float64 // σ of log s_n, in [0, 3]

	BaselineMedian float64 // median μ_d of ordinary genes, in [0, 100]
	BaselineSigma  float64 // σ of log μ_d of ordinary genes, in [0, 3]

	HousekeepingFraction float64 // fraction of genes that are housekeeping, in [0, 1)
	HousekeepingMedian   float64 // median μ_d of housekeeping genes, in [0, 100]
	HousekeepingSigma    float64 // σ of log μ_d of housekeeping genes, in [0, 3]

	LiftMedian float64 // median ν_d, in (0, 100]
	LiftSigma  float64 // σ of log ν_d, in [0, 3]

	ProgramSizeMin float64 // fraction of genes in the smallest program, in (0, 1]
	ProgramSizeMax float64 // fraction of genes in the largest program, in [ProgramSizeMin, 1]

	ProgramsPerCellMin int // fewest programs a cell uses, ≥ 0
	ProgramsPerCellMax int // most programs a cell uses, in [max(1, ProgramsPerCellMin), L]
}

// DefaultSingleCell returns parameters under which binarised data look like
// 10x PBMC or brain data: 5–10% ones; most genes' baseline detection
// between 0.2% and 5% (median μ 0.01, σ 1); 2% housekeeping genes detected
// in more than 80% of cells (median μ 3); program genes detected in about a
// third of the shallowest quarter of the cells using them and 70% of the
// deepest quarter (median ν 0.7; depth σ 0.5, about the σ 0.43 of log total
// counts in pbmc3k); six programs from 5% down to 1% of the genes at the
// demo's L; cells using one to three programs.
func DefaultSingleCell() SingleCellParams {
	return SingleCellParams{
		DepthSigma:     0.5,
		BaselineMedian: 0.01, BaselineSigma: 1,
		HousekeepingFraction: 0.02, HousekeepingMedian: 3, HousekeepingSigma: 0.5,
		LiftMedian: 0.7, LiftSigma: 0.5,
		ProgramSizeMin: 0.01, ProgramSizeMax: 0.05,
		ProgramsPerCellMin: 1, ProgramsPerCellMax: 3,
	}
}

// DefaultSingleCellParams returns the demo's size and seed
// (DefaultParams) drawn from the single-cell kind with DefaultSingleCell.
func DefaultSingleCellParams() Params {
	d := DefaultParams()
	return Params{Kind: SingleCell, Cells: d.Cells, Genes: d.Genes, L: d.L, Seed: d.Seed, SingleCell: DefaultSingleCell()}
}

// Rates and σs are bounded so that every count stays far inside uint32 and
// every probability is computed without overflow.
const (
	maxRate  = 100
	maxSigma = 3
)

func (q SingleCellParams) validate(genes, L int) error {
	type bound struct {
		name           string
		v, lo, hi      float64
		openLo, openHi bool
	}
	for _, b := range []bound{
		{"depth sigma", q.DepthSigma, 0, maxSigma, false, false},
		{"baseline median", q.BaselineMedian, 0, maxRate, false, false},
		{"baseline sigma", q.BaselineSigma, 0, maxSigma, false, false},
		{"housekeeping fraction", q.HousekeepingFraction, 0, 1, false, true},
		{"housekeeping median", q.HousekeepingMedian, 0, maxRate, false, false},
		{"housekeeping sigma", q.HousekeepingSigma, 0, maxSigma, false, false},
		{"lift median", q.LiftMedian, 0, maxRate, true, false},
		{"lift sigma", q.LiftSigma, 0, maxSigma, false, false},
		{"program size min", q.ProgramSizeMin, 0, 1, true, false},
		{"program size max", q.ProgramSizeMax, 0, 1, true, false},
	} {
		if !(b.v >= b.lo && b.v <= b.hi) || (b.openLo && b.v == b.lo) || (b.openHi && b.v == b.hi) {
			lo, hi := "[", "]"
			if b.openLo {
				lo = "("
			}
			if b.openHi {
				hi = ")"
			}
			return fmt.Errorf("simulate: %s must be in %s%v, %v%s (got %v)", b.name, lo, b.lo, b.hi, hi, b.v)
		}
	}
	switch {
	case q.ProgramSizeMin > q.ProgramSizeMax:
		return fmt.Errorf("simulate: program size min %v exceeds program size max %v", q.ProgramSizeMin, q.ProgramSizeMax)
	case q.ProgramsPerCellMin < 0 || q.ProgramsPerCellMax < max(1, q.ProgramsPerCellMin):
		return fmt.Errorf("simulate: programs per cell must satisfy 0 ≤ min ≤ max and max ≥ 1 (got %d..%d)", q.ProgramsPerCellMin, q.ProgramsPerCellMax)
	case q.ProgramsPerCellMax > L:
		return fmt.Errorf("simulate: programs per cell max %d exceeds the %d planted programs (L)", q.ProgramsPerCellMax, L)
	}
	if ordinary, largest := genes-q.housekeeping(genes), q.programSize(0, genes, L); largest > ordinary {
		return fmt.Errorf("simulate: the largest program (%d genes) exceeds the %d genes that are not housekeeping", largest, ordinary)
	}
	return nil
}

// housekeeping returns the number of housekeeping genes among genes.
func (q SingleCellParams) housekeeping(genes int) int {
	return int(math.Round(q.HousekeepingFraction * float64(genes)))
}

// programSize returns the number of genes of program l (0-based) of L.
func (q SingleCellParams) programSize(l, genes, L int) int {
	frac := q.ProgramSizeMax
	if L > 1 {
		frac *= math.Pow(q.ProgramSizeMin/q.ProgramSizeMax, float64(l)/float64(L-1))
	}
	return max(1, int(math.Round(frac*float64(genes))))
}

// activitySize returns the number of genes of an activity program among
// genes: the geometric middle of the identity programs' sizes.
func (q SingleCellParams) activitySize(genes int) int {
	return max(1, int(math.Round(math.Sqrt(q.ProgramSizeMin*q.ProgramSizeMax)*float64(genes))))
}

// singleCellStream keys the per-cell random streams of the single-cell kind.
const singleCellStream = 0x5c5c5c5c

// geneBin is a group of genes whose baseline rates lie within a factor of
// two of the bin's largest, maxRate: background detection is drawn per bin
// by geometric skipping at the largest rate and thinning, so a cell costs
// O(bins + detected genes) draws, not O(genes).
type geneBin struct {
	genes   []int32
	maxRate float64
}

// drawSingleCell draws the single-cell kind's genes, programs, usage and
// depths from r, in that order.
func (t *Truth) drawSingleCell(ctx context.Context, r *rand.Rand) {
	q, D := t.SingleCell, t.Genes
	perm := r.Perm(D)
	t.Housekeeping = make([]uint64, t.words)
	for _, g := range perm[:q.housekeeping(D)] {
		t.Housekeeping[g/64] |= 1 << (g % 64)
	}
	t.Baseline, t.Lift = make([]float64, D), make([]float64, D)
	var ordinary []int
	for g := range D {
		base, lift := r.NormFloat64(), r.NormFloat64()
		if bit(t.Housekeeping, g) {
			t.Baseline[g] = q.HousekeepingMedian * math.Exp(q.HousekeepingSigma*base)
			continue
		}
		t.Baseline[g] = q.BaselineMedian * math.Exp(q.BaselineSigma*base)
		t.Lift[g] = q.LiftMedian * math.Exp(q.LiftSigma*lift)
		ordinary = append(ordinary, g)
	}
	t.U = make([][]uint64, t.L)
	for l := range t.U {
		t.U[l] = make([]uint64, t.words)
		for _, g := range sample(ordinary, q.programSize(l, D, t.L), r) {
			t.U[l][g/64] |= 1 << (g % 64)
		}
	}
	t.Z = make([][]uint64, t.L)
	for l := range t.Z {
		t.Z[l] = make([]uint64, (t.Cells+63)/64)
	}
	programs := make([]int, t.L)
	for l := range programs {
		programs[l] = l
	}
	t.SizeFactor = make([]float64, t.Cells)
	for n := range t.Cells {
		if n%(1<<16) == 0 && ctx.Err() != nil {
			return // New reports it
		}
		k := q.ProgramsPerCellMin + r.IntN(q.ProgramsPerCellMax-q.ProgramsPerCellMin+1)
		for _, l := range sample(programs, k, r) {
			t.Z[l][n/64] |= 1 << (n % 64)
		}
		t.SizeFactor[n] = math.Exp(q.DepthSigma * r.NormFloat64())
	}
	t.bins = binGenes(t.Baseline)
}

// sample moves k elements of pool, chosen uniformly without replacement,
// to its front and returns them (a partial Fisher–Yates shuffle).
func sample(pool []int, k int, r *rand.Rand) []int {
	for i := range k {
		j := i + r.IntN(len(pool)-i)
		pool[i], pool[j] = pool[j], pool[i]
	}
	return pool[:k]
}

// binGenes groups the genes with a positive rate by decreasing rate into
// bins spanning at most a factor of two.
func binGenes(rate []float64) []geneBin {
	var order []int32
	for g, v := range rate {
		if v > 0 {
			order = append(order, int32(g))
		}
	}
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(cmp.Compare(rate[b], rate[a]), cmp.Compare(a, b))
	})
	var bins []geneBin
	for len(order) > 0 {
		top := rate[order[0]]
		end := 1
		for end < len(order) && rate[order[end]] >= top/2 {
			end++
		}
		bins = append(bins, geneBin{genes: order[:end:end], maxRate: top})
		order = order[end:]
	}
	return bins
}

// singleCellRow draws the observed row of cell n (and its counts, when
// counts is not nil) from r. Background and program expression are
// independent Poisson counts, Poisson(s·μ_d) for every gene and Poisson(s·ν_d)
// for the covered ones, whose sum is the model's count: the first pass
// visits only the genes it detects, the second only the covered genes.
func (t *Truth) singleCellRow(n int, dst, clean []uint64, counts []uint32, r *rand.Rand) {
	t.CleanRow(n, clean)
	clear(dst)
	s := t.SizeFactor[n]
	bs := s * t.background(n) // the background's scale in n's sample
	for _, b := range t.bins {
		rate := bs * b.maxRate
		pmax := -math.Expm1(-rate)
		for i := -1; ; {
			// Gaps between candidates are geometric with P(candidate) =
			// 1 − e^−rate; a candidate is kept with its own probability over
			// that.
			gap := r.ExpFloat64() / rate
			if gap >= float64(len(b.genes)-i-1) {
				break
			}
			i += int(gap) + 1
			g := int(b.genes[i])
			lam := bs * t.Baseline[g]
			if r.Float64()*pmax >= -math.Expm1(-lam) {
				continue
			}
			c := zeroTruncatedPoisson(lam, r)
			dst[g/64] |= 1 << (g % 64)
			if counts != nil {
				counts[g] = c
			}
		}
	}
	for i, w := range clean {
		for w != 0 {
			g := i*64 + bits.TrailingZeros64(w)
			w &= w - 1
			c := poisson(s*t.Lift[g], r)
			if c == 0 {
				continue
			}
			m := uint64(1) << (g % 64)
			if counts != nil {
				if dst[i]&m == 0 {
					counts[g] = 0
				}
				counts[g] += c
			}
			dst[i] |= m
		}
	}
}
