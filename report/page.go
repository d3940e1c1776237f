package report

import (
	"cmp"
	"fmt"
	"html/template"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"scpipe/enrich"
	"scpipe/internal/rundir"
)

// page is the report's content, ready for the template.
type page struct {
	Title      string
	Facts      []string
	Notes      []string
	Libraries  []string
	FiguresDir string // the figures' folder, relative to the HTML

	Answer    *answer
	Selection *pageFigure
	Summary   []summaryLine
	Traces    *pageFigure
	Hierarchy *pageFigure
	Samples   *samplesPage
	Levels    []*levelPage
}

// summaryLine is one row of summary.tsv, formatted.
type summaryLine struct {
	L, Chain, Sweeps                           int
	HeldoutLogPred, HeldoutAccuracy            string
	LogLik, TrainAccuracy, Dropout, Background string
	Lambda, RHat, Agreement, Seconds           string
	HasLambda                                  bool
}

// answer is what the page leads with: the L the run recommends, how sure
// the chains are of each L, and the programs of the recommended L.
type answer struct {
	L           int
	Why         string
	Convergence []convergenceLine
	Level       *levelPage // the section of the recommended L, whose table the answer repeats
}

// convergenceLine says how good each L is and whether its chains agree.
type convergenceLine struct {
	L                              int
	LogPred, Gap                   string // held-out log predictive ± SE; gap to the best L ± paired SE
	Converged, Agreement, RHat     string
	Stable                         string // programs every chain found, of the programs
	Recommended, NotConverged, Yes bool
}

// levelPage is the section of one L.
type levelPage struct {
	L            int
	ID           string // L05
	Facts        string
	Genes, Cells *pageFigure
	Codes        []codeLine
	Housekeeping *housekeeping
}

// codeLine is one code of an L in the table.
type codeLine struct {
	Code                  int
	Program, Status       string
	Event, Parent         string
	Genes, Unique, Cells  string
	Stability             string
	Stable                bool // found in every chain (enrich.Program.Stable)
	TopGenes              []scoredGene
	Terms                 []termLine
	IsProgram, HasParents bool
}

// scoredGene is a gene of a code's table cell and its score, apart, so
// that the page isolates the symbol (<bdi>): a right-to-left override in
// a symbol once turned "S100A9 (0.61)" into "(16.0) 9A001S".
type scoredGene struct{ Symbol, Score string }

// termLine is one enrichment term of a code.
type termLine struct {
	Term, Library, Query, Overlap, AdjP string
	Significant                         bool
}

// housekeeping is the code every cell uses, which is not one of the L
// codes.
type housekeeping struct {
	Genes    int
	TopGenes []string
}

// maxTopGenes is how many genes of a code the table names.
const maxTopGenes = 20

// buildPage draws every figure and lays out the tables.
func buildPage(in *inputs) (*page, error) {
	a := in.analysis
	pg := &page{Title: "scpipe report: " + filepath.Base(filepath.Clean(in.opts.Run)), Notes: in.notes,
		FiguresDir: filepath.Base(FiguresDir(in.opts.Out))}
	cells := 0
	if len(a.Levels) > 0 {
		cells = a.Levels[0].Cells
	}
	var Ls []string
	for _, lv := range a.Levels {
		Ls = append(Ls, itoa(lv.L))
	}
	chains := map[int]bool{}
	for _, t := range in.traces {
		chains[t.Chain] = true
	}
	pg.Facts = append(pg.Facts,
		fmt.Sprintf("Run %s: %s cells × %s genes, fitted at L = %s with %d chain(s).", in.opts.Run, thousands(cells),
			thousands(a.Genes.Len()), strings.Join(Ls, ", "), len(chains)),
		fmt.Sprintf("A gene belongs to a code, and a cell uses one, where its posterior mean is at least %v.", in.threshold))
	if in.enrich != nil {
		pg.Facts = append(pg.Facts, fmt.Sprintf("Enrichment from %s (scpipe enrich; background %s, organism %s).",
			in.enrich.Dir, in.enrich.Background, in.enrich.Organism))
		for _, f := range in.enrich.Enrichment {
			pg.Libraries = append(pg.Libraries, f.Library)
		}
		pg.Notes = append(pg.Notes, in.enrich.Notes...)
	} else {
		pg.Facts = append(pg.Facts, fmt.Sprintf("No enrichment: run scpipe enrich %s -o %s-enrich --gmt LIBRARY.gmt, then this report again, "+
			"to label the programs with gene-set terms (an enrichment written elsewhere: scpipe report --enrich DIR).", in.opts.Run, filepath.Clean(in.opts.Run)))
	}

	var err error
	if len(in.summary) > 0 {
		if pg.Selection, err = selectionFigure(in.summary); err != nil {
			return nil, err
		}
		pg.Summary = summaryLines(in.summary)
	}
	if pg.Traces, err = tracesFigure(in.traces); err != nil {
		return nil, err
	}
	info := map[string]hierNodeInfo{}
	for _, lv := range a.Levels {
		for _, p := range lv.Programs {
			ni := hierNodeInfo{Cells: p.Cells, Stability: p.Stability}
			for _, r := range p.Top[:min(hierTopGenes, len(p.Top))] {
				ni.Top = append(ni.Top, a.Genes.Symbols[r.Gene])
			}
			if t, ok := in.bestTerm(p.Name()); ok {
				ni.Term, ni.Query, ni.AdjP = t.Term.Term, t.Query, pvalue(t.AdjP)
			}
			info[p.Name()] = ni
		}
	}
	if len(a.Hierarchy.Nodes) > 0 {
		pg.Hierarchy = hierarchyFigure(a.Hierarchy, info)
		pg.Hierarchy.Caption = "Each bar is a program (height: its genes), in columns by L; ribbons join programs of neighbouring L " +
			hierarchyLinks[a.Hierarchy.Method] + " (width: shared genes). Colours follow each program's lineage " +
			"from the smallest L. When enrichment was run, a program's label is the most significant term (adjusted p ≤ 0.05) of " +
			"its unique genes, those in no other program of its L, as in the OrMachine paper; of all its genes where the unique " +
			"ones give none; without enrichment, its leading genes by score. Hover over a bar or ribbon for details."
	}
	for _, lv := range a.Levels {
		lp, err := levelSection(in, lv)
		if err != nil {
			return nil, err
		}
		pg.Levels = append(pg.Levels, lp)
	}
	pg.Answer = answerOf(in.summary, pg.Levels)
	if len(in.samples) > 0 {
		if pg.Samples, err = samplesSection(in.samples); err != nil {
			return nil, err
		}
	}
	return pg, nil
}

