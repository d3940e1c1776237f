package figure

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"

	"scpipe/internal/rundir"
	"scpipe/internal/stats/evaluate"
)

// svgText checks that svg is well-formed XML and returns its elements'
// count by name and its text.
func svgText(t *testing.T, svg []byte) (map[string]int, string) {
	t.Helper()
	elems := map[string]int{}
	var text strings.Builder
	d := xml.NewDecoder(bytes.NewReader(svg))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return elems, text.String()
		}
		if err != nil {
			t.Fatalf("SVG not well-formed: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			elems[tok.Name.Local]++
		case xml.CharData:
			text.Write(tok)
			text.WriteByte('\n')
		}
	}
}

// selectionRows is a run of L = 2..5 and the given chains, with standard
// errors se, held out or not, L = 4 recommended.
func selectionRows(chains int, se float64, heldOut bool) []rundir.SummaryRow {
	nan := math.NaN()
	var rows []rundir.SummaryRow
	for c := 1; c <= chains; c++ {
		for L := 2; L <= 5; L++ {
			r := rundir.SummaryRow{L: L, Chain: c, LogLik: -1000 + 50*float64(L), TrainAccuracy: 0.8 + 0.02*float64(L),
				HeldoutLogPred: -0.4 + 0.05*float64(min(L, 4)) - 0.001*float64(c), HeldoutAccuracy: 0.8 + 0.03*float64(min(L, 4)),
				HeldoutLogPredSE: se, HeldoutAccuracySE: se / 2,
				LogPredGap: 0.05 * float64(4-min(L, 4)), LogPredGapSE: se, LogPredTolerance: 0.01,
				Agreement: 1 - 0.1*float64(c-1)*float64(L%2), Programs: L, StablePrograms: L - L%2, Recommended: L == 4}
			if !heldOut {
				r.HeldoutLogPred, r.HeldoutAccuracy, r.HeldoutLogPredSE, r.HeldoutAccuracySE = nan, nan, nan, nan
				r.LogPredGap, r.LogPredGapSE, r.LogPredTolerance, r.Recommended = nan, nan, nan, false
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// TestSelection draws the model-selection figure of runs of several
// shapes and checks what each says: its panels' titles, the axes' labels,
// the legend, the stable programs, and error bars only where there are
// standard errors.
func TestSelection(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		rows    []rundir.SummaryRow
		min     float64
		want    []string
		notWant []string
	}{
		{"two chains", selectionRows(2, 0.01, true), 0.9,
			[]string{"Held-out log predictive", "Gap to the best L", "Held-out accuracy", "Stability across chains", "L (number of codes)",
				"mean log p(held-out entry)", "agreement with chain 1", "chain 1", "chain 2", "±1 standard error", "recommended L", "tolerance", "agreement asked", "4/4", "2/3"},
			[]string{"Training"}},
		{"one chain", selectionRows(1, 0.01, true), 0.9,
			[]string{"Held-out log predictive", "Gap to the best L", "recommended L"},
			[]string{"Stability", "chain 1", "agreement asked"}},
		{"nothing held out", selectionRows(2, 0.01, false), 0.9,
			[]string{"Training log-likelihood", "Training accuracy", "Stability across chains"},
			[]string{"Held-out", "Gap", "standard error", "recommended L", "tolerance"}},
		{"no fits", nil, 0.9, []string{"no finished fits"}, []string{"Stability"}},
		{"ten chains", selectionRows(10, 0.01, true), 0, []string{"chain 10"}, []string{"agreement asked"}},
	} {
		svg, err := Selection(tc.rows, tc.min)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, text := svgText(t, svg)
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: no %q in the figure", tc.name, w)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(text, w) {
				t.Errorf("%s: %q in the figure", tc.name, w)
			}
		}
		again, _ := Selection(tc.rows, tc.min)
		if !bytes.Equal(svg, again) {
			t.Errorf("%s: two drawings differ", tc.name)
		}
	}
	// Each score with a standard error draws a bar: the log predictive,
	// the accuracy and the gap of 4 L, 2 chains (the gap of chain 1 only).
	with, err := Selection(selectionRows(2, 0.01, true), 0.9)
	if err != nil {
		t.Fatal(err)
	}
	without, err := Selection(selectionRows(2, 0, true), 0.9)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := svgText(t, with)
	b, _ := svgText(t, without)
	if bars := 4*2 + 4*2 + 4; a["path"]-b["path"] < bars {
		t.Errorf("%d paths with standard errors, %d without: want %d bars or more", a["path"], b["path"], bars)
	}
}

func TestTraces(t *testing.T) {
	t.Parallel()
	var traces []Trace
	for _, L := range []int{2, 3} {
		for c := 1; c <= 2; c++ {
			tr := Trace{L: L, Chain: c}
			for s := 1; s <= 30; s++ {
				phase := rundir.PhaseSample
				if s <= 10 {
					phase = rundir.PhaseBurnIn
				}
				tr.Rows = append(tr.Rows, rundir.TraceRow{Sweep: int64(s), Phase: phase, LogLik: -100 + float64(s), Lambda: math.NaN(), Dropout: 0.3, Background: 0.01})
			}
			traces = append(traces, tr)
		}
	}
	svg, err := Traces(traces)
	if err != nil {
		t.Fatal(err)
	}
	_, text := svgText(t, svg)
	for _, w := range []string{"log-likelihood", "log-likelihood, samples", "dropout P(x=0 | covered)", "L = 2", "L = 3", "chain 2"} {
		if !strings.Contains(text, w) {
			t.Errorf("no %q in the traces", w)
		}
	}
	if strings.Contains(text, "λ") {
		t.Error("a λ column without λ")
	}
	if svg, err = Traces(nil); err != nil {
		t.Fatal(err)
	} else if _, text := svgText(t, svg); !strings.Contains(text, "no traces") {
		t.Error("no traces: the figure does not say so")
	}
}

// TestEvaluate draws the ROC and calibration figures of a hand case, a
// series with no predictions, and none.
func TestEvaluate(t *testing.T) {
	t.Parallel()
	tally := evaluate.NewTally(10)
	for _, c := range []struct {
		p float64
		y bool
	}{{0.9, true}, {0.8, true}, {0.7, true}, {0.7, false}, {0.6, true}, {0.55, false}, {0.4, true}, {0.3, false}, {0.2, false}, {0.1, false}} {
		tally.Add(c.p, c.y)
	}
	ss := []evaluate.Series{{Name: "L=5 chain 1", Tally: tally}, {Name: "L=5 <chain 2>", Tally: evaluate.NewTally(10)}}
	for _, tc := range []struct {
		name string
		draw func() ([]byte, error)
		want string
	}{
		{"roc", func() ([]byte, error) { return ROC("ROC", ss) }, "L=5 chain 1 (AUC 0.860)"},
		{"calibration", func() ([]byte, error) { return Calibration("calibration", ss) }, "observed frequency"},
		{"empty", func() ([]byte, error) { return ROC("empty", nil) }, "no predictions of both outcomes"},
	} {
		svg, err := tc.draw()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if _, text := svgText(t, svg); !strings.Contains(text, tc.want) {
			t.Errorf("%s: no %q in the figure", tc.name, tc.want)
		}
	}
}

// TestThin checks that a curve keeps its ends and drops points too close
// to draw apart.
func TestThin(t *testing.T) {
	xs, ys := make([]float64, 10001), make([]float64, 10001)
	for i := range xs {
		xs[i], ys[i] = float64(i)/10000, math.Sqrt(float64(i)/10000)
	}
	tx, ty := thin(xs, ys)
	if len(tx) > 2000 || tx[0] != 0 || tx[len(tx)-1] != 1 || ty[len(ty)-1] != 1 {
		t.Errorf("thinned to %d points from %v to %v", len(tx), tx[0], tx[len(tx)-1])
	}
}

// TestCompactTicks: tick labels carry as many digits as tell them apart.
func TestCompactTicks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lo, hi float64
		want   string // one of the labels
	}{
		{-2.2005e9, -2.2000e9, "-2.2003G"},
		{0, 1.3e6, "800k"},
		{0.31, 0.49, "0.4"},
		{-43000, -37000, "-40k"},
		{0, 1500, "1000"},
	} {
		var labels []string
		seen := map[string]bool{}
		for _, tk := range (compactTicks{}).Ticks(tc.lo, tc.hi) {
			if tk.Label == "" {
				continue
			}
			if seen[tk.Label] {
				t.Errorf("[%v, %v]: label %q twice", tc.lo, tc.hi, tk.Label)
			}
			seen[tk.Label] = true
			labels = append(labels, tk.Label)
		}
		if !seen[tc.want] {
			t.Errorf("[%v, %v]: labels %v, want %q among them", tc.lo, tc.hi, labels, tc.want)
		}
	}
}

