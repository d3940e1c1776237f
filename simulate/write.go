package simulate

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/klauspost/compress/gzip"

	"scpipe/internal/outlock"
	"scpipe/internal/splitmix"
)

// Output folder layout of a simulation (see WriteMTX and WriteShards).
const (
	TruthDir      = "truth"          // planted truth, beside the data
	ProgramsFile  = "programs.tsv"   // gene_id, gene_name, program_1 … program_L (0/1)
	usageFile     = "usage.tsv"      // barcode, program_1 … program_L (0/1)
	TruthJSONFile = "truth.json"     // parameters and counts
	geneRatesFile = "gene_rates.tsv" // single-cell kind: gene_id, gene_name, housekeeping, baseline, lift
	cellDepthFile = "cell_depth.tsv" // single-cell kind: barcode, size_factor
)

// GeneID returns the id of simulated gene g (0-based), e.g. "SIMG000001".
func GeneID(g int) string { return fmt.Sprintf("SIMG%06d", g+1) }

// GeneName returns the symbol of simulated gene g (0-based), e.g. "Gene1".
func GeneName(g int) string { return fmt.Sprintf("Gene%d", g+1) }

// Barcode returns a 10x-style barcode (16 bases and "-1") determined by n.
// Two cells may share one (16 bases hold 2^32); Truth.Barcode does not.
func Barcode(n int) string { return barcodeOf(uint32(splitmix.At(uint64(n), 0))) }

// barcodeOf spells the barcode of code c, two bits a base, low bits first.
func barcodeOf(c uint32) string {
	const bases = "ACGT"
	b := make([]byte, 0, 18)
	for range 16 {
		b = append(b, bases[c&3])
		c >>= 2
	}
	return string(append(b, "-1"...))
}

// barcodeFixes returns the barcodes of the cells, among cells, whose
// Barcode an earlier cell has (about cells²/2^33 of them): cell n gets
// the first code of splitmix.At(n, k), k = 1, 2, …, that no cell has,
// the cells taken in order.
func barcodeFixes(cells int) map[int]string {
	keys := make([]uint64, cells) // code<<32 | cell, so that a code's cells sort together, the first first
	for n := range keys {
		keys[n] = uint64(uint32(splitmix.At(uint64(n), 0)))<<32 | uint64(n)
	}
	slices.Sort(keys)
	var later []int
	for i := 1; i < len(keys); i++ {
		if keys[i]>>32 == keys[i-1]>>32 {
			later = append(later, int(uint32(keys[i])))
		}
	}
	if len(later) == 0 {
		return nil
	}
	slices.Sort(later)
	taken := func(c uint32) bool {
		i, _ := slices.BinarySearch(keys, uint64(c)<<32)
		return i < len(keys) && keys[i]>>32 == uint64(c)
	}
	fixes := make(map[int]string, len(later))
	given := make(map[uint32]bool, len(later))
	for _, n := range later {
		for k := uint64(1); ; k++ {
			if c := uint32(splitmix.At(uint64(n), k)); !taken(c) && !given[c] {
				given[c], fixes[n] = true, barcodeOf(c)
				break
			}
		}
	}
	return fixes
}

// Summary counts what a simulation produced.
type Summary struct {
	Params          Params  `json:"params"`
	CleanOnes       int64   `json:"clean_ones"`       // ones of the noise-free matrix (covered entries)
	ObservedOnes    int64   `json:"observed_ones"`    // ones after noise
	CoveredDetected int64   `json:"covered_detected"` // observed ones among the noise-free ones
	BackgroundOnes  int64   `json:"background_ones"`  // observed ones among the noise-free zeros
	Density         float64 `json:"density"`          // observed ones / (cells × genes)
	ProgramGenes    []int   `json:"program_genes"`    // genes per planted program
	ProgramCells    []int   `json:"program_cells"`    // cells per planted program

	// The single-cell kind only: the number of housekeeping genes, and the
	// fraction of the noise-free ones observed in each quarter of the cells
	// ranked by size factor, shallowest first (with the quarters' largest
	// size factors).
	HousekeepingGenes       int       `json:"housekeeping_genes,omitempty"`
	CoveredDetectionByDepth []float64 `json:"covered_detection_by_depth,omitempty"`
	DepthQuartiles          []float64 `json:"depth_quartiles,omitempty"`
}

