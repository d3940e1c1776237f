package enrich

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"scpipe/internal/infile"
	"scpipe/internal/rundir"
)

// finishedFits returns the finished fits of the run by L, and the L to read:
// want, each of which must have a finished fit, or all of them.
func finishedFits(run string, want []int, log *slog.Logger) (map[int][]rundir.Fit, []int, error) {
	if st, err := os.Stat(run); err != nil {
		return nil, nil, fmt.Errorf("enrich: run directory: %w", err)
	} else if !st.IsDir() {
		return nil, nil, fmt.Errorf("enrich: run directory %s: not a folder", run)
	}
	all, err := rundir.Fits(run)
	if err != nil {
		return nil, nil, fmt.Errorf("enrich: %w", err)
	}
	byL := make(map[int][]rundir.Fit)
	var finished []int
	for _, f := range all {
		if !f.Complete() {
			continue
		}
		if len(byL[f.L]) == 0 {
			finished = append(finished, f.L)
		}
		byL[f.L] = append(byL[f.L], f)
	}
	// An L's consensus of chains (scpipe fit's consensus stage) is the
	// run's result at that L: it stands for the L's chains.
	for _, L := range finished {
		cf, ok, err := rundir.ConsensusFit(run, L)
		if err != nil {
			return nil, nil, fmt.Errorf("enrich: %w", err)
		}
		if ok {
			log.Info("enrich: the L's consensus of chains stands for its chains", "L", L, "fit", cf.Dir)
			byL[L] = []rundir.Fit{cf}
		}
	}
	if len(finished) == 0 {
		return nil, nil, fmt.Errorf("enrich: %s: no finished fit (a finished fit has %s, %s and %s in %s; see scpipe fit)",
			run, rundir.CodesFile, rundir.CellsFile, rundir.TraceFile, filepath.Join("L05", "chain1"))
	}
	Ls := finished
	if len(want) > 0 {
		Ls = slices.Clone(want)
		slices.Sort(Ls)
		Ls = slices.Compact(Ls)
		for _, L := range Ls {
			if len(byL[L]) == 0 {
				return nil, nil, fmt.Errorf("enrich: %s: no finished fit of L = %d (finished: L = %s)", run, L, joinInts(finished, ", "))
			}
		}
	}
	for _, f := range all {
		if !f.Complete() && slices.Contains(Ls, f.L) {
			log.Warn("enrich: skipping an unfinished fit", "fit", f.Dir)
		}
	}
	return byL, Ls, nil
}

func joinInts(v []int, sep string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, sep)
}

// readLibraries reads every GMT file; two with the same name would write
// the same output file.
func readLibraries(paths []string) ([]*Library, error) {
	var libs []*Library
	from := make(map[string]string)
	for _, p := range paths {
		lib, err := ReadGMTFile(p)
		if err != nil {
			return nil, err
		}
		if prev, ok := from[lib.Name]; ok {
			return nil, fmt.Errorf("enrich: %s and %s are both library %q (their results would share a file); rename one", prev, p, lib.Name)
		}
		from[lib.Name] = p
		libs = append(libs, lib)
	}
	return libs, nil
}

// background returns the universe of the tests: the run's genes, or the
// symbols of a file, which must share at least one gene with the run.
func background(spec string, genes Genes) (*Universe, error) {
	if spec == backgroundKept {
		return newUniverse(genes.Names), nil
	}
	f, err := infile.Open(spec)
	if err != nil {
		return nil, fmt.Errorf("enrich: background: %w", err)
	}
	defer f.Close()
	var symbols []string
	br := bufio.NewReader(f)
	infile.SkipBOM(br)
	sc := bufio.NewScanner(br)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		s, _, _ := strings.Cut(sc.Text(), "\t")
		if s = strings.TrimSpace(s); s != "" && s[0] != '#' {
			symbols = append(symbols, s)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("enrich: background %s: %w", spec, err)
	}
	u := newUniverse(symbols)
	for _, n := range genes.Names {
		if _, ok := u.Lookup(n); ok {
			return u, nil
		}
	}
	return nil, fmt.Errorf("enrich: background %s: none of its %d symbols is a gene of the run (want one gene symbol per line, as in the run's gene_name column)",
		spec, u.Len())
}

// readLevels reads the finished chains of each L and builds its programs.
func readLevels(ctx context.Context, fits map[int][]rundir.Fit, Ls []int, genes Genes, threshold float64, so setOptions,
	visit func(rundir.Fit, *rundir.Codes, *rundir.Cells) error, log *slog.Logger) ([]*Level, error) {
	var levels []*Level
	cells := -1
	for _, L := range Ls {
		var chains []*chainFit
		for _, f := range fits[L] {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			c, err := readChain(f, genes, threshold, visit)
			if err != nil {
				return nil, err
			}
			if cells >= 0 && c.nCell != cells {
				return nil, fmt.Errorf("enrich: %s: %d cells, the run's other fits have %d", filepath.Join(f.Dir, rundir.CellsFile), c.nCell, cells)
			}
			cells = c.nCell
			chains = append(chains, c)
		}
		lv := consensus(L, chains, genes, so)
		if f := fits[L][0]; f.Chain == 0 {
			if err := lv.setConsensus(f); err != nil {
				return nil, err
			}
		}
		programs := 0
		for _, p := range lv.Programs {
			if p.Status == StatusProgram {
				programs++
			}
		}
		log.Info("enrich: read", "L", L, "chains", len(chains), "programs", programs, "unused", L-programs)
		levels = append(levels, lv)
	}
	return levels, nil
}

// guessOrganism tells mouse symbols (capitalised: Cd3e) from human ones
// (upper case: CD3E) by majority.
func guessOrganism(names []string) string {
	mouse, human := 0, 0
	for _, n := range names {
		upper, lower := false, false
		for _, r := range n {
			upper = upper || unicode.IsUpper(r)
			lower = lower || unicode.IsLower(r)
		}
		switch {
		case upper && lower:
			mouse++
		case upper:
			human++
		}
	}
	if mouse > human {
		return "mouse"
	}
	return "human"
}
