package enrich

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tableLinker is a Linker that returns given posterior means per pair of
// L (keyed by the coarse program's L) and records the sets it was given.
type tableLinker struct {
	p     map[int][][]float64
	calls [][2][][]int
}

func (tl *tableLinker) link(_ context.Context, coarse, fine [][]int, D int) ([][]float64, error) {
	tl.calls = append(tl.calls, [2][][]int{coarse, fine})
	L := len(coarse) // the fixtures below have L programs at each L
	if tl.p[L] == nil {
		return nil, errors.New("no table")
	}
	return tl.p[L], nil
}

// TestHierarchyFixedCodesEvents builds the hierarchy from given link
// probabilities: two programs that split one, a program that two others
// are each made up of alone (merge; its parent is the likelier link), a
// program without a link ≥ ½ (new), and checks the sets handed to the
// linker, the edges and their link probabilities.
func TestHierarchyFixedCodesEvents(t *testing.T) {
	t.Parallel()
	prog := func(L, code int, genes []int) Program {
		return Program{L: L, Code: code, Status: StatusProgram, Genes: genes}
	}
	levels := []*Level{
		{L: 3, Programs: []Program{prog(3, 1, span(0, 10)), prog(3, 2, span(10, 20)), prog(3, 3, span(20, 28))}},
		{L: 4, Programs: []Program{prog(4, 1, span(0, 5)), prog(4, 2, span(5, 10)), prog(4, 3, span(10, 30)),
			prog(4, 4, span(40, 45))}},
	}
	tl := &tableLinker{p: map[int][][]float64{3: {
		{0.9, 0.8, 0.1, 0},
		{0, 0, 0.7, 0},
		{0, 0, 0.6, 0.49},
	}}}
	h, err := BuildHierarchyFixedCodes(context.Background(), levels, 50, tl.link)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.calls) != 1 || !slices.Equal(tl.calls[0][0][2], span(20, 28)) || len(tl.calls[0][1]) != 4 ||
		!slices.Equal(tl.calls[0][1][3], span(40, 45)) {
		t.Fatalf("linker called with %v", tl.calls)
	}
	type row struct {
		name, event, parent string
		link                float64
		parents             []string
	}
	var got []row
	for _, n := range h.Nodes[3:] {
		got = append(got, row{n.Name(), string(n.Event), n.Parent, n.Link, n.Parents})
	}
	want := []row{
		{"L04_code1", "split", "L03_code1", 0.9, []string{"L03_code1"}},
		{"L04_code2", "split", "L03_code1", 0.8, []string{"L03_code1"}},
		{"L04_code3", "merge", "L03_code2", 0.7, []string{"L03_code2", "L03_code3"}},
		{"L04_code4", "new", "", math.NaN(), nil},
	}
	if len(got) != len(want) {
		t.Fatalf("nodes %+v, want %+v", got, want)
	}
	for i, w := range want {
		g := got[i]
		if g.name != w.name || g.event != w.event || g.parent != w.parent || !slices.Equal(g.parents, w.parents) ||
			!(g.link == w.link || math.IsNaN(g.link) && math.IsNaN(w.link)) {
			t.Errorf("node %d: %+v, want %+v", i, g, w)
		}
	}
	if n := h.Nodes[5]; n.Containment != 0.5 || n.Jaccard != 0.5 {
		t.Errorf("merge: containment %v, Jaccard %v; want 0.5, 0.5", n.Containment, n.Jaccard)
	}
	wantEdges := []Edge{
		{"L03_code1", "L04_code1", 5, 1, 0.5, 0.5, 0.9},
		{"L03_code1", "L04_code2", 5, 1, 0.5, 0.5, 0.8},
		{"L03_code2", "L04_code3", 10, 0.5, 1, 0.5, 0.7},
		{"L03_code3", "L04_code3", 8, 0.4, 1, 0.4, 0.6},
	}
	if h.Method != HierarchyFixedCodes || !slices.Equal(h.Edges, wantEdges) {
		t.Errorf("%s edges %+v\nwant %+v", h.Method, h.Edges, wantEdges)
	}
}

// TestHierarchyFixedCodesParentTies: between equally likely links the
// parent is the program holding more of the genes.
func TestHierarchyFixedCodesParentTies(t *testing.T) {
	t.Parallel()
	levels := []*Level{
		{L: 2, Programs: []Program{{L: 2, Code: 1, Status: StatusProgram, Genes: span(0, 12)},
			{L: 2, Code: 2, Status: StatusProgram, Genes: span(4, 10)}}},
		{L: 3, Programs: []Program{{L: 3, Code: 1, Status: StatusProgram, Genes: span(2, 10)},
			{L: 3, Code: 2, Status: StatusProgram, Genes: span(10, 12)}, {L: 3, Code: 3, Status: StatusProgram, Genes: span(0, 2)}}},
	}
	tl := &tableLinker{p: map[int][][]float64{2: {{1, 1, 1}, {1, 0, 0}}}}
	h, err := BuildHierarchyFixedCodes(context.Background(), levels, 12, tl.link)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range h.Nodes {
		if n.Name() == "L03_code1" && (n.Parent != "L02_code1" || n.Containment != 1 || n.Event != EventSplit) {
			t.Errorf("%s: %s under %s (containment %v), want split under L02_code1 (containment 1)", n.Name(), n.Event, n.Parent, n.Containment)
		}
	}
}