// depthQuarter returns, for every cell, the quarter (0..3) of the cells
// ranked by size factor that it falls in, and each quarter's largest size
// factor.
func (t *Truth) depthQuarter() ([]uint8, []float64) {
	order := make([]int, t.Cells)
	for n := range order {
		order[n] = n
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(t.SizeFactor[a], t.SizeFactor[b]), cmp.Compare(a, b))
	})
	quarter, top := make([]uint8, t.Cells), make([]float64, 4)
	for i, n := range order {
		q := 4 * i / t.Cells
		quarter[n] = uint8(q)
		top[q] = t.SizeFactor[n]
	}
	return quarter, top
}

// tally is the counts of a set of cells.
type tally struct {
	clean, observed, covered int64
	depthClean, depthCovered [4]int64
	bySample                 []int64 // observed ones per sample (several samples only)
}

// add counts the rows in b as cell n's; quarter is nil or from depthQuarter.
func (c *tally) add(n int, b *rowBuf, quarter []uint8) {
	var clean, covered, observed int64
	for i, w := range b.clean {
		clean += int64(bits.OnesCount64(w))
		covered += int64(bits.OnesCount64(w & b.row[i]))
		observed += int64(bits.OnesCount64(b.row[i]))
	}
	c.clean += clean
	c.covered += covered
	c.observed += observed
	if quarter != nil {
		c.depthClean[quarter[n]] += clean
		c.depthCovered[quarter[n]] += covered
	}
}

func (c *tally) merge(o tally) {
	if o.bySample != nil {
		if c.bySample == nil {
			c.bySample = make([]int64, len(o.bySample))
		}
		for s, k := range o.bySample {
			c.bySample[s] += k
		}
	}
	c.clean += o.clean
	c.observed += o.observed
	c.covered += o.covered
	for q := range 4 {
		c.depthClean[q] += o.depthClean[q]
		c.depthCovered[q] += o.depthCovered[q]
	}
}

// summary turns the counts of all cells into a Summary.
func (t *Truth) summary(c tally) Summary {
	s := Summary{
		Params:    t.Params,
		CleanOnes: c.clean, ObservedOnes: c.observed,
		CoveredDetected: c.covered, BackgroundOnes: c.observed - c.covered,
		Density: float64(c.observed) / (float64(t.Cells) * float64(t.Genes)),
	}
	if t.Kind == SingleCell {
		_, s.DepthQuartiles = t.depthQuarter()
		s.HousekeepingGenes = popcount(t.Housekeeping)
		for q := range 4 {
			s.CoveredDetectionByDepth = append(s.CoveredDetectionByDepth, float64(c.depthCovered[q])/float64(max(1, c.depthClean[q])))
		}
	}
	for l := range t.U {
		s.ProgramGenes = append(s.ProgramGenes, popcount(t.U[l]))
		s.ProgramCells = append(s.ProgramCells, popcount(t.Z[l]))
	}
	return s
}

// quarters returns depthQuarter's quarters for the single-cell kind, nil
// for the other.
func (t *Truth) quarters() []uint8 {
	if t.Kind != SingleCell {
		return nil
	}
	q, _ := t.depthQuarter()
	return q
}

// summarise draws every row and counts its ones.
func (t *Truth) summarise(ctx context.Context) (Summary, []int64, error) {
	quarter := t.quarters()
	var sum tally
	err := eachBlock(ctx, t, func(b *rowBuf, lo, hi int) tally {
		var c tally
		if t.NumSamples() > 1 {
			c.bySample = make([]int64, t.NumSamples())
		}
		for n := lo; n < hi; n++ {
			t.draw(n, b)
			before := c.observed
			c.add(n, b, quarter)
			if c.bySample != nil {
				c.bySample[t.SampleOf(n)] += c.observed - before
			}
		}
		return c
	}, func(c tally) error {
		sum.merge(c)
		return nil
	})
	return t.summary(sum), sum.bySample, err
}

