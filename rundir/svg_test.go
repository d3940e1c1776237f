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
// chain 3 has no held-out log predictive at L = 6 (a gap in its line).
func selectionFixture() []SelectionPoint {
	var pts []SelectionPoint
	for chain := 1; chain <= 3; chain++ {
		for L := 2; L <= 10; L++ {
			d := float64(L - 6)
			p := SelectionPoint{
				L: L, Chain: chain,
				HeldoutAccuracy: 0.93 - 0.004*d*d + 0.003*float64(chain),
				HeldoutLogPred:  -0.21 - 0.006*d*d - 0.004*float64(chain),
			}
			if chain == 3 && L == 6 {
				p.HeldoutLogPred = math.NaN()
			}
			pts = append(pts, p)
		}
	}
	return pts
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
// well-formed XML with one line per chain that has two or more scores.
func TestSelectionSVGWellFormed(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	many := make([]SelectionPoint, 0, 20)
	for chain := 1; chain <= 10; chain++ {
		many = append(many, SelectionPoint{2, chain, 0.8, -0.4}, SelectionPoint{3, chain, 0.81 + 0.001*float64(chain), -0.39})
	}
	for _, tc := range []struct {
		name      string
		points    []SelectionPoint
		polylines int
		noData    int // panels saying there is nothing to draw
	}{
		{"no points", nil, 0, 2},
		{"one fit", []SelectionPoint{{5, 1, 0.9, -0.2}}, 0, 0},
		{"no held-out entries", []SelectionPoint{{2, 1, nan, nan}, {3, 1, nan, nan}}, 0, 2},
		{"equal values", []SelectionPoint{{2, 1, 0.5, -1}, {3, 1, 0.5, -1}}, 2, 0},
		{"ten chains", many, 20, 0},
		{"wide L range", []SelectionPoint{{2, 1, 0.5, -1}, {60, 1, 0.6, -0.9}}, 2, 0},
	} {
		var b bytes.Buffer
		renderSelection(&b, tc.points)
		dec := xml.NewDecoder(bytes.NewReader(b.Bytes()))
		polylines := 0
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: not well-formed XML: %v\n%s", tc.name, err, b.String())
			}
			if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
				polylines++
			}
		}
		if polylines != tc.polylines {
			t.Errorf("%s: %d polylines, want %d", tc.name, polylines, tc.polylines)
		}
		if n := strings.Count(b.String(), "no held-out entries"); n != tc.noData {
			t.Errorf("%s: %d empty panels, want %d", tc.name, n, tc.noData)
		}
		if strings.Contains(b.String(), "NaN") || strings.Contains(b.String(), "Inf") {
			t.Errorf("%s: NaN or Inf in the SVG", tc.name)
		}
	}
}