// answerOf builds the page's lead from summary.tsv: nil before the run has
// a summary (or recommends no L).
func answerOf(rows []rundir.SummaryRow, levels []*levelPage) *answer {
	ans := &answer{}
	seen := map[int]bool{}
	for _, r := range rows {
		if r.Recommended {
			ans.L = r.L
		}
		if seen[r.L] {
			continue
		}
		seen[r.L] = true
		agreement := math.Inf(1) // the worst chain's agreement with chain 1
		for _, o := range rows {
			if o.L == r.L {
				agreement = min(agreement, o.Agreement)
				if o.LogLik > r.LogLik {
					r = o // the scores of the L's most likely chain, as the recommendation takes them
				}
			}
		}
		line := convergenceLine{L: r.L, Converged: r.Converged, LogPred: plusMinus(r.HeldoutLogPred, r.HeldoutLogPredSE),
			Gap: plusMinus(r.LogPredGap, r.LogPredGapSE), Agreement: fixed(agreement, 3), RHat: general(r.RHatWithin),
			Recommended: r.Recommended, NotConverged: r.Converged == "no", Yes: r.Converged == "yes"}
		if r.StablePrograms >= 0 {
			line.Stable = fmt.Sprintf("%d of %d", r.StablePrograms, r.Programs)
		}
		ans.Convergence = append(ans.Convergence, line)
	}
	if ans.L == 0 {
		return nil
	}
	for _, lp := range levels {
		if lp.L == ans.L {
			ans.Level = lp
		}
	}
	ans.Why = fmt.Sprintf("scpipe fit recommends L = %d: the smallest L whose held-out log predictive per entry falls short of the "+
		"best L's by no more than the larger of the standard error of that difference (paired over cells) and 5%% of the gain "+
		"across L (summary.tsv; the model-selection figure below draws the gaps). A program is stable when every chain found it.", ans.L)
	return ans
}

// plusMinus formats v ± se in five decimals; NA for NaN.
func plusMinus(v, se float64) string {
	if math.IsNaN(v) {
		return "NA"
	}
	if math.IsNaN(se) {
		return fixed(v, 5)
	}
	return fixed(v, 5) + " ± " + fixed(se, 5)
}

