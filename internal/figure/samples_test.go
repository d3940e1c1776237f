package figure

import (
	"bytes"
	"encoding/xml"
	"testing"

	"scpipe/internal/rundir"
)

// TestSampleShares draws a fit's programs per sample: a legend entry per
// sample, program labels starred where sample-specific, valid SVG.
func TestSampleShares(t *testing.T) {
	t.Parallel()
	var rows []rundir.SampleUsage
	for code := 1; code <= 3; code++ {
		for s, name := range []string{"donorA", "donorB"} {
			share := 0.3
			if code == 3 {
				share = float64(1 - s) // only donorA's cells
			}
			rows = append(rows, rundir.SampleUsage{L: 3, Chain: 1, Code: code, Sample: name, SampleCells: 100, Using: int(100 * share), Share: share, SampleSpecific: code == 3})
		}
	}
	svg, err := SampleShares(rows)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(svg, new(struct{})); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	for _, want := range []string{"donorA", "donorB", ">3*<", ">1<", "sample-specific: biology or a batch effect?"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("the figure does not show %q", want)
		}
	}
	if bytes.Contains(svg, []byte(">1*<")) {
		t.Error("program 1, shared by both samples, starred")
	}
	if _, err := SampleShares(nil); err == nil {
		t.Error("an empty table drawn")
	}
}
