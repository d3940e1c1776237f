package export

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"scpipe/internal/outlock"
	"scpipe/internal/rundir"
)

// CNMFName is the run name in the cNMF file names (cNMF's --name).
const CNMFName = "scpipe"

// cnmfDensity is the density-threshold part of the cNMF file names: cNMF
// names its consensus by the threshold of its outlier filter; ours is the
// posterior mean at which genes and cells count (½), written as cNMF
// writes 0.5.
const cnmfDensity = "0_5"

// CNMFFiles returns the names of the cNMF tables of L inside DIR/NAME/.
func CNMFFiles(L int) (usages, score, spectra, top string) {
	p := fmt.Sprintf("%s.%%s.k_%d.dt_%s", CNMFName, L, cnmfDensity)
	return fmt.Sprintf(p, "usages") + ".consensus.txt",
		fmt.Sprintf(p, "gene_spectra_score") + ".txt",
		fmt.Sprintf(p, "spectra") + ".consensus.txt",
		fmt.Sprintf(p, "top_genes") + ".txt"
}

// CNMFSamplesFile is the table of each cell's sample beside the cNMF
// tables of shards ingested from several samples: header "" and sample, a
// row per cell (barcode, sample), in the usages' order, for
// pd.read_csv(..., sep="\t", index_col=0) to join with them.
const CNMFSamplesFile = CNMFName + ".cell_samples.txt"

// writeCellSamples writes c's cells' samples as CNMFSamplesFile.
func writeCellSamples(ctx context.Context, path string, c rundir.Cells) error {
	return writeTSV(ctx, path, func(w *bufio.Writer) {
		tsvLine(w, "", "sample")
		for n, b := range c.Barcodes {
			tsvLine(w, b, c.Samples[n])
		}
	})
}

// CNMFReport is what WriteCNMF wrote.
type CNMFReport struct {
	Dir string // DIR/NAME, holding the tables
	Ls  []int
}

// WriteCNMF writes, for every L with a finished fit of o.Chain (or o.L
// alone when set), cNMF's tables of the fit into dir/scpipe/, as cNMF lays
// them out in its output_dir/name/ (README.md). dir is written as a
// temporary folder installed in its place (outlock.CommitDir); an existing
// dir is replaced only with o.Force. Once ctx is done it stops, returning
// an error that wraps ctx's, and installs nothing.
func WriteCNMF(ctx context.Context, o Options, dir string) (*CNMFReport, error) {
	o, err := withDefaults(o)
	if err != nil {
		return nil, err
	}
	if err := checkInputs(o, dir); err != nil {
		return nil, err
	}
	if err := outlock.Refuse(dir, o.Force); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	fits, err := rundir.Fits(o.Run)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	var Ls []int
	for _, f := range fits {
		if f.Chain == max(o.Chain, 1) && f.Complete() && (o.L == 0 || f.L == o.L) {
			Ls = append(Ls, f.L)
		}
	}
	if len(Ls) == 0 {
		return nil, fmt.Errorf("export: %s holds no finished fit of chain %d%s", o.Run, max(o.Chain, 1), map[bool]string{true: fmt.Sprintf(" at L = %d", o.L)}[o.L > 0])
	}
	err = outlock.CommitDir(filepath.Clean(dir), "export", o.Force, o.Log, func(tmp string) error {
		sub := filepath.Join(tmp, CNMFName)
		if err := os.Mkdir(sub, 0o777); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		for i, L := range Ls {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("export: %w", err)
			}
			f, err := ReadFit(o.Run, L, o.Chain)
			if err != nil {
				return err
			}
			if err := writeCNMFTables(ctx, sub, f, o); err != nil {
				return err
			}
			if i == 0 && f.Cells.Samples != nil {
				if err := writeCellSamples(ctx, filepath.Join(sub, CNMFSamplesFile), f.Cells); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	o.Log.Info("cNMF tables written", "output", filepath.Join(dir, CNMFName), "L", joinInts(Ls), "ranked_by", "score where codes.parquet has it, else posterior mean")
	return &CNMFReport{Dir: filepath.Join(dir, CNMFName), Ls: Ls}, nil
}

// writeCNMFTables writes the four tables of one fit, stopping once ctx
// is done.
func writeCNMFTables(ctx context.Context, dir string, f *Fit, o Options) error {
	usages, score, spectra, top := CNMFFiles(f.L)
	L := f.L
	programs := make([]string, L)
	for k := range programs {
		programs[k] = strconv.Itoa(k + 1)
	}
	// usages: cells × programs, as pandas' to_csv(sep="\t") writes cNMF's
	// DataFrame (an empty index name, programs 1 … K).
	if err := writeTSV(ctx, filepath.Join(dir, usages), func(w *bufio.Writer) {
		tsvLine(w, "", programs...)
		for n, b := range f.Cells.Barcodes {
			if n%4096 == 0 && ctx.Err() != nil {
				return // writeTSV reports it
			}
			tsvLine(w, b, floats(f.Cells.Mean[n*L:(n+1)*L])...)
		}
	}); err != nil {
		return err
	}
	// gene_spectra_score and spectra: programs × genes, as cNMF writes
	// them (load_results transposes them to genes × programs).
	for _, t := range []struct {
		name string
		m    []float64
	}{{score, f.rank()}, {spectra, f.Codes.Mean}} {
		if err := writeTSV(ctx, filepath.Join(dir, t.name), func(w *bufio.Writer) {
			tsvLine(w, "", f.Genes.Symbols...)
			for k := range L {
				tsvLine(w, programs[k], floats(column(t.m, L, k))...)
			}
		}); err != nil {
			return err
		}
	}
	// top genes: rank × programs, as cNMF's load_results returns top_genes.
	ps := f.Programs(o.Threshold, o.TopN)
	return writeTSV(ctx, filepath.Join(dir, top), func(w *bufio.Writer) {
		tsvLine(w, "", programs...)
		for r := range o.TopN {
			row := make([]string, L)
			any := false
			for k, p := range ps {
				if r < len(p.Top) {
					row[k], any = f.Genes.Symbols[p.Top[r]], true
				}
			}
			if !any {
				break
			}
			tsvLine(w, strconv.Itoa(r), row...)
		}
	})
}

func floats(v []float64) []string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return s
}

// tsvLine writes one line of a table, each field quoted where pandas'
// read_csv(sep="\t"), as cNMF's loaders call it, needs it
// (rundir.TSVField).
func tsvLine(w *bufio.Writer, first string, rest ...string) {
	w.WriteString(rundir.TSVField(first))
	for _, s := range rest {
		w.WriteByte('\t')
		w.WriteString(rundir.TSVField(s))
	}
	w.WriteByte('\n')
}

// writeTSV writes a text file through a buffer, synced, unless ctx is
// done before it is complete (fill may stop early once it is).
func writeTSV(ctx context.Context, path string, fill func(w *bufio.Writer)) error {
	err := outlock.WriteFile(path, func(f io.Writer) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		w := bufio.NewWriterSize(f, 1<<16)
		fill(w)
		if err := ctx.Err(); err != nil {
			return err
		}
		return w.Flush()
	})
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}