// levelSection builds the section of one L: its two heat maps and table.
func levelSection(in *inputs, lv *enrich.Level) (*levelPage, error) {
	a := in.analysis
	ld := in.levels[lv.L]
	lp := &levelPage{L: lv.L, ID: fmt.Sprintf("L%02d", lv.L)}
	codes := displayOrder(lv, a.Hierarchy)
	programs, rowLabels, colLabels := 0, make([]string, len(codes)), make([]string, len(codes))
	isProgram := make([]bool, len(codes))
	for i, k := range codes {
		p := &lv.Programs[k]
		rowLabels[i], colLabels[i] = "code "+itoa(p.Code), itoa(p.Code)
		if p.Status == enrich.StatusProgram {
			programs++
			isProgram[i] = true
		} else {
			rowLabels[i] += " (" + string(p.Status) + ")"
		}
	}
	lp.Facts = fmt.Sprintf("%d codes: %d programs", lv.L, programs)
	if n := lv.L - programs; n > 0 {
		lp.Facts += fmt.Sprintf(", %d no program (no cell uses it, or it has no gene)", n)
	}
	program := make([]bool, lv.L) // by code, as the usage's columns
	for i, k := range codes {
		program[k] = isProgram[i]
	}
	idle := ld.usage.idle(program)
	fit := fmt.Sprintf("chain %d", ld.chain)
	if lv.Consensus > 0 {
		fit = "the consensus fit"
	}
	lp.Facts += fmt.Sprintf(". %s cells (%s) use no program in %s (posterior mean of z at least %v)",
		thousands(idle), percent(float64(idle)/float64(max(ld.usage.Cells, 1))), fit, in.threshold)
	if ld.codes.Housekeeping != nil {
		lp.Facts += ": the housekeeping code alone explains what they detect"
	}
	lp.Facts += fmt.Sprintf(". Heat maps and numbering from %s", fit)
	if lv.Consensus > 0 {
		lp.Facts += fmt.Sprintf(": the consensus of %d chains (%s), the programs that most of them found held fixed and "+
			"the cells' usage fitted again; a program's stability is the mean Jaccard index of its genes with the chains' codes, "+
			"beside the share of chains that found it", lv.Consensus, filepath.Join(fmt.Sprintf("L%02d", lv.L), rundir.ConsensusDirName))
	} else if len(lv.Chains) > 1 {
		lp.Facts += fmt.Sprintf("; gene sets, cells and stability are the consensus of chains %s", joinInts(lv.Chains))
	}
	lp.Facts += "."
	var err error
	if genes := a.Hierarchy.GeneOrder; len(genes) > 0 {
		if lp.Genes, err = genesFigure(lp.ID+"_genes", ld.codes.Mean, lv.L, codes, rowLabels, isProgram, genes, a.Genes.Symbols); err != nil {
			return nil, err
		}
		lp.Genes.Title = fmt.Sprintf("L = %d: genes of each code", lv.L)
		lp.Genes.Caption = "Posterior mean of u, the probability that the code switches the gene on, for every gene of some " +
			"program of the run, in the same order at every L: the genes of each program of the smallest L together, within them " +
			"those of each program of the next L, and so on. Grey rows are codes that are no program."
	}
	if lp.Cells, err = cellsFigure(lp.ID+"_cells", ld.usage, codes, colLabels); err != nil {
		return nil, err
	}
	lp.Cells.Title = fmt.Sprintf("L = %d: cells using each code", lv.L)
	lp.Cells.Caption = fmt.Sprintf("Posterior mean of z, the probability that the cell uses the code. Cells are sorted by the "+
		"codes they use (posterior mean at least %v), in the columns' order, and drawn in %d bands of equal numbers of cells, "+
		"each showing its cells' mean; the labels name the patterns of at least 2%% of the cells.", in.threshold, min(maxBands, ld.usage.Cells))

	nodes := map[string]*enrich.Node{}
	for i := range a.Hierarchy.Nodes {
		nodes[a.Hierarchy.Nodes[i].Name()] = &a.Hierarchy.Nodes[i]
	}
	for _, k := range codes {
		lp.Codes = append(lp.Codes, codeRow(in, &lv.Programs[k], nodes[lv.Programs[k].Name()], lv.Cells))
	}
	if hk := ld.codes.Housekeeping; hk != nil {
		lp.Housekeeping = housekeepingOf(ld.codes, in.threshold, a.Genes)
	}
	return lp, nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = itoa(x)
	}
	return strings.Join(s, ", ")
}

// codeRow lays out one code for the table.
func codeRow(in *inputs, p *enrich.Program, n *enrich.Node, cells int) codeLine {
	c := codeLine{Code: p.Code, Program: p.Name(), Status: string(p.Status), IsProgram: p.Status == enrich.StatusProgram,
		Genes: itoa(len(p.Genes)), Unique: itoa(len(p.Unique)),
		Cells:     fmt.Sprintf("%s (%s)", thousands(p.Cells), percent(float64(p.Cells)/float64(max(cells, 1)))),
		Stability: stability(p.Stability), Stable: p.Stable()}
	if !math.IsNaN(p.Frequency) {
		c.Stability += fmt.Sprintf(", found by %s of the chains", percent(p.Frequency))
	}
	if n != nil {
		c.Event, c.Parent = string(n.Event), n.Parent
	}
	for _, r := range p.Top[:min(maxTopGenes, len(p.Top))] {
		c.TopGenes = append(c.TopGenes, scoredGene{in.analysis.Genes.Symbols[r.Gene], fmt.Sprintf("%.2f", r.Score)})
	}
	c.Terms = termLines(in.terms[p.Name()])
	return c
}

