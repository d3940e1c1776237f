package simulate

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/klauspost/compress/gzip"

	"scpipe/internal/outlock"
)

// Output folder layout of a simulation (see WriteMTX and WriteShards).
const (
	TruthDir      = "truth"        // planted truth, beside the data
	ProgramsFile  = "programs.tsv" // gene_id, gene_name, program_1 … program_L (0/1)
	UsageFile     = "usage.tsv"    // barcode, program_1 … program_L (0/1)
	TruthJSONFile = "truth.json"   // parameters and counts
)

// GeneID returns the id of simulated gene g (0-based), e.g. "SIMG000001".
func GeneID(g int) string { return fmt.Sprintf("SIMG%06d", g+1) }

// GeneName returns the symbol of simulated gene g (0-based), e.g. "Gene1".
func GeneName(g int) string { return fmt.Sprintf("Gene%d", g+1) }

// Barcode returns a 10x-style barcode (16 bases and "-1") determined by n.
func Barcode(n int) string {
	const bases = "ACGT"
	h := mix(uint64(n) + 0x9e3779b97f4a7c15)
	b := make([]byte, 0, 18)
	for range 16 {
		b = append(b, bases[h&3])
		h >>= 2
	}
	return string(append(b, "-1"...))
}

// mix is the SplitMix64 finaliser.
func mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// Summary counts what a simulation produced.
type Summary struct {
	Params       Params  `json:"params"`
	CleanOnes    int64   `json:"clean_ones"`    // ones of the noise-free matrix
	ObservedOnes int64   `json:"observed_ones"` // ones after noise
	Density      float64 `json:"density"`       // observed ones / (cells × genes)
	ProgramGenes []int   `json:"program_genes"` // genes per planted program
	ProgramCells []int   `json:"program_cells"` // cells per planted program
}

// rows calls fn for every cell with its observed and noise-free rows, in
// cell order; the slices are reused between calls.
func (t *Truth) rows(ctx context.Context, fn func(n int, row, clean []uint64) error) error {
	row, clean := make([]uint64, t.words), make([]uint64, t.words)
	for n := range t.Cells {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		t.Row(n, row, clean)
		if err := fn(n, row, clean); err != nil {
			return err
		}
	}
	return nil
}

// summarise counts the ones of the noise-free and observed matrices.
func (t *Truth) summarise(ctx context.Context) (Summary, error) {
	s := Summary{Params: t.Params}
	err := t.rows(ctx, func(_ int, row, clean []uint64) error {
		s.ObservedOnes += int64(popcount(row))
		s.CleanOnes += int64(popcount(clean))
		return nil
	})
	s.Density = float64(s.ObservedOnes) / (float64(t.Cells) * float64(t.Genes))
	for l := range t.L {
		s.ProgramGenes = append(s.ProgramGenes, popcount(t.U[l]))
		s.ProgramCells = append(s.ProgramCells, popcount(t.Z[l]))
	}
	return s, err
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
	return commitDir(dir, force, func(tmp string) error {
		sum, err := t.summarise(ctx)
		if err != nil {
			return err
		}
		if err := writeGz(filepath.Join(tmp, "matrix.mtx.gz"), func(w *bufio.Writer) error {
			return t.writeEntries(ctx, w, sum.ObservedOnes)
		}); err != nil {
			return err
		}
		if err := writeGz(filepath.Join(tmp, "features.tsv.gz"), func(w *bufio.Writer) error {
			for g := range t.Genes {
				fmt.Fprintf(w, "%s\t%s\tGene Expression\n", GeneID(g), GeneName(g))
			}
			return nil
		}); err != nil {
			return err
		}
		if err := writeGz(filepath.Join(tmp, "barcodes.tsv.gz"), func(w *bufio.Writer) error {
			for n := range t.Cells {
				w.WriteString(Barcode(n))
				w.WriteByte('\n')
			}
			return nil
		}); err != nil {
			return err
		}
		return t.writeTruth(filepath.Join(tmp, TruthDir), sum)
	})
}

