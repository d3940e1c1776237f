package pipeline

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"scpipe/gibbs"
	"scpipe/internal/geneset"
	"scpipe/internal/rundir"
	"scpipe/shard"
)

// errFixedCodes is wrapped by the errors about a --fixed-codes source.
var errFixedCodes = errors.New("fixed codes")

// shardGenes returns the shards' gene ids and names, numbered as the run's
// tables number them where the manifest has none.
func shardGenes(m *shard.Manifest) (ids, names []string) {
	ids, names = m.GeneIDs, m.GeneNames
	if len(ids) == 0 {
		ids = numbered("gene", m.Genes)
	}
	if len(names) == 0 {
		names = ids
	}
	return ids, names
}

// geneIndex finds the shards' genes by symbol or id, case-insensitively:
// a symbol names every gene that has it (10x files repeat a few).
type geneIndex struct {
	byName, byID map[string][]int
}

func newGeneIndex(ids, names []string) geneIndex {
	x := geneIndex{byName: make(map[string][]int, len(names)), byID: make(map[string][]int, len(ids))}
	for g := range ids {
		x.byName[geneset.Fold(names[g])] = append(x.byName[geneset.Fold(names[g])], g)
		x.byID[geneset.Fold(ids[g])] = append(x.byID[geneset.Fold(ids[g])], g)
	}
	return x
}

// lookup returns the genes a symbol or id names, or nil.
func (x geneIndex) lookup(s string) []int {
	if g := x.byName[geneset.Fold(s)]; g != nil {
		return g
	}
	return x.byID[geneset.Fold(s)]
}

// fixedSet is one fixed code: its name and the shards' genes it switches on.
type fixedSet struct {
	name, description string
	genes             []int
}

// fixedSetsFromGMT matches each set of the GMT library at path against the
// shards' genes, logging the symbols no gene has. A set none of whose
// genes is in the shards is an error naming the file and the set.
func fixedSetsFromGMT(path string, ids, names []string, log *slog.Logger) ([]fixedSet, error) {
	lib, err := geneset.ReadGMTFile(path)
	if err != nil {
		return nil, fmt.Errorf("fit: --fixed-codes: %w", err)
	}
	// Every line is meant as a code the fits hold: one left out would
	// change the model without a word.
	if len(lib.Skips) > 0 {
		return nil, fmt.Errorf("fit: --fixed-codes %s: %w: %s (every set is a fixed code: give each a name of its own and its genes)",
			path, errFixedCodes, lib.Skips[0])
	}
	x := newGeneIndex(ids, names)
	var out []fixedSet
	for _, s := range lib.Sets {
		f := fixedSet{name: s.Name, description: s.Description}
		var unknown []string
		for _, sym := range s.Genes {
			g := x.lookup(sym)
			if g == nil {
				unknown = append(unknown, sym)
			}
			f.genes = append(f.genes, g...)
		}
		if len(f.genes) == 0 {
			return nil, fmt.Errorf("fit: --fixed-codes %s: %w: set %q: none of its %d genes (%s) is among the shards' %d genes (symbols and ids are matched case-insensitively)",
				path, errFixedCodes, s.Name, len(s.Genes), clipList(s.Genes), len(ids))
		}
		if len(unknown) > 0 {
			log.Warn("fixed code: genes not in the shards, left out", "input", path, "set", s.Name,
				"unknown", len(unknown), "of", len(s.Genes), "genes", clipList(unknown))
		}
		slices.Sort(f.genes)
		f.genes = slices.Compact(f.genes)
		out = append(out, f)
	}
	return out, nil
}

// fixedSetsFromFit returns the MAP codes (posterior mean of u ≥ ½) of the
// fit in dir (a folder holding rundir.CodesFile) that switch on at least
// one gene, matched to the shards' genes by id, else by symbol. Its
// housekeeping code is not among them, nor are its genes: that code
// covers them in every cell, so every other code holds them at the
// prior's ½ (enrich's MAP sets leave them out too).
func fixedSetsFromFit(dir string, ids, names []string, log *slog.Logger) ([]fixedSet, error) {
	codes, err := rundir.ReadCodes(filepath.Join(dir, rundir.CodesFile))
	if err != nil {
		return nil, fmt.Errorf("fit: --fixed-codes %s: %w", dir, err)
	}
	byID := newGeneIndex(ids, ids)
	byName := newGeneIndex(ids, names)
	var out []fixedSet
	unknown := 0
	for l := range codes.L {
		f := fixedSet{name: fmt.Sprintf("code%d", l+1), description: "MAP code of " + dir}
		for g := range codes.GeneIDs {
			if codes.Mean[g*codes.L+l] < 0.5 || codes.Housekeeping != nil && codes.Housekeeping[g] >= 0.5 {
				continue
			}
			m := byID.lookup(codes.GeneIDs[g])
			if m == nil {
				m = byName.lookup(codes.GeneNames[g])
			}
			if m == nil {
				unknown++
			}
			f.genes = append(f.genes, m...)
		}
		if len(f.genes) == 0 {
			log.Info("fixed codes: an empty code of the fit left out", "fit", dir, "code", l+1)
			continue
		}
		slices.Sort(f.genes)
		out = append(out, fixedSet{name: f.name, description: f.description, genes: slices.Compact(f.genes)})
	}
	if unknown > 0 {
		log.Warn("fixed codes: genes of the fit's codes not in the shards, left out", "fit", dir, "genes", unknown)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("fit: --fixed-codes %s: %w: the fit's codes switch on no gene of the shards", dir, errFixedCodes)
	}
	return out, nil
}