// WriteMTX writes the simulated counts as a 10x v3 MTX folder (matrix.mtx.gz,
// features.tsv.gz, barcodes.tsv.gz) with the truth in dir/truth. Observed
// ones get small positive counts (1 + a geometric draw) so that the files look
// like UMI counts; binarising them gives back the simulated matrix. The folder
// is written under a temporary name and renamed when complete; an existing dir
// is refused unless force.
func WriteMTX(ctx context.Context, dir string, t *Truth, force bool) error {
	if t.Missing > 0 {
		return fmt.Errorf("simulate: an MTX folder cannot hold missing entries (missing fraction %v): write shards instead", t.Missing)
	}
	return commitDir(dir, force, t.Log, func(tmp string) error {
		if err := t.checkMTXRoom(ctx, dir, tmp); err != nil {
			return err
		}
		sum, bySample, err := t.summarise(ctx)
		if err != nil {
			return err
		}
		if bySample != nil {
			err = t.writeSamplesMTX(ctx, tmp, bySample)
		} else {
			err = t.writeMTXFiles(ctx, tmp, 0, t.Cells, sum.ObservedOnes)
		}
		if err != nil {
			return err
		}
		return t.writeTruth(ctx, filepath.Join(tmp, TruthDir), sum)
	})
}

// writeMTXFiles writes the cells [lo, hi), of nnz observed ones, as a 10x
// MTX folder dir (created when it does not exist).
func (t *Truth) writeMTXFiles(ctx context.Context, tmp string, lo, hi int, nnz int64) error {
	{
		if err := os.MkdirAll(tmp, 0o777); err != nil {
			return fmt.Errorf("simulate: %w", err)
		}
		if err := writeGz(filepath.Join(tmp, "matrix.mtx.gz"), func(w *bufio.Writer) error {
			return t.writeEntries(ctx, w, nnz, lo, hi)
		}); err != nil {
			return err
		}
		if err := writeGz(filepath.Join(tmp, "features.tsv.gz"), func(w *bufio.Writer) error {
			for g := range t.Genes {
				fmt.Fprintf(w, "%s\t%s\tGene Expression\n", t.GeneID(g), t.GeneName(g))
			}
			return nil
		}); err != nil {
			return err
		}
		return writeGz(filepath.Join(tmp, "barcodes.tsv.gz"), func(w *bufio.Writer) error {
			for n := lo; n < hi; n++ {
				if err := stopped(ctx, n); err != nil {
					return err
				}
				w.WriteString(t.Barcode(n))
				w.WriteByte('\n')
			}
			return nil
		})
	}
}

// writeEntries writes the MatrixMarket body in 10x orientation (genes ×
// cells), cell by cell; workers format the entries of blocks of cells.
func (t *Truth) writeEntries(ctx context.Context, w *bufio.Writer, nnz int64, first, end int) error {
	fmt.Fprintf(w, "%%%%MatrixMarket matrix coordinate integer general\n")
	fmt.Fprintf(w, "%%metadata_json: {\"software_version\": \"scpipe-simulate\", \"format_version\": 2}\n")
	fmt.Fprintf(w, "%d %d %d\n", t.Genes, end-first, nnz)
	return eachBlockIn(ctx, t, first, end, func(b *rowBuf, lo, hi int) []byte {
		var text []byte
		for n := lo; n < hi; n++ {
			t.draw(n, b)
			for i, word := range b.row {
				for word != 0 {
					g := i*64 + bits.TrailingZeros64(word)
					word &= word - 1
					text = strconv.AppendInt(text, int64(g+1), 10)
					text = append(text, ' ')
					text = strconv.AppendInt(text, int64(n-first+1), 10)
					text = append(text, ' ')
					text = strconv.AppendUint(text, uint64(b.counts[g]), 10)
					text = append(text, '\n')
				}
			}
		}
		return text
	}, func(text []byte) error {
		_, err := w.Write(text)
		return err
	})
}

