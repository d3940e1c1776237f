package rundir

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// selectionFixture is three chains over L = 2..10 with a peak in the middle;
// chain 3 has no held-out log predictive at L = 6 (a gap in its line), and
// chain 2 no standard error at L = 2 (no bar).
func selectionFixture() SelectionFigure {
	fig := SelectionFigure{Recommended: 5, MinAgreement: 0.9}
	for chain := 1; chain <= 3; chain++ {
		for L := 2; L <= 10; L++ {
			d := float64(L - 6)
			p := SelectionPoint{
				L: L, Chain: chain,
				HeldoutAccuracy: 0.93 - 0.004*d*d + 0.003*float64(chain), HeldoutAccuracySE: 0.002 + 0.0002*float64(L),
				HeldoutLogPred: -0.21 - 0.006*d*d - 0.004*float64(chain), HeldoutLogPredSE: 0.003,
				LogPredGap: 0.006 * d * d, LogPredGapSE: 0.0005 * math.Abs(d), LogPredTolerance: max(0.0005*math.Abs(d), 0.0065),
				Agreement: 1 - 0.04*float64((chain-1)*(L-2)), Programs: L, StablePrograms: max(0, L-(L-2)*(L-2)/4),
			}
			if chain == 3 && L == 6 {
				p.HeldoutLogPred = math.NaN()
			}
			if chain == 2 && L == 2 {
				p.HeldoutLogPredSE = math.NaN()
			}
			fig.Points = append(fig.Points, p)
		}
	}
	return fig
}

// pt is a point with held-out scores only, on one chain's line.
func pt(L, chain int, acc, logpred float64) SelectionPoint {
	nan := math.NaN()
	return SelectionPoint{L: L, Chain: chain, HeldoutAccuracy: acc, HeldoutLogPred: logpred,
		HeldoutAccuracySE: nan, HeldoutLogPredSE: nan, LogPredGap: nan, LogPredGapSE: nan, LogPredTolerance: nan,
		Agreement: nan, Programs: -1, StablePrograms: -1}
}

func TestSelectionSVGGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), SelectionFile)
	if err := WriteSelectionSVG(path, selectionFixture()); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "selection.golden.svg")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./rundir -run SelectionSVGGolden -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("selection.svg differs from %s; if the change is intended, rerun with -update and look at the picture", golden)
	}
}

// TestSelectionSVGWellFormed renders edge cases and checks that each is
// well-formed XML with one line per chain that has two or more scores, an
// error bar per score with a standard error, the recommended L marked
// once per panel, and the stable programs above each L.
func TestSelectionSVGWellFormed(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	many := make([]SelectionPoint, 0, 20)
	for chain := 1; chain <= 10; chain++ {
		many = append(many, pt(2, chain, 0.8, -0.4), pt(3, chain, 0.81+0.001*float64(chain), -0.39))
	}
	withSE := func(p SelectionPoint, accSE, lpSE float64) SelectionPoint {
		p.HeldoutAccuracySE, p.HeldoutLogPredSE = accSE, lpSE
		return p
	}
	twoChains := []SelectionPoint{
		withSE(pt(2, 1, 0.8, -0.4), 0.01, 0.02), withSE(pt(3, 1, 0.82, -0.38), 0.01, nan),
		withSE(pt(2, 2, 0.8, -0.41), 0, 0.02), withSE(pt(3, 2, 0.83, -0.37), 0.01, 0.02),
	}
	for i := range twoChains {
		twoChains[i].Programs, twoChains[i].StablePrograms = 2+i%2, 1+i%2
		twoChains[i].Agreement = []float64{1, 1, 0.7, 0.95}[i]
		// L = 3 is the best; L = 2 falls short by 0.02 ± 0.005.
		twoChains[i].LogPredGap = []float64{0.02, 0, 0.02, 0}[i]
		twoChains[i].LogPredGapSE = []float64{0.005, 0, 0.005, 0}[i]
		twoChains[i].LogPredTolerance = []float64{0.005, 0.001, 0.005, 0.001}[i]
	}
	for _, tc := range []struct {
		name        string
		fig         SelectionFigure
		polylines   int
		bars        int
		noData      int // held-out panels (of three) saying there is nothing to draw
		recommended int // dashed lines marking the recommended L
		stable      []string
	}{
		{"no points", SelectionFigure{}, 0, 0, 3, 0, nil},
		{"one fit", SelectionFigure{Points: []SelectionPoint{pt(5, 1, 0.9, -0.2)}, Recommended: 5}, 0, 0, 1, 4, nil},
		{"no held-out entries", SelectionFigure{Points: []SelectionPoint{pt(2, 1, nan, nan), pt(3, 1, nan, nan)}}, 0, 0, 3, 0, nil},
		{"equal values", SelectionFigure{Points: []SelectionPoint{pt(2, 1, 0.5, -1), pt(3, 1, 0.5, -1)}}, 2, 0, 1, 0, nil},
		{"ten chains", SelectionFigure{Points: many}, 20, 0, 1, 0, nil},
		{"wide L range", SelectionFigure{Points: []SelectionPoint{pt(2, 1, 0.5, -1), pt(60, 1, 0.6, -0.9)}}, 2, 0, 1, 0, nil},
		// Three bars of accuracy (a zero SE draws none), three of log
		// predictive (a NaN SE draws none) and one of the gap (chain 1's
		// only, and none at the best L); lines: two chains' log predictive
		// and accuracy, the gap and its tolerance, chain 2's agreement.
		{"two chains with errors", SelectionFigure{Points: twoChains, Recommended: 3, MinAgreement: 0.9}, 7, 7, 0, 4, []string{">1/2<", ">2/3<"}},
	} {
		var b bytes.Buffer
		renderSelection(&b, tc.fig)
		dec := xml.NewDecoder(bytes.NewReader(b.Bytes()))
		polylines, bars, dashed := 0, 0, 0
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: not well-formed XML: %v\n%s", tc.name, err, b.String())
			}
			se, ok := tok.(xml.StartElement)
			if !ok {
				continue
			}
			switch se.Name.Local {
			case "polyline":
				polylines++
			case "path":
				bars++
			case "line":
				for _, a := range se.Attr {
					if a.Name.Local == "stroke-dasharray" && a.Value == "6 4" {
						dashed++
					}
				}
			}
		}
		if polylines != tc.polylines || bars != tc.bars || dashed != tc.recommended {
			t.Errorf("%s: %d polylines, %d error bars, %d recommended marks; want %d, %d, %d",
				tc.name, polylines, bars, dashed, tc.polylines, tc.bars, tc.recommended)
		}
		if n := strings.Count(b.String(), "no held-out entries"); n != tc.noData {
			t.Errorf("%s: %d empty panels, want %d", tc.name, n, tc.noData)
		}
		for _, want := range tc.stable {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s: no %s stable programs in the figure", tc.name, want)
			}
		}
		if strings.Contains(b.String(), "NaN") || strings.Contains(b.String(), "Inf") {
			t.Errorf("%s: NaN or Inf in the SVG", tc.name)
		}
	}
}
