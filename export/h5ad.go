package export

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"scpipe/enrich"
	"scpipe/internal/anndata"
	"scpipe/internal/infile"
	"scpipe/internal/outlock"
	"scpipe/internal/rundir"
	"scpipe/shard"
)

// Report is what Export wrote.
type Report struct {
	Out         string
	L, Chain    int
	Recommended int    // the run's recommended L (0: none)
	RankedBy    string // "score" or "posterior_mean"
	Cells       int
	Genes       int
}

// Export writes the fit of o.Run at o.L (or the recommended L) as an
// AnnData file (see README.md for its keys). Once ctx is done it stops,
// returning an error that wraps ctx's, and installs nothing.
func Export(ctx context.Context, o Options) (*Report, error) {
	o, err := withDefaults(o)
	if err != nil {
		return nil, err
	}
	if err := checkInputs(o, o.Out); err != nil {
		return nil, err
	}
	// Held to the end: anndata writes beside o.Out (outlock.TempFile) and
	// renames into place, as every output is committed.
	lk, err := outlock.Acquire(o.Out, o.Log)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	defer lk.Release()
	if _, err := lk.RemoveStale(); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if err := outlock.Refuse(o.Out, o.Force); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	L, rec, err := ChooseL(o.Run, o.L, o.Chain)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	f, err := ReadFit(o.Run, L, o.Chain)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	config, err := infile.ReadFile(filepath.Join(o.Run, rundir.ConfigFile))
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	var src *shard.Shard // X's rows, streamed from the shards
	if !o.NoX && o.Into == "" {
		if src, err = openShards(ctx, o.Run, o.Shards, o.Threads); err != nil {
			return nil, err
		}
		defer src.Close()
		if err := checkShards(src, f); err != nil {
			return nil, err
		}
	}
	var terms map[string][]LibraryTerm
	if o.Enrich != "" {
		if err := checkEnrich(o.Enrich, o.Run, f); err != nil {
			return nil, err
		}
		if terms, err = BestTerms(o.Enrich, L, o.TopTerms); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	var w *anndata.Writer
	if o.Into != "" {
		w, err = into(ctx, o, f)
	} else {
		w, err = fresh(ctx, o, f, src)
	}
	if err != nil {
		return nil, err
	}
	defer w.Abort()
	writeUns(w, o, f, rec, string(config), terms)
	if err := w.Commit(); err != nil {
		return nil, err
	}
	o.Log.Info("exported", "output", o.Out, "L", L, "chain", f.Chain, "fit", f.Dir, "cells", len(f.Cells.Barcodes), "genes", len(f.Codes.GeneIDs), "ranked_by", f.RankedBy())
	return &Report{Out: o.Out, L: L, Chain: f.Chain, Recommended: rec, RankedBy: f.RankedBy(),
		Cells: len(f.Cells.Barcodes), Genes: len(f.Codes.GeneIDs)}, nil
}

// fresh starts a new AnnData file of the fit: X, obs, var, obsm, varm.
func fresh(ctx context.Context, o Options, f *Fit, src *shard.Shard) (*anndata.Writer, error) {
	w, err := anndata.Create(ctx, o.Out)
	if err != nil {
		return nil, err
	}
	L := f.L
	usage := make([]anndata.Column, L)
	for k := range L {
		usage[k] = anndata.Column{Name: usageColumn(k), Float64: column(f.Cells.Mean, L, k)}
	}
	usage = append(sampleColumns(f, src), usage...)
	if src != nil {
		w.BinaryCSR("/X", len(f.Cells.Barcodes), len(f.Codes.GeneIDs), binaryRow(src))
	}
	w.Dataframe("/obs", f.Cells.Barcodes, usage...)
	w.Dataframe("/var", f.Genes.Symbols,
		anndata.Column{Name: "gene_ids", Strings: f.Codes.GeneIDs},
		anndata.Column{Name: "gene_symbols", Strings: f.Genes.Names})
	w.Dict("/obsm")
	w.Matrix("/obsm/"+obsmKey, len(f.Cells.Barcodes), L, f.Cells.Mean)
	w.Dict("/varm")
	w.Matrix("/varm/"+varmMean, len(f.Codes.GeneIDs), L, f.Codes.Mean)
	if f.Score != nil {
		w.Matrix("/varm/"+varmScore, len(f.Codes.GeneIDs), L, f.Score)
	}
	return w, nil
}

// The keys of the export.
const (
	obsmKey   = "X_scpipe"     // obsm: cells × L usage (posterior mean of z)
	varmMean  = "scpipe_mean"  // varm: genes × L posterior mean of u
	varmScore = "scpipe_score" // varm: genes × L score, when codes.parquet has one
	unsKey    = "scpipe"       // uns: the run's settings and programs
)

// usageColumn is the obs column of code k (0-based): scpipe_1, ….
func usageColumn(k int) string { return "scpipe_" + strconv.Itoa(k+1) }

// withDefaults refuses settings out of their range and fills those left
// at 0 with DefaultOptions'.
func withDefaults(o Options) (Options, error) {
	switch {
	case o.L < 0:
		return o, fmt.Errorf("export: L = %d: want a latent size of the run (or 0: the recommended one)", o.L)
	case o.Chain < 0:
		return o, fmt.Errorf("export: chain %d: chains are numbered from 1", o.Chain)
	case o.TopN < 0:
		return o, fmt.Errorf("export: top genes %d: want a positive number", o.TopN)
	case o.TopTerms < 0:
		return o, fmt.Errorf("export: top terms %d: want a positive number", o.TopTerms)
	case !(o.Threshold >= 0 && o.Threshold <= 1):
		return o, fmt.Errorf("export: threshold %v outside [0, 1]", o.Threshold)
	}
	d := DefaultOptions()
	if o.TopN == 0 {
		o.TopN = d.TopN
	}
	if o.Threshold == 0 {
		o.Threshold = d.Threshold
	}
	if o.TopTerms == 0 {
		o.TopTerms = d.TopTerms
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// column returns column k of a row-major matrix of L columns.
func column(m []float64, L, k int) []float64 {
	c := make([]float64, len(m)/L)
	for i := range c {
		c[i] = m[i*L+k]
	}
	return c
}

// writeUns writes uns/scpipe: the run's settings, the chosen L, and per
// program its MAP and top genes (symbols as the input gave them) and best
// enrichment terms.
func writeUns(w *anndata.Writer, o Options, f *Fit, rec int, config string, terms map[string][]LibraryTerm) {
	u := "/uns/" + unsKey
	w.Dict("/uns")
	w.Dict(u)
	w.String(u+"/run", o.Run)
	w.Int64(u+"/L", int64(f.L))
	w.Int64(u+"/chain", int64(f.Chain))
	w.Int64(u+"/recommended_L", int64(rec))
	w.String(u+"/ranked_by", f.RankedBy())
	w.Float64(u+"/threshold", o.Threshold)
	w.String(u+"/config", config)
	w.Dict(u + "/programs")
	for _, p := range f.Programs(o.Threshold, o.TopN) {
		name := ProgramName(f.L, p.Code)
		pp := u + "/programs/" + name
		w.Dict(pp)
		w.Int64(pp+"/code", int64(p.Code))
		w.Int64(pp+"/n_cells", int64(p.Cells))
		w.Strings(pp+"/map_genes", enrich.Symbols(f.Genes, p.MAP))
		w.Strings(pp+"/map_gene_ids", pick(f.Codes.GeneIDs, p.MAP))
		w.Strings(pp+"/top_genes", enrich.Symbols(f.Genes, p.Top))
		w.Strings(pp+"/top_gene_ids", pick(f.Codes.GeneIDs, p.Top))
		if ts := terms[name]; len(ts) > 0 {
			writeTerms(w, pp+"/enrichment", ts)
		}
	}
}

// writeTerms writes a program's best terms as a dataframe (library, query,
// term, adjusted p, combined score).
func writeTerms(w *anndata.Writer, path string, ts []LibraryTerm) {
	n := len(ts)
	index := make([]string, n)
	lib, query, term := make([]string, n), make([]string, n), make([]string, n)
	adj, comb := make([]float64, n), make([]float64, n)
	for i, t := range ts {
		index[i] = strconv.Itoa(i)
		lib[i], query[i], term[i] = t.Library, t.Query, t.Term.Term
		adj[i], comb[i] = t.AdjP, t.Combined
	}
	w.Dataframe(path, index,
		anndata.Column{Name: "library", Strings: lib},
		anndata.Column{Name: "query", Strings: query},
		anndata.Column{Name: "term", Strings: term},
		anndata.Column{Name: "adjusted_p", Float64: adj},
		anndata.Column{Name: "combined_score", Float64: comb})
}

// ProgramName is enrich's name of a program: L06_code3.
func ProgramName(L, code int) string { return fmt.Sprintf("L%02d_code%d", L, code) }

func pick(v []string, idx []int) []string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = v[j]
	}
	return out
}

// LibraryTerm is an enrichment term and the library it is from.
type LibraryTerm struct {
	enrich.Term
	Library string
}

// checkEnrich checks that the programs of fit f's L in the enrich output
// dir hold genes of f only: the output of another run's enrich would
// label the programs with other programs' terms.
func checkEnrich(dir, run string, f *Fit) error {
	out, err := enrich.ReadOutput(dir)
	if err != nil {
		return fmt.Errorf("export: --enrich: %w", err)
	}
	symbols := make(map[string]bool, len(f.Genes.Symbols))
	for _, s := range f.Genes.Symbols {
		symbols[s] = true
	}
	for _, r := range out.Index {
		if r.L != f.L || r.GenesFile == "" {
			continue
		}
		b, err := infile.ReadFile(filepath.Join(dir, r.GenesFile))
		if err != nil {
			return fmt.Errorf("export: --enrich: %w", err)
		}
		for line := range strings.Lines(string(b)) {
			if g := strings.TrimRight(line, "\r\n"); g != "" && !symbols[g] {
				return fmt.Errorf("export: --enrich: %s is not an output of scpipe enrich for %s: its %s holds gene %s, which %s has not (run scpipe enrich again)", dir, run, r.Program, g, run)
			}
		}
	}
	return nil
}

// BestTerms reads the best k terms of every program of L, per library and
// query, from an enrich output folder, by program name.
func BestTerms(dir string, L, k int) (map[string][]LibraryTerm, error) {
	out, err := enrich.ReadOutput(dir)
	if err != nil {
		return nil, fmt.Errorf("export: --enrich: %w", err)
	}
	if len(out.Enrichment) == 0 {
		return nil, fmt.Errorf("export: --enrich: %s holds no enrichment table (run scpipe enrich with --gmt)", dir)
	}
	terms := map[string][]LibraryTerm{}
	for _, e := range out.Enrichment {
		ts, err := enrich.ReadTopTerms(e.Path, k)
		if err != nil {
			return nil, fmt.Errorf("export: --enrich: %w", err)
		}
		for _, t := range ts {
			if t.L == L {
				terms[t.Program] = append(terms[t.Program], LibraryTerm{t, e.Library})
			}
		}
	}
	if len(terms) == 0 {
		return nil, errors.New("export: --enrich: no enrichment of the exported L")
	}
	return terms, nil
}

// sampleColumns returns the obs columns of the cells' samples, for shards
// ingested from several: sample (as scanpy's concat(..., label="sample")
// names it), and, where the shards are at hand, the samples file's further
// columns, each cell given its sample's value.
func sampleColumns(f *Fit, src *shard.Shard) []anndata.Column {
	if f.Cells.Samples == nil {
		return nil
	}
	cols := []anndata.Column{{Name: "sample", Strings: f.Cells.Samples}}
	if src == nil {
		return cols
	}
	m := src.Manifest()
	cs := m.CellSamples()
	if len(cs) != len(f.Cells.Samples) {
		return cols
	}
	for j, name := range m.SampleColumns {
		if name == "_index" || slices.ContainsFunc(cols, func(c anndata.Column) bool { return c.Name == name }) || strings.HasPrefix(name, "scpipe_") {
			continue
		}
		v := make([]string, len(cs))
		for n, k := range cs {
			v[n] = m.Samples[k].Values[j]
		}
		cols = append(cols, anndata.Column{Name: name, Strings: v})
	}
	return cols
}