// writeTruth writes the planted programs and their usage as TSV plus a JSON
// summary.
func (t *Truth) writeTruth(ctx context.Context, dir string, sum Summary) error {
	if err := os.Mkdir(dir, 0o777); err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	header := func(w *bufio.Writer, first string) {
		w.WriteString(first)
		for l := range t.U {
			fmt.Fprintf(w, "\tprogram_%d", l+1)
		}
		w.WriteByte('\n')
	}
	bitsRow := func(w *bufio.Writer, sets [][]uint64, i int) {
		for l := range sets {
			w.WriteByte('\t')
			w.WriteByte('0' + byte(sets[l][i/64]>>(i%64)&1))
		}
		w.WriteByte('\n')
	}
	if err := writePlain(filepath.Join(dir, ProgramsFile), func(w *bufio.Writer) error {
		header(w, "gene_id\tgene_name")
		for g := range t.Genes {
			w.WriteString(t.GeneID(g) + "\t" + t.GeneName(g))
			bitsRow(w, t.U, g)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := writePlain(filepath.Join(dir, usageFile), func(w *bufio.Writer) error {
		header(w, "barcode")
		for n := range t.Cells {
			if err := stopped(ctx, n); err != nil {
				return err
			}
			w.WriteString(t.CellName(n))
			bitsRow(w, t.Z, n)
		}
		return nil
	}); err != nil {
		return err
	}
	if t.Kind == SingleCell {
		if err := t.writeRates(dir); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return writePlain(filepath.Join(dir, TruthJSONFile), func(w *bufio.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	})
}

// writeRates writes the single-cell kind's per-gene rates and per-cell
// size factors, each number in the shortest form that reads back exactly.
func (t *Truth) writeRates(dir string) error {
	var buf []byte
	if err := writePlain(filepath.Join(dir, geneRatesFile), func(w *bufio.Writer) error {
		w.WriteString("gene_id\tgene_name\thousekeeping\tbaseline\tlift\n")
		for g := range t.Genes {
			buf = append(buf[:0], t.GeneID(g)+"\t"+t.GeneName(g)+"\t"...)
			buf = append(buf, '0'+byte(t.Housekeeping[g/64]>>(g%64)&1), '\t')
			buf = strconv.AppendFloat(buf, t.Baseline[g], 'g', -1, 64)
			buf = append(buf, '\t')
			buf = strconv.AppendFloat(buf, t.Lift[g], 'g', -1, 64)
			w.Write(append(buf, '\n'))
		}
		return nil
	}); err != nil {
		return err
	}
	return writePlain(filepath.Join(dir, cellDepthFile), func(w *bufio.Writer) error {
		w.WriteString("barcode\tsize_factor\n")
		for n := range t.Cells {
			buf = append(buf[:0], t.Barcode(n)+"\t"...)
			buf = strconv.AppendFloat(buf, t.SizeFactor[n], 'g', -1, 64)
			w.Write(append(buf, '\n'))
		}
		return nil
	})
}

// stopped returns ctx's error every 65 536 cells n, so that a loop over
// the cells of a large simulation stops soon after Ctrl-C.
func stopped(ctx context.Context, n int) error {
	if n&0xffff != 0 {
		return nil
	}
	return ctx.Err()
}

// writePlain creates path and fills it through a buffered writer, checking
// every error including Close's.
func writePlain(path string, fill func(*bufio.Writer) error) error {
	return writeFile(path, func(f io.Writer) error {
		w := bufio.NewWriterSize(f, 1<<20)
		if err := fill(w); err != nil {
			return err
		}
		return w.Flush()
	})
}

// writeGz is writePlain through a gzip stream.
func writeGz(path string, fill func(*bufio.Writer) error) error {
	return writeFile(path, func(f io.Writer) error {
		zw, err := gzip.NewWriterLevel(f, gzip.BestSpeed)
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(zw, 1<<20)
		if err := fill(w); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		return zw.Close()
	})
}

// writeFile creates path and fills it, synced (outlock.WriteFile).
func writeFile(path string, fill func(io.Writer) error) error {
	if err := outlock.WriteFile(path, fill); err != nil {
		return fmt.Errorf("simulate: writing %w", err)
	}
	return nil
}

// commitDir writes dir through fill as outlock.CommitDir does, logging
// to log (nil: nowhere).
func commitDir(dir string, force bool, log *slog.Logger, fill func(tmp string) error) error {
	if dir == "" {
		return errNoOutput
	}
	return outlock.CommitDir(dir, "simulate", force, log, fill)
}
