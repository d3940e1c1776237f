package report

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"scpipe/enrich"
	"scpipe/internal/figure"
	"scpipe/internal/outlock"
	"scpipe/internal/rundir"
)

// Options configure Write. Start from DefaultOptions.
type Options struct {
	Run string // run directory written by scpipe fit
	// Out is the HTML file to write, ending in .html; "" writes
	// RUN/report.html. The figures go beside it, in the folder named
	// after it (report.html: report-figures/).
	Out string
	// Enrich is an output folder of scpipe enrich for this run, whose
	// enrichment terms label the programs. "" looks for RUN/enrich and
	// then RUN-enrich (the name scpipe enrich's examples use) and goes
	// without terms when there is neither; NoEnrich goes without.
	Enrich string
	// Threshold is the posterior mean at or above which a gene is in a
	// code and a cell uses one, as in scpipe enrich, when there is no
	// enrich output; with one, the report uses the output's threshold so
	// that the programs are the same.
	Threshold float64
	// Hierarchy is how the programs of neighbouring L are linked, as in
	// scpipe enrich; "" takes the enrich output's method, and without one
	// enrich.HierarchyFixedCodes when Linker is set (scpipe report sets
	// hierarchy.Linker), enrich.HierarchyOverlap otherwise.
	Hierarchy enrich.HierarchyMethod
	Linker    enrich.Linker
	Force     bool         // replace an existing report and its figures
	Log       *slog.Logger // nil: discard
}

// NoEnrich, as Options.Enrich, makes a report without enrichment terms.
const NoEnrich = "-"

// DefaultOptions returns the defaults of scpipe report.
func DefaultOptions() Options { return Options{Threshold: 0.5} }

// DefaultFile is the report's name inside the run directory when no Out is
// given.
const DefaultFile = "report.html"

// Result is what Write wrote and read.
type Result struct {
	HTML    string   // the report
	Figures []string // its figures as standalone SVG files
	Enrich  string   // the enrich output whose terms it shows, "" for none
	Notes   []string // what the report says about its inputs (missing summary, an enrich output not used, …)
}

// FiguresDir returns the folder of the standalone figures of the report
// html: report.html → report-figures.
func FiguresDir(html string) string {
	return strings.TrimSuffix(html, filepath.Ext(html)) + "-figures"
}

// Write reads the run o.Run (through rundir, and its programs through
// package enrich) and writes the report: one self-contained HTML file (no
// scripts, no fonts or images from elsewhere: every figure is an inline
// SVG, raster heat maps PNG data inside it) and every figure again as an
// SVG file. Every input is read and every figure drawn before anything is
// written; the figures' folder and then the HTML are renamed into place,
// replacing an existing report only with o.Force.
func Write(ctx context.Context, o Options) (*Result, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	in, err := collect(ctx, o)
	if err != nil {
		return nil, err
	}
	pg, err := buildPage(in)
	if err != nil {
		return nil, err
	}
	res := &Result{HTML: o.Out, Notes: in.notes}
	if in.enrich != nil {
		res.Enrich = in.enrich.Dir
	}
	html, err := pg.render()
	if err != nil {
		return nil, err
	}
	if res.Figures, err = commit(ctx, o, pg.figures(), html); err != nil {
		return nil, err
	}
	return res, nil
}

