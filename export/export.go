package export

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"scpipe/enrich"
	"scpipe/internal/rundir"
)

// Options say what Export writes.
type Options struct {
	Run string // the run directory
	// Out is the .h5ad file to write. It must not exist unless Force.
	Out   string
	Force bool
	// L is the fit exported; 0: the run's recommended L (summary.tsv), or
	// its only L.
	L int
	// Chain is the chain exported; 0 (the default) is the L's result,
	// whose code numbers enrich and report use: its consensus of chains
	// (RUN/Lnn/consensus) where the run has one, else chain 1.
	Chain int
	// TopN is the number of top genes listed per program (default 50).
	TopN int
	// Threshold is the posterior mean at or above which a gene is in a
	// program's MAP set (default ½, as enrich).
	Threshold float64
	// Into, when set, is the user's own AnnData file: Out is a copy of it
	// with the fit added (obsm, varm, uns), its cells matched by barcode;
	// Into is only read.
	Into string
	// NoX leaves X out; otherwise X is the binary matrix the run was
	// fitted to, read from its shards (Shards, or those shards.json names).
	NoX    bool
	Shards string
	// Enrich, when set, is an output folder of scpipe enrich of the run:
	// its best terms per program and library go to uns.
	Enrich string
	// TopTerms is the number of terms kept per program, query and library
	// (default 5).
	TopTerms int
	// Threads is the number of goroutines that read Into or verify the
	// shards; 0 means GOMAXPROCS.
	Threads int
	Log     *slog.Logger // nil: discard
}

// DefaultOptions returns the defaults of the optional settings.
func DefaultOptions() Options {
	return Options{Chain: 0, TopN: 50, Threshold: 0.5, TopTerms: 5}
}

// Fit is one fit read for export: its tables and how its genes rank.
type Fit struct {
	L, Chain int
	Dir      string
	Codes    rundir.Codes
	Cells    rundir.Cells
	// Score is genes × L row-major: codes.parquet's score_1 … score_L when
	// it has them, else nil.
	Score []float64
	Genes enrich.Genes
}

// RankedBy names what orders a program's genes: "score" (the table's
// score_k columns) or "posterior_mean" (tables without them).
func (f *Fit) RankedBy() string {
	if f.Score != nil {
		return "score"
	}
	return "posterior_mean"
}

// rank returns the ranking values: the scores, or the posterior means.
func (f *Fit) rank() []float64 {
	if f.Score != nil {
		return f.Score
	}
	return f.Codes.Mean
}

// ReadFit reads fit (L, chain) of run, chain 0 being the L's result
// (Options.Chain): its consensus, read as chain 0, or chain 1. Its tables
// must agree on L.
func ReadFit(run string, L, chain int) (*Fit, error) {
	dir := rundir.FitDir(run, L, max(chain, 1))
	if chain == 0 {
		cf, ok, err := rundir.ConsensusFit(run, L)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		if ok {
			dir = cf.Dir
		} else {
			chain = 1
		}
	}
	f := &Fit{L: L, Chain: chain, Dir: dir}
	var err error
	if f.Codes, err = rundir.ReadCodes(filepath.Join(dir, rundir.CodesFile)); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if f.Cells, err = rundir.ReadCells(filepath.Join(dir, rundir.CellsFile)); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if f.Codes.L != L || f.Cells.L != L {
		return nil, fmt.Errorf("export: %s: codes.parquet has %d codes and cells.parquet %d, the folder says L = %d", dir, f.Codes.L, f.Cells.L, L)
	}
	f.Score = f.Codes.Score
	f.Genes = enrich.NewGenes(f.Codes.GeneIDs, f.Codes.GeneNames)
	return f, nil
}