// TestHierarchyFixedCodesLinkerErrors: a linker's error, and an answer of
// the wrong shape or outside [0, 1], stop the hierarchy with the L named.
func TestHierarchyFixedCodesLinkerErrors(t *testing.T) {
	t.Parallel()
	levels := []*Level{
		{L: 2, Programs: []Program{{L: 2, Code: 1, Status: StatusProgram, Genes: span(0, 5)}, {L: 2, Code: 2, Status: StatusProgram, Genes: span(5, 9)}}},
		{L: 3, Programs: []Program{{L: 3, Code: 1, Status: StatusProgram, Genes: span(0, 5)}}},
	}
	tests := []struct {
		name string
		p    [][]float64
		want string
	}{
		{"error", nil, "from L = 2 to 3: no table"},
		{"rows", [][]float64{{1}}, "1 rows for 2 programs"},
		{"columns", [][]float64{{1}, {1, 0}}, "2 links for program 1, want 1"},
		{"NaN", [][]float64{{1}, {math.NaN()}}, "NaN, outside [0, 1]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := &tableLinker{p: map[int][][]float64{}}
			if tc.p != nil {
				tl.p[2] = tc.p
			}
			_, err := BuildHierarchyFixedCodes(context.Background(), levels, 9, tl.link)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestRunFixedCodes runs enrich on the fixture with a linker that links
// the monocyte program of L = 2 to its two halves at L = 3: the outputs
// carry the method and the links, the log says which method, and
// ReadOutput reads it back; a method without a linker, or an unknown one,
// is refused.
func TestRunFixedCodes(t *testing.T) {
	t.Parallel()
	run, _, dir := fixture(t)
	o := DefaultOptions()
	o.Run, o.Out, o.Hierarchy = run, filepath.Join(dir, "out"), HierarchyFixedCodes
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "needs a Linker") {
		t.Fatalf("fixed codes without a linker: err = %v", err)
	}
	bad := o
	bad.Hierarchy = "nearest"
	if _, err := Run(context.Background(), bad); err == nil || !strings.Contains(err.Error(), `hierarchy "nearest"`) {
		t.Fatalf("unknown method: err = %v", err)
	}
	// L = 2: T cell, monocyte; L = 3: T cell, mono1, mono2; L = 4: T cell,
	// monocyte, B cell (and an unused code).
	tl := &tableLinker{p: map[int][][]float64{
		2: {{0.97, 0, 0}, {0, 0.95, 0.9}},
		3: {{1, 0, 0}, {0, 0.8, 0}, {0, 0.75, 0.1}},
	}}
	o.Linker = tl.link
	rep, err := Run(context.Background(), o)
	must(t, err)
	if len(tl.calls) != 2 {
		t.Errorf("linker called %d times, want once per pair of L", len(tl.calls))
	}
	events := map[string]Event{}
	for _, n := range rep.Hierarchy.Nodes {
		events[n.Name()] = n.Event
	}
	if events["L03_code2"] != EventSplit || events["L03_code3"] != EventSplit || events["L04_code2"] != EventMerge ||
		events["L04_code3"] != EventNew {
		t.Errorf("events %v", events)
	}
	data, err := os.ReadFile(filepath.Join(o.Out, HierarchyJSON))
	must(t, err)
	var js struct {
		Method string
		Edges  []struct {
			From, To string
			Link     *float64
		}
	}
	must(t, json.Unmarshal(data, &js))
	if js.Method != "fixed-codes" || len(js.Edges) != 6 || js.Edges[0].Link == nil || *js.Edges[0].Link != 0.97 {
		t.Errorf("hierarchy.json: method %q, edges %+v", js.Method, js.Edges)
	}
	tsvData, err := os.ReadFile(filepath.Join(o.Out, HierarchyTSV))
	must(t, err)
	lines := strings.Split(string(tsvData), "\n")
	if !strings.HasSuffix(lines[0], "\tlink") || !strings.HasSuffix(lines[1], "\tNA") || !strings.Contains(string(tsvData), "L03_code2\t2\t4\tsplit\tL02_code2\t1\t0.5\tL02_code2\tL04_code2\t0.95\n") {
		t.Errorf("%s:\n%s", HierarchyTSV, tsvData)
	}
	out, err := ReadOutput(o.Out)
	must(t, err)
	if out.Hierarchy != HierarchyFixedCodes {
		t.Errorf("ReadOutput: hierarchy %q", out.Hierarchy)
	}
}