// check validates the options and that the report may be written, before
// anything is read.
func (o *Options) check() error {
	if o.Run == "" {
		return errors.New("report: no run directory given")
	}
	st, err := os.Stat(o.Run)
	if err != nil {
		return fmt.Errorf("report: run directory: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("report: run directory %s: not a folder", o.Run)
	}
	if !(o.Threshold >= 0 && o.Threshold <= 1) {
		return fmt.Errorf("report: threshold %v outside [0, 1]", o.Threshold)
	}
	if o.Out == "" {
		o.Out = filepath.Join(o.Run, DefaultFile)
	}
	if ext := strings.ToLower(filepath.Ext(o.Out)); ext != ".html" && ext != ".htm" {
		return fmt.Errorf("report: output %s: want a file name ending in .html", o.Out)
	}
	if !o.Force {
		for _, p := range []string{o.Out, FiguresDir(o.Out)} {
			if _, err := os.Stat(p); err == nil {
				return fmt.Errorf("report: %s already exists (use --force to replace it)", p)
			}
		}
	}
	return o.checkInputs()
}

// checkInputs refuses a page or figures folder that is, holds or lies
// inside what the report reads: an entry of the run directory other than
// the report's own outputs (the page and its figures may lie in the run,
// as they do by default), or the enrich output named.
func (o *Options) checkInputs() error {
	entries, err := os.ReadDir(o.Run)
	if err != nil {
		return fmt.Errorf("report: run directory: %w", err)
	}
	own := map[string]bool{}
	for _, p := range []string{o.Out, FiguresDir(o.Out)} {
		if r, err := outlock.Resolve(p); err == nil {
			own[r] = true
		}
	}
	var inputs []string
	for _, e := range entries {
		p := filepath.Join(o.Run, e.Name())
		if r, err := outlock.Resolve(p); err == nil && own[r] || outlock.IsTemp(e.Name()) || strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		inputs = append(inputs, p)
	}
	if o.Enrich != NoEnrich {
		inputs = append(inputs, o.Enrich)
	}
	inputs = append(inputs, rundir.ShardsInputs(o.Run)...)
	for _, out := range []string{o.Out, FiguresDir(o.Out)} {
		if err := outlock.CheckInputs(out, inputs...); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	return nil
}

// inputs is everything the report shows, read from the run.
type inputs struct {
	opts      Options
	threshold float64
	hierarchy enrich.HierarchyMethod
	analysis  *enrich.Report // programs, consensus, hierarchy
	levels    map[int]*levelData
	summary   []rundir.SummaryRow  // nil when the run has no summary.tsv yet
	samples   []rundir.SampleUsage // samples.tsv; nil for shards of one input
	traces    []figure.Trace
	enrich    *enrich.Output
	terms     map[string][]libTerm // by program name: its best terms in every library
	notes     []string
}

// levelData is what the report keeps of the reference chain of one L (the
// one the others are matched to, whose codes the programs are numbered by).
type levelData struct {
	chain int
	codes *rundir.Codes
	usage *usage
}

// libTerm is one enrichment term of a program and its library.
type libTerm struct {
	Library string
	enrich.Term
}

// topTerms is how many terms of each program and query are read from each
// library.
const topTerms = 3

// collect reads the run: its finished fits through enrich.Analyse (whose
// Visit hook hands over each reference chain's tables as they are read,
// so that each file is read once), the summary, the traces and the enrich
// output.
func collect(ctx context.Context, o Options) (*inputs, error) {
	in := &inputs{opts: o, threshold: o.Threshold, hierarchy: o.Hierarchy, levels: map[int]*levelData{}}
	fits, err := finishedFits(o.Run)
	if err != nil {
		return nil, err
	}
	if err := in.findEnrich(); err != nil {
		return nil, err
	}
	eo := enrich.DefaultOptions()
	eo.Run, eo.Threshold, eo.Log = o.Run, in.threshold, o.Log
	switch {
	case in.hierarchy != "":
	case o.Linker != nil:
		in.hierarchy = enrich.HierarchyFixedCodes
	default:
		in.hierarchy = enrich.HierarchyOverlap
	}
	eo.Hierarchy, eo.Linker = in.hierarchy, o.Linker
	eo.Visit = func(f rundir.Fit, codes *rundir.Codes, cells *rundir.Cells) error {
		if in.levels[f.L] != nil {
			return nil
		}
		in.levels[f.L] = &levelData{chain: f.Chain, codes: codes, usage: countUsage(cells.Mean, cells.L, in.threshold)}
		return nil
	}
	if in.analysis, err = enrich.Analyse(ctx, eo); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	for _, f := range fits {
		rows, err := rundir.ReadTrace(filepath.Join(f.Dir, rundir.TraceFile))
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		in.traces = append(in.traces, figure.Trace{L: f.L, Chain: f.Chain, Rows: rows})
	}
	summary := filepath.Join(o.Run, rundir.SummaryFile)
	switch in.summary, err = rundir.ReadSummary(summary); {
	case errors.Is(err, os.ErrNotExist):
		in.notes = append(in.notes, fmt.Sprintf("%s is not written yet (scpipe fit writes it when every L has finished): "+
			"no model-selection plot", summary))
	case err != nil:
		return nil, fmt.Errorf("report: %w", err)
	}
	switch in.samples, err = rundir.ReadSamples(filepath.Join(o.Run, rundir.SampleUsageFile)); {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("report: %w", err)
	}
	if err := in.checkEnrich(); err != nil {
		return nil, err
	}
	if in.enrich != nil {
		if err := in.readTerms(); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// finishedFits lists the finished fits of the run, or says there are none.
func finishedFits(run string) ([]rundir.Fit, error) {
	all, err := rundir.Fits(run)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	var fits []rundir.Fit
	for _, f := range all {
		if f.Complete() {
			fits = append(fits, f)
		}
	}
	if len(fits) == 0 {
		return nil, fmt.Errorf("report: %s: no finished fit (a finished fit has %s, %s and %s in a folder such as %s; see scpipe fit)",
			run, rundir.CodesFile, rundir.CellsFile, rundir.TraceFile, filepath.Join(run, "L05", "chain1"))
	}
	return fits, nil
}

// findEnrich reads the enrich output given, or looks for one, and takes
// its threshold.
func (in *inputs) findEnrich() error {
	switch dir := in.opts.Enrich; dir {
	case NoEnrich:
		return nil
	case "":
		run := filepath.Clean(in.opts.Run)
		for _, cand := range []string{filepath.Join(run, "enrich"), run + "-enrich"} {
			if _, err := os.Stat(filepath.Join(cand, enrich.IndexFile)); err != nil {
				continue
			}
			out, err := enrich.ReadOutput(cand)
			if err != nil {
				in.note(fmt.Sprintf("found %s but cannot read it, so no enrichment is shown: %v", cand, err))
				return nil
			}
			in.enrich = out
			break
		}
	default:
		out, err := enrich.ReadOutput(dir)
		if err != nil {
			return fmt.Errorf("report: enrich output: %w", err)
		}
		in.enrich = out
	}
	if in.enrich != nil {
		if in.enrich.Threshold != in.opts.Threshold {
			msg := fmt.Sprintf("threshold %v from %s, so that the programs are those its terms belong to", in.enrich.Threshold, in.enrich.Dir)
			in.notes = append(in.notes, msg)
			in.opts.Log.Info("report: " + msg)
		}
		in.threshold = in.enrich.Threshold
		if in.hierarchy == "" {
			in.hierarchy = in.enrich.Hierarchy
		}
	}
	return nil
}

// note records a warning for the page and the log.
func (in *inputs) note(s string) {
	in.notes = append(in.notes, s)
	in.opts.Log.Warn("report: " + s)
}

// checkEnrich checks that the enrich output holds the programs the report
// found (an output of another run, or of this run before it was fitted
// again, would label programs with other programs' terms). One given by
// name must match; one found is set aside with a note.
func (in *inputs) checkEnrich() error {
	if in.enrich == nil {
		return nil
	}
	progs := map[string]*enrich.Program{}
	for _, lv := range in.analysis.Levels {
		for i := range lv.Programs {
			progs[lv.Programs[i].Name()] = &lv.Programs[i]
		}
	}
	var problem string
	for _, r := range in.enrich.Index {
		p := progs[r.Program]
		switch {
		case p == nil:
			problem = fmt.Sprintf("it has %s, which this run has not", r.Program)
		case p.Status != r.Status || len(p.Genes) != r.Genes || p.Cells != r.Cells:
			problem = fmt.Sprintf("its %s (%s, %d genes, %d cells) is not this run's (%s, %d genes, %d cells)",
				r.Program, r.Status, r.Genes, r.Cells, p.Status, len(p.Genes), p.Cells)
		}
		if problem != "" {
			break
		}
	}
	if problem == "" {
		return nil
	}
	msg := fmt.Sprintf("enrich output %s does not match the run %s: %s (run scpipe enrich again)", in.enrich.Dir, in.opts.Run, problem)
	if in.opts.Enrich != "" {
		return errors.New("report: " + msg)
	}
	in.note(msg + "; its terms are not shown")
	in.enrich = nil
	return nil
}

// readTerms reads the best terms of every program from each library.
func (in *inputs) readTerms() error {
	in.terms = map[string][]libTerm{}
	for _, f := range in.enrich.Enrichment {
		terms, err := enrich.ReadTopTerms(f.Path, topTerms)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		for _, t := range terms {
			in.terms[t.Program] = append(in.terms[t.Program], libTerm{f.Library, t})
		}
	}
	return nil
}

// bestTerm returns the term that labels a program: the most significant
// term of its top genes by score (what a person reads of it), else, as in
// the OrMachine paper, of its unique genes (those in no other program of
// its L, which tell nested programs apart), else of all its genes; over
// every library, and only at adjusted p ≤ significant.
func (in *inputs) bestTerm(program string) (libTerm, bool) {
	for _, query := range []string{"top", "unique", "all"} {
		var best libTerm
		found := false
		for _, t := range in.terms[program] {
			if t.Query != query || !(t.AdjP <= significant) {
				continue
			}
			if !found || t.AdjP < best.AdjP || (t.AdjP == best.AdjP && t.P < best.P) {
				best, found = t, true
			}
		}
		if found {
			return best, true
		}
	}
	return libTerm{}, false
}

// significant is the adjusted p at or below which a term labels a program.
const significant = 0.05

// displayOrder returns the codes of one L (0-based) in the order the report
// shows them: programs in the hierarchy's order, then the others by code.
func displayOrder(lv *enrich.Level, h *enrich.Hierarchy) []int {
	pos := map[string]int{}
	for _, n := range h.Nodes {
		if n.L == lv.L {
			pos[n.Name()] = n.Order
		}
	}
	codes := make([]int, 0, lv.L)
	for k := range lv.L {
		codes = append(codes, k)
	}
	slices.SortStableFunc(codes, func(a, b int) int {
		pa, oka := pos[lv.Programs[a].Name()]
		pb, okb := pos[lv.Programs[b].Name()]
		switch {
		case oka && okb:
			return pa - pb
		case oka:
			return -1
		case okb:
			return 1
		}
		return a - b
	})
	return codes
}

var nan = math.NaN()

func itoa(v int) string { return strconv.Itoa(v) }

// thousands writes n with thin separators: 1 300 000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 10000 && n > -10000 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && c != '-' {
			b.WriteString("\u202f")
		}
		b.WriteRune(c)
	}
	return b.String()
}

// stability formats a stability score; NA with one chain.
func stability(s float64) string {
	if math.IsNaN(s) {
		return "NA"
	}
	return strconv.FormatFloat(s, 'f', 2, 64)
}