func TestSecondLabel(t *testing.T) {
	top := []string{"CST3", "LYZ", "S100A9", "CFD", "CD68"}
	for _, c := range []struct {
		in   HierarchyNode
		px   float64
		want string
	}{
		{HierarchyNode{Top: top}, 300, "CST3 LYZ S100A9 CFD CD68"},
		{HierarchyNode{Top: top}, textWidth("CST3 LYZ S100A9"), "CST3 LYZ S100A9"}, // genes whole or not at all
		{HierarchyNode{Top: top}, textWidth("CST3 LYZ S100A9") - 1, "CST3 LYZ"},
		{HierarchyNode{Top: top}, 20, ""},
		{HierarchyNode{}, 300, ""},
		{HierarchyNode{Top: top, Term: "Monocyte (GO:0000001)", AdjP: "1e-09"}, 300, "Monocyte · 1e-09"}, // a term wins
		{HierarchyNode{Top: top, Term: "Classical monocyte", AdjP: "1e-09"}, 12 * hierCharPx, "Classical m…"},
	} {
		if got := secondLabel(c.in, c.px); got != c.want {
			t.Errorf("secondLabel(%+v, %g) = %q, want %q", c.in, c.px, got, c.want)
		}
	}
	// Capitals and digits are wider than the average character.
	if a, b := textWidth("CD79A"), textWidth("genes"); a <= b {
		t.Errorf("textWidth(CD79A) = %g, not above textWidth(genes) = %g", a, b)
	}
}
