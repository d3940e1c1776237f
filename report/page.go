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
	"scpipe/rundir"
)

// page is the report's content, ready for the template.
type page struct {
	Title      string
	Facts      []string
	Notes      []string
	Libraries  []string
	FiguresDir string // the figures' folder, relative to the HTML

	Selection *figure
	Summary   []summaryLine
	Traces    *figure
	Hierarchy *figure
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

// levelPage is the section of one L.
type levelPage struct {
	L            int
	ID           string // L05
	Facts        string
	Genes, Cells *figure
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
	TopGenes              []string
	Terms                 []termLine
	IsProgram, HasParents bool
}

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
const maxTopGenes = 10

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
			"to label the programs with gene-set terms.", in.opts.Run, filepath.Clean(in.opts.Run)))
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
			"ones give none. Hover over a bar or ribbon for details."
	}
	for _, lv := range a.Levels {
		lp, err := levelSection(in, lv)
		if err != nil {
			return nil, err
		}
		pg.Levels = append(pg.Levels, lp)
	}
	return pg, nil
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
	lp.Facts += fmt.Sprintf(". Heat maps and numbering from chain %d", ld.chain)
	if len(lv.Chains) > 1 {
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
		lp.Housekeeping = housekeepingOf(hk, in.threshold, a.Genes)
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
		Stability: stability(p.Stability)}
	if n != nil {
		c.Event, c.Parent = string(n.Event), n.Parent
	}
	order := make([]int, len(p.Genes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(p.Mean[b], p.Mean[a]) })
	for _, i := range order[:min(maxTopGenes, len(order))] {
		c.TopGenes = append(c.TopGenes, fmt.Sprintf("%s (%.2f)", in.analysis.Genes.Symbols[p.Genes[i]], p.Mean[i]))
	}
	uniqueShown := map[string]bool{} // one term per library for the unique genes: the table stays short
	for _, t := range in.terms[p.Name()] {
		if t.Query == "unique" {
			if uniqueShown[t.Library] {
				continue
			}
			uniqueShown[t.Library] = true
		}
		c.Terms = append(c.Terms, termLine{Term: t.Term.Term, Library: t.Library, Query: t.Query,
			Overlap: fmt.Sprintf("%d/%d", t.Overlap, t.SetSize), AdjP: pvalue(t.AdjP), Significant: t.AdjP <= significant})
	}
	return c
}

// housekeepingOf summarises the housekeeping code: its genes at or above
// the threshold and the top ones by posterior mean.
func housekeepingOf(mean []float64, threshold float64, genes enrich.Genes) *housekeeping {
	h := &housekeeping{}
	var in []int
	for g, m := range mean {
		if m >= threshold {
			in = append(in, g)
		}
	}
	h.Genes = len(in)
	slices.SortStableFunc(in, func(a, b int) int { return cmp.Compare(mean[b], mean[a]) })
	for _, g := range in[:min(maxTopGenes, len(in))] {
		h.TopGenes = append(h.TopGenes, fmt.Sprintf("%s (%.2f)", genes.Symbols[g], mean[g]))
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
func (pg *page) figures() []*figure {
	var figs []*figure
	for _, f := range []*figure{pg.Selection, pg.Traces, pg.Hierarchy} {
		if f != nil {
			figs = append(figs, f)
		}
	}
	for _, lp := range pg.Levels {
		for _, f := range []*figure{lp.Genes, lp.Cells} {
			if f != nil {
				figs = append(figs, f)
			}
		}
	}
	return figs
}

// Inline is the figure as an element of the page.
func (f *figure) Inline() template.HTML {
	return template.HTML(inline(f.SVG)) // drawn here, its text escaped where drawn
}