// resolveFixedCodes reads the source of cfg.FixedCodes: a fit folder, or
// else a GMT file.
func resolveFixedCodes(cfg FitConfig, m *shard.Manifest, log *slog.Logger) ([]fixedSet, error) {
	ids, names := shardGenes(m)
	src := cfg.FixedCodes
	if st, err := os.Stat(src); err == nil && st.IsDir() {
		return fixedSetsFromFit(src, ids, names, log)
	}
	return fixedSetsFromGMT(src, ids, names, log)
}

// fixedCodeSets returns the fixed codes a run of cfg starts with, as the
// GMT sets of its copy (rundir.FixedCodesFile, by gene id), resolved from
// cfg.FixedCodes; or nil when the run has none, or keeps the copy it has
// (resume: the existing run's copy is checked, not replaced). Every L must
// hold them all. It runs before the run directory is touched, so that a
// bad source costs nothing.
func fixedCodeSets(cfg FitConfig, m *shard.Manifest, Ls []int, resume bool, log *slog.Logger) ([]geneset.GeneSet, error) {
	if cfg.FixedCodes == "" {
		return nil, nil
	}
	if _, err := os.Stat(filepath.Join(cfg.Output, rundir.FixedCodesFile)); err == nil && resume {
		codes, err := runFixedCodes(cfg, m)
		if err != nil {
			return nil, err
		}
		return nil, checkFixedL(cfg, len(codes), Ls)
	}
	sets, err := resolveFixedCodes(cfg, m, log)
	if err != nil {
		return nil, err
	}
	if err := checkFixedL(cfg, len(sets), Ls); err != nil {
		return nil, err
	}
	ids, _ := shardGenes(m)
	out := make([]geneset.GeneSet, len(sets))
	for k, s := range sets {
		out[k] = geneset.GeneSet{Name: s.name, Description: s.description}
		for _, g := range s.genes {
			out[k].Genes = append(out[k].Genes, ids[g])
		}
	}
	log.Info("fixed codes", "source", cfg.FixedCodes, "codes", len(sets))
	return out, nil
}

// writeFixedCodes writes the run's copy of its fixed codes (none: nothing).
func writeFixedCodes(run string, sets []geneset.GeneSet) error {
	if sets == nil {
		return nil
	}
	return rundir.WriteFileAtomic(filepath.Join(run, rundir.FixedCodesFile), func(w io.Writer) error { return geneset.WriteGMT(w, sets) })
}

// checkFixedL refuses latent sizes that cannot hold the fixed codes.
func checkFixedL(cfg FitConfig, fixed int, Ls []int) error {
	if Ls[0] < fixed {
		return fmt.Errorf("%w: L = %d is fewer than the %d fixed codes of %s: L counts every code, fixed and free (give L of %d or more)",
			ErrConfig, Ls[0], fixed, cfg.FixedCodes, fixed)
	}
	return nil
}

// runFixedCodes reads the fixed codes of the run cfg.Output (its
// rundir.FixedCodesFile) as the sampler's codes 0 … F−1; none when cfg
// has none.
func runFixedCodes(cfg FitConfig, m *shard.Manifest) ([]gibbs.FixedCode, error) {
	if cfg.FixedCodes == "" {
		return nil, nil
	}
	path := filepath.Join(cfg.Output, rundir.FixedCodesFile)
	lib, err := geneset.ReadGMTFile(path)
	if err != nil {
		return nil, fmt.Errorf("fit: the run's fixed codes: %w", err)
	}
	ids, _ := shardGenes(m)
	x := newGeneIndex(ids, ids)
	codes := make([]gibbs.FixedCode, len(lib.Sets))
	for k, s := range lib.Sets {
		codes[k].Code = k
		for _, id := range s.Genes {
			g := x.lookup(id)
			if g == nil {
				return nil, fmt.Errorf("fit: %s: %w: set %q names gene %q, which the shards do not have (the run was started on other shards?)", path, errFixedCodes, s.Name, id)
			}
			codes[k].Genes = append(codes[k].Genes, g...)
		}
	}
	return codes, nil
}

// fixedFirst returns a fit's code order with the fixed codes 0 … fixed−1
// first, in their order, then the free codes in the order given.
func fixedFirst(order []int, fixed int) []int {
	out := make([]int, 0, len(order))
	for l := range fixed {
		out = append(out, l)
	}
	for _, l := range order {
		if l >= fixed {
			out = append(out, l)
		}
	}
	return out
}

// clipList joins the first few of s for a message.
func clipList(s []string) string {
	const n = 8
	if len(s) <= n {
		return strings.Join(s, ", ")
	}
	return strings.Join(s[:n], ", ") + fmt.Sprintf(", … (%d more)", len(s)-n)
}
