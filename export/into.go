package export

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"

	"scpipe/ingest"
	"scpipe/internal/anndata"
	"scpipe/internal/outlock"
	"scpipe/internal/rundir"
)

// into starts a copy of the user's AnnData file o.Into with the fit added:
// obsm, varm and uns/scpipe, in the file's order of cells and genes. The
// cells must be the run's (matched by barcode, in any order); genes are
// matched by id or symbol, and the genes the run does not hold (filtered
// out by ingest) get NaN rows in varm.
func into(ctx context.Context, o Options, f *Fit) (*anndata.Writer, error) {
	obs, vars, ids, err := ingest.AnnDataNames(o.Into, o.Threads)
	if err != nil {
		return nil, fmt.Errorf("export: --into: %w", err)
	}
	cellOf, err := matchCells(o.Into, obs, f.Cells.Barcodes)
	if err != nil {
		return nil, err
	}
	geneOf, matched := matchGenes(vars, ids, f)
	if matched == 0 {
		return nil, fmt.Errorf("export: --into %s: none of its %d genes is one of the run's %d (by gene id or symbol)", o.Into, len(vars), len(f.Codes.GeneIDs))
	}
	o.Log.Info("exporting into a copy of the user's file", "input", o.Into, "cells", len(obs), "genes", len(vars), "genes_in_run", matched)
	w, err := anndata.Append(ctx, o.Into, o.Out)
	if err != nil {
		return nil, fmt.Errorf("export: --into: %w", err)
	}
	L := f.L
	usage := make([]float64, len(obs)*L)
	for i, n := range cellOf {
		copy(usage[i*L:(i+1)*L], f.Cells.Mean[n*L:(n+1)*L])
	}
	byGene := func(m []float64) []float64 {
		out := make([]float64, len(vars)*L)
		for i, g := range geneOf {
			if g < 0 {
				for k := range L {
					out[i*L+k] = math.NaN()
				}
				continue
			}
			copy(out[i*L:(i+1)*L], m[g*L:(g+1)*L])
		}
		return out
	}
	for _, p := range []string{"/obsm/" + obsmKey, "/varm/" + varmMean, "/varm/" + varmScore, "/uns/" + unsKey} {
		w.Remove(p) // an earlier export's
	}
	w.Dict("/obsm")
	w.Matrix("/obsm/"+obsmKey, len(obs), L, usage)
	w.Dict("/varm")
	w.Matrix("/varm/"+varmMean, len(vars), L, byGene(f.Codes.Mean))
	if f.Score != nil {
		w.Matrix("/varm/"+varmScore, len(vars), L, byGene(f.Score))
	}
	return w, nil
}

// CheckOutputs refuses, before anything is written, an export whose
// outputs (the .h5ad o.Out and the cNMF folder cnmf, each where given)
// overlap an input or each other, or exist without o.Force: a command
// that writes both once replaced -o and then refused --cnmf.
func CheckOutputs(o Options, cnmf string) error {
	o, err := withDefaults(o)
	if err != nil {
		return err
	}
	var outs []string
	for _, p := range []string{o.Out, cnmf} {
		if p == "" {
			continue
		}
		if err := checkInputs(o, p); err != nil {
			return err
		}
		if err := outlock.Refuse(p, o.Force); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		outs = append(outs, p)
	}
	if len(outs) == 2 {
		if err := outlock.CheckInputs(outs[1], outs[0]); err != nil {
			return fmt.Errorf("export: --cnmf: %w", err)
		}
	}
	return nil
}

// checkInputs refuses an output that is, holds or lies inside one of the
// export's inputs (the run, its shards, the enrich output, the user's
// file), after resolving symbolic links: --force would otherwise delete
// what it reads (--into a file given as -o, --cnmf the run itself).
func checkInputs(o Options, output string) error {
	inputs := append([]string{o.Run, o.Shards, o.Enrich, o.Into}, rundir.ShardsInputs(o.Run)...)
	if err := outlock.CheckInputs(output, inputs...); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if o.Into != "" {
		if _, err := os.Stat(o.Into); err != nil {
			return fmt.Errorf("export: --into: %w", err)
		}
	}
	return nil
}

// matchCells returns, for each cell of the user's file, the run's cell of
// the same barcode; the two must hold the same cells.
func matchCells(path string, obs, barcodes []string) ([]int, error) {
	index := make(map[string]int, len(barcodes))
	for i, b := range barcodes {
		index[b] = i
	}
	of := make([]int, len(obs))
	var missing []string
	seen := make([]bool, len(barcodes))
	for i, b := range obs {
		n, ok := index[b]
		if !ok {
			missing = append(missing, b)
			continue
		}
		of[i], seen[n] = n, true
	}
	extra := 0
	for _, s := range seen {
		if !s {
			extra++
		}
	}
	if len(missing) > 0 || extra > 0 || len(obs) != len(barcodes) {
		return nil, fmt.Errorf("export: --into %s: its cells do not match the run's: %d cells in the file, %d in the run; %d of the file's are not in the run%s, %d of the run's not in the file (the run must be fitted to this file's cells: scpipe ingest it without --min-genes)",
			path, len(obs), len(barcodes), len(missing), examples(missing), extra)
	}
	return of, nil
}

func examples(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return " (" + strings.Join(v[:min(3, len(v))], ", ") + map[bool]string{true: ", …", false: ""}[len(v) > 3] + ")"
}

// matchGenes returns, for each gene of the user's file, the run's gene of
// the same id or name (-1 for none), by whichever key matches most.
func matchGenes(vars, ids []string, f *Fit) ([]int, int) {
	best, bestN := []int(nil), -1
	for _, key := range [][2][]string{
		{vars, f.Codes.GeneIDs}, {vars, f.Codes.GeneNames}, {ids, f.Codes.GeneIDs}, {vars, f.Genes.Symbols},
	} {
		if key[0] == nil {
			continue
		}
		index := make(map[string]int, len(key[1]))
		for g, s := range key[1] {
			if _, dup := index[s]; !dup {
				index[s] = g
			}
		}
		of, n := make([]int, len(key[0])), 0
		for i, s := range key[0] {
			g, ok := index[s]
			if !ok {
				g = -1
			} else {
				n++
			}
			of[i] = g
		}
		if n > bestN {
			best, bestN = of, n
		}
	}
	return best, bestN
}
