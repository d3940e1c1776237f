package figure

import (
	"strings"
	"testing"
)

// TestHierarchyControlCharacters: symbols and terms holding characters
// XML does not allow (\x01, ESC, \x0b, an invalid byte) still give a
// well-formed figure (issue 44 item 8: expat failed at line 9, and
// Chromium showed "This page contains the following errors"), with
// markup escaped and the rest of the text kept.
func TestHierarchyControlCharacters(t *testing.T) {
	t.Parallel()
	nodes := []HierarchyNode{
		{Name: "L2.1", L: 2, Code: 1, Genes: 10, Top: []string{"CD3\x01E", "LYZ\x1b[31m"}, Title: "L2.1: CD3\x01E, <b>&"},
		{Name: "L3.1", L: 3, Code: 1, Genes: 6, Parent: "L2.1", Term: "T cell\x0b\xe9 markers", AdjP: "0.01", Title: "term \x0b"},
	}
	edges := []HierarchyEdge{{From: "L2.1", To: "L3.1", Shared: 5, Title: "shared\x01"}}
	svg, _ := Hierarchy(nodes, edges)
	_, text := svgText(t, svg)
	for _, want := range []string{"CD3\uFFFDE", "T cell\uFFFD\uFFFD markers", "<b>&"} {
		if !strings.Contains(text, want) {
			t.Errorf("the figure's text lacks %q", want)
		}
	}
}
