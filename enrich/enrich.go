package enrich

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"scpipe/internal/geneset"
	"scpipe/internal/outlock"
	"scpipe/internal/rundir"
)

// Options configure Run. The zero value is not valid; start from
// DefaultOptions.
type Options struct {
	Run string // run directory written by scpipe fit
	Out string // output folder
	// Ls are the latent sizes to read; none reads every L with a finished
	// fit.
	Ls []int
	// Threshold is the posterior mean at or above which a gene belongs to
	// a code (u) and a cell uses one (z), in [0, 1].
	Threshold float64
	// Top is how many genes a program's top list holds (by score): 100,
	// the cNMF habit, by default.
	Top int
	// FDR is the expected false discovery proportion that a program's gene
	// set may reach (Bayesian FDR, from the posterior means), in (0, 1).
	FDR float64
	// Libraries are GMT files (plain or gzip) to test every program
	// against.
	Libraries []string
	// Background is "kept" (the run's genes, those ingest kept) or a file
	// of gene symbols, one per line (the first tab-separated field; blank
	// lines and lines starting with '#' skipped).
	Background string
	// Organism is "auto" (told from the run's symbols: Cd3e is mouse, CD3E
	// human), "human" or "mouse". It changes no number: symbols are always
	// matched case-insensitively. It sets the note in the log.
	Organism string
	// Hierarchy says how the programs of neighbouring L are linked:
	// HierarchyOverlap (the default) or HierarchyFixedCodes, which needs
	// Linker.
	Hierarchy HierarchyMethod
	// Linker infers the links of HierarchyFixedCodes
	// (hierarchy.Linker); unused under HierarchyOverlap.
	Linker Linker
	Force  bool         // replace an existing Out
	Log    *slog.Logger // nil: discard
	// Visit, when not nil, is called with the tables of each fit as they
	// are read (by L, then chain; the first chain of an L is the one the
	// others are matched to), before they are reduced to gene and cell
	// sets, so that a caller that also draws them (scpipe report) reads
	// each file once. The cells come without their barcodes. It may keep
	// the tables but must not change them; an error it returns stops the
	// run.
	Visit func(f rundir.Fit, codes *rundir.Codes, cells *rundir.Cells) error
}

// DefaultOptions returns the defaults of scpipe enrich: every L, threshold
// ½ (the MAP sets), the run's genes as background, the hierarchy by
// overlap.
func DefaultOptions() Options {
	return Options{Threshold: 0.5, Top: 100, FDR: 0.05, Background: backgroundKept, Organism: "auto", Hierarchy: HierarchyOverlap}
}

// backgroundKept is the Background that tests against the run's genes.
const backgroundKept = "kept"

// Report is what Run found and wrote.
type Report struct {
	Out        string
	Genes      Genes
	Levels     []*Level
	Hierarchy  *Hierarchy
	Enrichment []LibraryResults
	Organism   string
	Notes      []string // what enrich.log says about the inputs
}

// LibraryResults are the tests of every program against one library.
type LibraryResults struct {
	Collection *Collection
	File       string // the TSV, relative to Out
	Tests      []ProgramTests
}

// ProgramTests are one query's results.
type ProgramTests struct {
	Program *Program
	Query   string // "all", "unique", "top" or "fdr"
	Genes   []int  // the query's genes (run gene indices), in the order tested
	Results []Result
}