// termLines picks the terms a program's row shows: those of its top genes
// by score (the genes a person reads), two per library; an enrich output
// written before top genes existed has none, and then its terms of all
// genes and one per library of its unique genes are shown.
func termLines(terms []libTerm) []termLine {
	var out []termLine
	add := func(t libTerm) {
		out = append(out, termLine{Term: t.Term.Term, Library: t.Library, Query: t.Query,
			Overlap: fmt.Sprintf("%d/%d", t.Overlap, t.SetSize), AdjP: pvalue(t.AdjP), Significant: t.AdjP <= significant})
	}
	shown := map[string]int{}
	for _, t := range terms {
		if t.Query == "top" && shown[t.Library] < 2 {
			shown[t.Library]++
			add(t)
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, t := range terms {
		switch {
		case t.Query == "all":
			add(t)
		case t.Query == "unique" && shown[t.Library] == 0:
			shown[t.Library]++
			add(t)
		}
	}
	return out
}

// housekeepingOf summarises the housekeeping code: its genes at or above
// the threshold, and those that the programs' cells detect most evenly
// first (the smallest largest |score| over the codes, the housekeeping
// genes proper; markers such as CD3D that the code also covers come
// last), then by posterior mean and symbol. A fit written before scores
// existed lists them by posterior mean and symbol.
func housekeepingOf(codes *rundir.Codes, threshold float64, genes enrich.Genes) *housekeeping {
	h := &housekeeping{}
	mean := codes.Housekeeping
	var in []int
	spread := make([]float64, len(mean))
	for g, m := range mean {
		if m >= threshold {
			in = append(in, g)
		}
		if codes.Score != nil {
			for _, s := range codes.Score[g*codes.L : (g+1)*codes.L] {
				spread[g] = max(spread[g], math.Abs(s))
			}
		}
	}
	h.Genes = len(in)
	slices.SortStableFunc(in, func(a, b int) int {
		return cmp.Or(cmp.Compare(spread[a], spread[b]), cmp.Compare(mean[b], mean[a]), strings.Compare(genes.Symbols[a], genes.Symbols[b]))
	})
	for _, g := range in[:min(maxTopGenes, len(in))] {
		h.TopGenes = append(h.TopGenes, genes.Symbols[g])
	}
	return h
}

// summaryLines formats summary.tsv for its table.
func summaryLines(rows []rundir.SummaryRow) []summaryLine {
	lines := make([]summaryLine, len(rows))
	for i, r := range rows {
		lines[i] = summaryLine{L: r.L, Chain: r.Chain, Sweeps: r.Sweeps,
			HeldoutLogPred: fixed(r.HeldoutLogPred, 4), HeldoutAccuracy: fixed(r.HeldoutAccuracy, 4),
			LogLik: general(r.LogLik), TrainAccuracy: fixed(r.TrainAccuracy, 4),
			Dropout: fixed(r.Dropout, 3), Background: general(r.Background), Lambda: fixed(r.Lambda, 3),
			RHat: general(r.RHatLogLik), Agreement: fixed(r.Agreement, 3), Seconds: fixed(r.Seconds, 1),
			HasLambda: !math.IsNaN(r.Lambda)}
	}
	return lines
}

// fixed formats v with d decimals; NA for NaN.
func fixed(v float64, d int) string {
	if math.IsNaN(v) {
		return "NA"
	}
	return strconv.FormatFloat(v, 'f', d, 64)
}

// general formats v in four significant digits; NA for NaN.
func general(v float64) string {
	if math.IsNaN(v) {
		return "NA"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// pvalue formats a p-value in two significant digits; 0 stays 0 (below
// the smallest double).
func pvalue(p float64) string {
	switch {
	case math.IsNaN(p):
		return "NA"
	case p == 0:
		return "0"
	case p >= 0.01:
		return strconv.FormatFloat(p, 'f', 2, 64)
	}
	return strconv.FormatFloat(p, 'e', 1, 64)
}

// figures lists the page's figures in page order.
func (pg *page) figures() []*pageFigure {
	var figs []*pageFigure
	var samples *pageFigure
	if pg.Samples != nil {
		samples = pg.Samples.Figure
	}
	for _, f := range []*pageFigure{pg.Selection, pg.Traces, pg.Hierarchy, samples} {
		if f != nil {
			figs = append(figs, f)
		}
	}
	for _, lp := range pg.Levels {
		for _, f := range []*pageFigure{lp.Genes, lp.Cells} {
			if f != nil {
				figs = append(figs, f)
			}
		}
	}
	return figs
}

// Inline is the figure as an element of the page.
func (f *pageFigure) Inline() template.HTML {
	return template.HTML(inline(f.SVG)) // drawn here, its text escaped where drawn
}