// writeEntries writes the MatrixMarket body in 10x orientation (genes ×
// cells), cell by cell.
func (t *Truth) writeEntries(ctx context.Context, w *bufio.Writer, nnz int64) error {
	fmt.Fprintf(w, "%%%%MatrixMarket matrix coordinate integer general\n")
	fmt.Fprintf(w, "%%metadata_json: {\"software_version\": \"scpipe-simulate\", \"format_version\": 2}\n")
	fmt.Fprintf(w, "%d %d %d\n", t.Genes, t.Cells, nnz)
	var buf []byte
	return t.rows(ctx, func(n int, row, _ []uint64) error {
		r := rand.New(rand.NewPCG(t.Seed^0xc0ffee, uint64(n)+1))
		for i, word := range row {
			for word != 0 {
				g := i*64 + bits.TrailingZeros64(word)
				word &= word - 1
				count := 1 + int64(math.Floor(-math.Log(1-r.Float64())/math.Ln2))
				buf = strconv.AppendInt(buf[:0], int64(g+1), 10)
				buf = append(buf, ' ')
				buf = strconv.AppendInt(buf, int64(n+1), 10)
				buf = append(buf, ' ')
				buf = strconv.AppendInt(buf, count, 10)
				buf = append(buf, '\n')
				if _, err := w.Write(buf); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// writeTruth writes the planted programs and their usage as TSV plus a JSON
// summary.
func (t *Truth) writeTruth(dir string, sum Summary) error {
	if err := os.Mkdir(dir, 0o777); err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	header := func(w *bufio.Writer, first string) {
		w.WriteString(first)
		for l := range t.L {
			fmt.Fprintf(w, "\tprogram_%d", l+1)
		}
		w.WriteByte('\n')
	}
	bitsRow := func(w *bufio.Writer, sets [][]uint64, i int) {
		for l := range t.L {
			w.WriteByte('\t')
			w.WriteByte('0' + byte(sets[l][i/64]>>(i%64)&1))
		}
		w.WriteByte('\n')
	}
	if err := writePlain(filepath.Join(dir, ProgramsFile), func(w *bufio.Writer) error {
		header(w, "gene_id\tgene_name")
		for g := range t.Genes {
			w.WriteString(GeneID(g) + "\t" + GeneName(g))
			bitsRow(w, t.U, g)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := writePlain(filepath.Join(dir, UsageFile), func(w *bufio.Writer) error {
		header(w, "barcode")
		for n := range t.Cells {
			w.WriteString(Barcode(n))
			bitsRow(w, t.Z, n)
		}
		return nil
	}); err != nil {
		return err
	}
	return writePlain(filepath.Join(dir, TruthJSONFile), func(w *bufio.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	})
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

func writeFile(path string, fill func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	if err := fill(f); err != nil {
		f.Close()
		return fmt.Errorf("simulate: writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("simulate: %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("simulate: %s: %w", path, err)
	}
	return nil
}

// commitDir runs fill on a fresh temporary folder beside dir and renames it
// to dir when fill succeeds; on failure nothing is left behind. An existing
// dir is refused unless force, in which case it is replaced only after the
// new folder is complete. dir is locked meanwhile (a second simulation into
// it fails at once), and the folders a killed simulation into it left are
// removed first.
func commitDir(dir string, force bool, fill func(tmp string) error) error {
	if dir == "" {
		return errNoOutput
	}
	lk, err := outlock.Acquire(dir, slog.Default())
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	defer lk.Release()
	if _, err := lk.RemoveStale(); err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	if _, err := os.Stat(dir); err == nil && !force {
		return fmt.Errorf("simulate: %s already exists (use --force to replace it)", dir)
	}
	tmp, err := outlock.TempDir(dir)
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	if err := fill(tmp); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	old := ""
	if _, err := os.Stat(dir); err == nil {
		old = outlock.AsideName(dir)
		if err := os.Rename(dir, old); err != nil {
			os.RemoveAll(tmp)
			return fmt.Errorf("simulate: %w", err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("simulate: %w", err)
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}