// ChooseL returns the L to export: want when set (it must have a finished
// fit of the chain), else the L that summary.tsv recommends, else the
// run's only L. fitted lists the run's Ls with a finished fit of chain
// (chain 0, the L's result: of chain 1, from which any consensus is built).
func ChooseL(run string, want, chain int) (L int, recommended int, err error) {
	chain = max(chain, 1)
	fits, err := rundir.Fits(run)
	if err != nil {
		return 0, 0, fmt.Errorf("export: %w", err)
	}
	var fitted []int
	for _, f := range fits {
		if f.Chain == chain && f.Complete() {
			fitted = append(fitted, f.L)
		}
	}
	if len(fitted) == 0 {
		return 0, 0, fmt.Errorf("export: %s holds no finished fit of chain %d", run, chain)
	}
	rows, err := rundir.ReadSummary(filepath.Join(run, rundir.SummaryFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, 0, fmt.Errorf("export: %w", err)
	}
	for _, r := range rows {
		if r.Recommended {
			recommended = r.L
		}
	}
	switch {
	case want > 0 && !slices.Contains(fitted, want):
		return 0, 0, fmt.Errorf("export: --L %d: %s has no finished fit of L = %d chain %d (finished: L = %s)", want, run, want, chain, joinInts(fitted))
	case want > 0:
		return want, recommended, nil
	case recommended > 0 && slices.Contains(fitted, recommended):
		return recommended, recommended, nil
	case len(fitted) == 1:
		return fitted[0], recommended, nil
	}
	return 0, 0, fmt.Errorf("export: %s recommends no L (no entries were held out, or summary.tsv is missing): choose one with --L (finished: L = %s)", run, joinInts(fitted))
}

func joinInts(v []int) string {
	s := ""
	for i, x := range v {
		if i > 0 {
			s += ", "
		}
		s += strconv.Itoa(x)
	}
	return s
}

// Program is one code of a fit as exported: its MAP gene set and its top
// genes, both as gene indices.
type Program struct {
	Code  int   // 1-based
	MAP   []int // genes with posterior mean ≥ threshold (less housekeeping genes), in gene order
	Top   []int // the topN genes in enrich.RankGenes's order (score, then posterior mean, then symbol), housekeeping genes included as enrich and report list them
	Cells int   // cells whose usage is ≥ threshold
}

// top returns the topN leading genes of code k (0-based) by enrich.RankGenes.
func (f *Fit) top(k int, threshold float64, topN int) []int {
	L, D := f.L, len(f.Codes.GeneIDs)
	col := func(m []float64) []float64 {
		if m == nil {
			return nil
		}
		c := make([]float64, D)
		for g := range c {
			c[g] = m[g*L+k]
		}
		return c
	}
	var hk []bool
	if f.Codes.Housekeeping != nil {
		hk = make([]bool, D)
		for g, m := range f.Codes.Housekeeping {
			hk[g] = m >= threshold
		}
	}
	ranks := enrich.RankGenes(col(f.Score), col(f.Codes.Mean), hk, f.Genes.Symbols)
	top := make([]int, min(topN, len(ranks)))
	for i := range top {
		top[i] = ranks[i].Gene
	}
	return top
}

// Programs returns the programs of f. A code no cell uses has an empty
// MAP set (its genes' means stay at the prior, as enrich counts it) but
// keeps its top genes by rank.
func (f *Fit) Programs(threshold float64, topN int) []Program {
	L, D, N := f.L, len(f.Codes.GeneIDs), len(f.Cells.Barcodes)
	ps := make([]Program, L)
	for k := range L {
		p := Program{Code: k + 1}
		for n := range N {
			if f.Cells.Mean[n*L+k] >= threshold {
				p.Cells++
			}
		}
		if p.Cells > 0 {
			for g := range D {
				if f.Codes.Mean[g*L+k] >= threshold && (f.Codes.Housekeeping == nil || f.Codes.Housekeeping[g] < threshold) {
					p.MAP = append(p.MAP, g)
				}
			}
		}
		p.Top = f.top(k, threshold, topN)
		ps[k] = p
	}
	return ps
}