// Run reads the run directory o.Run (only through package rundir), builds
// the gene programs of each L, their consensus across chains and the
// hierarchy across L, tests them against the libraries, and writes o.Out
// (see README.md in this folder). Everything is checked before o.Out is
// touched, and o.Out is written under a temporary name and renamed into
// place: a failure leaves no output and an existing o.Out as it was.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if err := o.checkOutput(); err != nil {
		return nil, err
	}
	rep, err := analyse(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := writeOutputs(ctx, o, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// Analyse does what Run does but writes nothing: it reads the run, builds
// the programs, their consensus and hierarchy, and tests them against the
// libraries. o.Out and o.Force are not used (the Report's Out is o.Out).
func Analyse(ctx context.Context, o Options) (*Report, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	return analyse(ctx, o)
}

func analyse(ctx context.Context, o Options) (*Report, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	fits, Ls, err := finishedFits(o.Run, o.Ls, o.Log)
	if err != nil {
		return nil, err
	}
	libs, err := readLibraries(o.Libraries)
	if err != nil {
		return nil, err
	}
	rep := &Report{Out: o.Out}
	first, err := rundir.ReadCodes(filepath.Join(fits[Ls[0]][0].Dir, rundir.CodesFile))
	if err != nil {
		return nil, err
	}
	rep.Genes = NewGenes(first.GeneIDs, first.GeneNames)
	universe, err := background(o.Background, rep.Genes)
	if err != nil {
		return nil, err
	}
	so := setOptions{top: o.Top, fdr: o.FDR}
	if rep.Levels, err = readLevels(ctx, fits, Ls, rep.Genes, o.Threshold, so, o.Visit, o.Log); err != nil {
		return nil, err
	}
	if o.Hierarchy == HierarchyFixedCodes {
		o.Log.Info("enrich: linking the programs of neighbouring L by an OrMachine with fixed codes")
		if rep.Hierarchy, err = BuildHierarchyFixedCodes(ctx, rep.Levels, rep.Genes.Len(), o.Linker); err != nil {
			return nil, err
		}
	} else {
		rep.Hierarchy = BuildHierarchy(rep.Levels, rep.Genes.Len())
	}
	orderGenes(rep.Levels, rep.Hierarchy.GeneOrder, rep.Genes.Len())
	rep.Organism = o.Organism
	if rep.Organism == "auto" {
		rep.Organism = guessOrganism(rep.Genes.Names)
	}
	rep.Notes = notes(o, rep, universe)
	for _, lib := range libs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := universe.Restrict(lib)
		if c.Matched == 0 {
			o.Log.Warn(fmt.Sprintf("enrich: library %s (%s): none of its %d genes is in the background, so its table is empty (another organism, or gene ids where the run has symbols?)",
				lib.Name, lib.Path, c.Genes))
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("library %s (%s): %d gene sets; %d of its %d genes in the background; %d sets with no gene in the background are not tested",
			lib.Name, lib.Path, len(lib.Sets), c.Matched, c.Genes, c.Unmatched))
		if lib.Repeated > 0 {
			// The later sets of a name are not tested, whatever their
			// genes: a library joined from two would lose sets unseen.
			o.Log.Warn(fmt.Sprintf("enrich: library %s (%s): %d set(s) repeat an earlier set's name and are not tested, the first at %s",
				lib.Name, lib.Path, lib.Repeated, firstRepeat(lib.Skips)))
		}
		if lib.Empty+lib.Repeated > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("library %s: skipped %d lines naming a set with no gene and %d repeating a set's name",
				lib.Name, lib.Empty, lib.Repeated))
		}
		rep.Enrichment = append(rep.Enrichment, testLibrary(c, rep.Levels, rep.Genes))
	}
	for _, n := range rep.Notes {
		o.Log.Info("enrich: " + n)
	}
	return rep, nil
}

// firstRepeat describes the first skipped line of skips that repeats a
// set's name.
func firstRepeat(skips []geneset.Skip) string {
	for _, k := range skips {
		if k.First > 0 {
			return k.String()
		}
	}
	return "an unknown line"
}

// check validates the options that need no file.
func (o Options) check() error {
	switch {
	case o.Run == "":
		return errors.New("enrich: no run directory given")
	case !(o.Threshold >= 0 && o.Threshold <= 1):
		return fmt.Errorf("enrich: threshold %v outside [0, 1]", o.Threshold)
	case o.Top < 1:
		return fmt.Errorf("enrich: top %d: a program's top list needs at least 1 gene", o.Top)
	case !(o.FDR > 0 && o.FDR < 1):
		return fmt.Errorf("enrich: false discovery rate %v outside (0, 1)", o.FDR)
	case o.Organism != "auto" && o.Organism != "human" && o.Organism != "mouse":
		return fmt.Errorf("enrich: organism %q: want auto, human or mouse", o.Organism)
	case o.Background == "":
		return fmt.Errorf("enrich: empty background: want %s or a file of gene symbols", backgroundKept)
	case o.Hierarchy != HierarchyOverlap && o.Hierarchy != HierarchyFixedCodes:
		return fmt.Errorf("enrich: hierarchy %q: want %s or %s", o.Hierarchy, HierarchyOverlap, HierarchyFixedCodes)
	case o.Hierarchy == HierarchyFixedCodes && o.Linker == nil:
		return fmt.Errorf("enrich: hierarchy %s needs a Linker (hierarchy.Linker)", HierarchyFixedCodes)
	}
	return nil
}

// checkOutput checks that the output may be written.
func (o Options) checkOutput() error {
	if o.Out == "" {
		return errors.New("enrich: no output folder given (-o DIR)")
	}
	if _, err := os.Stat(o.Out); err == nil && !o.Force {
		return fmt.Errorf("enrich: %s already exists (use --force to replace it)", o.Out)
	}
	run, err := runInputs(o.Run, o.Out)
	if err != nil {
		return err
	}
	inputs := append(append(run, o.Libraries...), rundir.ShardsInputs(o.Run)...)
	if o.Background != backgroundKept {
		inputs = append(inputs, o.Background)
	}
	if err := outlock.CheckInputs(o.Out, inputs...); err != nil {
		return fmt.Errorf("enrich: %w", err)
	}
	return nil
}

// inRunDir is the folder inside a run that enrich may write (and scpipe
// report looks in first): RUN/enrich.
const inRunDir = "enrich"

// runInputs is what of the run at run an output at out must not overlap:
// the run, or, for RUN/enrich, every entry of the run but that one (its
// fits, mask and files are still refused as outputs).
func runInputs(run, out string) ([]string, error) {
	r, err1 := outlock.Resolve(run)
	o, err2 := outlock.Resolve(out)
	if err1 != nil || err2 != nil || o != filepath.Join(r, inRunDir) {
		return []string{run}, nil
	}
	entries, err := os.ReadDir(run)
	if err != nil {
		return nil, fmt.Errorf("enrich: %w", err)
	}
	var inputs []string
	for _, e := range entries {
		if e.Name() != inRunDir && !outlock.IsTemp(e.Name()) && !strings.HasSuffix(e.Name(), ".lock") {
			inputs = append(inputs, filepath.Join(run, e.Name()))
		}
	}
	return inputs, nil
}

// orderGenes puts every program's genes (and their means and support) in
// the hierarchy's gene order, the order of every output.
func orderGenes(levels []*Level, order []int, D int) {
	rank := make([]int, D)
	for i, g := range order {
		rank[g] = i
	}
	for _, lv := range levels {
		for i := range lv.Programs {
			p := &lv.Programs[i]
			idx := make([]int, len(p.Genes))
			for j := range idx {
				idx[j] = j
			}
			slices.SortFunc(idx, func(a, b int) int { return rank[p.Genes[a]] - rank[p.Genes[b]] })
			p.Genes, p.Mean, p.Support = permute(p.Genes, idx), permute(p.Mean, idx), permute(p.Support, idx)
			slices.SortFunc(p.Unique, func(a, b int) int { return rank[a] - rank[b] })
		}
	}
}

func permute[T any](v []T, idx []int) []T {
	out := make([]T, len(v))
	for i, j := range idx {
		out[i] = v[j]
	}
	return out
}

// notes says what the run and the inputs hold, for enrich.log.
func notes(o Options, rep *Report, u *Universe) []string {
	out := []string{fmt.Sprintf("run %s: %d genes, L = %s, threshold %v", o.Run, rep.Genes.Len(), levelList(rep.Levels), o.Threshold)}
	if o.Background == backgroundKept {
		out = append(out, fmt.Sprintf("background: the run's genes (%d distinct symbols)", u.Len()))
	} else {
		in := 0
		for _, n := range rep.Genes.Names {
			if _, ok := u.Lookup(n); ok {
				in++
			}
		}
		out = append(out, fmt.Sprintf("background: %s, %d distinct symbols; %d of the run's %d genes are in it, the others are dropped from the queries",
			o.Background, u.Len(), in, rep.Genes.Len()))
	}
	if rep.Organism == "mouse" {
		out = append(out, "organism mouse: gene symbols are matched to the libraries case-insensitively (Cd3e = CD3E); "+
			"most mouse genes share their human orthologue's symbol, but this is no orthology map")
	} else {
		out = append(out, "organism human: gene symbols are matched to the libraries case-insensitively")
	}
	return out
}

func levelList(levels []*Level) string {
	Ls := make([]int, len(levels))
	for i, lv := range levels {
		Ls[i] = lv.L
	}
	return joinInts(Ls, ",")
}

// testLibrary tests every program's genes, all, unique, its top genes and
// its set at the false discovery rate, against one library.
func testLibrary(c *Collection, levels []*Level, genes Genes) LibraryResults {
	res := LibraryResults{Collection: c, File: filepath.Join(EnrichmentDir, c.Library.Name+".tsv")}
	for _, lv := range levels {
		for i := range lv.Programs {
			p := &lv.Programs[i]
			if p.Status != StatusProgram {
				continue
			}
			for _, q := range []struct {
				name  string
				genes []int
			}{{"all", p.Genes}, {"unique", p.Unique}, {"top", rankedGenes(p.Top)}, {"fdr", p.FDRGenes}} {
				t := ProgramTests{Program: p, Query: q.name}
				var ids []int
				for _, g := range q.genes {
					if id, ok := c.Universe.Lookup(genes.Names[g]); ok {
						t.Genes = append(t.Genes, g)
						ids = append(ids, id)
					}
				}
				if len(ids) > 0 {
					t.Results = c.Test(ids)
				}
				res.Tests = append(res.Tests, t)
			}
		}
	}
	return res
}
