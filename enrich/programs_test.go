package enrich

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"scpipe/internal/rundir"
	"scpipe/internal/stats/codematch"
)

// fakeChain is a chain whose code k holds the genes codes[k] (posterior
// mean 0.9, others 0.1) and is used by the cells usage[k].
func fakeChain(chain, D, N int, codes, usage [][]int) *chainFit {
	L := len(codes)
	c := &chainFit{chain: chain, mean: make([]float64, D*L), nCell: N,
		genes: make([]codematch.Set, L), cells: make([]codematch.Set, L)}
	for i := range c.mean {
		c.mean[i] = 0.1
	}
	for k := range L {
		c.genes[k], c.cells[k] = codematch.NewSet(D), codematch.NewSet(N)
		for _, n := range usage[k] {
			c.cells[k].Add(n)
		}
		for _, g := range codes[k] {
			c.mean[g*L+k] = 0.9
			if len(usage[k]) > 0 {
				c.genes[k].Add(g)
			}
		}
	}
	return c
}

func span(lo, hi int, extra ...int) []int {
	var s []int
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return append(s, extra...)
}

func testGenes(D int) Genes {
	ids, names := make([]string, D), make([]string, D)
	for g := range D {
		ids[g], names[g] = fmt.Sprintf("ENSG%02d", g), fmt.Sprintf("G%d", g)
	}
	return NewGenes(ids, names)
}

// TestConsensus matches three chains whose codes come in different orders
// and differ by a gene, and checks the consensus by hand.
func TestConsensus(t *testing.T) {
	t.Parallel()
	const D, N = 20, 10
	A, B := span(0, 6, 9), span(6, 10) // programs sharing gene 9
	chains := []*chainFit{
		fakeChain(1, D, N, [][]int{A, B, span(0, 20)}, [][]int{{0, 1, 2}, {5, 6}, nil}),  // code 3 unused: its genes do not count
		fakeChain(2, D, N, [][]int{B, span(0, 5, 9), nil}, [][]int{{5, 6}, {0, 1}, nil}), // A without gene 5
		fakeChain(3, D, N, [][]int{B, nil, span(0, 6, 9, 10)}, [][]int{{5, 6, 7}, nil, {1, 2, 3}}),
	}
	lv := consensus(3, chains, testGenes(D), testSets)
	if !slices.Equal(lv.Chains, []int{1, 2, 3}) || lv.Cells != N || len(lv.Programs) != 3 {
		t.Fatalf("level: chains %v, %d cells, %d programs", lv.Chains, lv.Cells, len(lv.Programs))
	}
	a, b, u := lv.Programs[0], lv.Programs[1], lv.Programs[2]
	// A: genes 0-4 and 9 in all three chains, 5 in chains 1 and 3, 10 only in chain 3.
	if a.Status != StatusProgram || !slices.Equal(a.Genes, A) {
		t.Errorf("A: %s genes %v, want program %v", a.Status, a.Genes, A)
	}
	wantSupport := []float64{1, 1, 1, 1, 1, 2.0 / 3, 1}
	if !slices.Equal(a.Support, wantSupport) || math.Abs(a.Mean[5]-(0.9+0.1+0.9)/3) > 1e-15 || a.Mean[0] != 0.9 {
		t.Errorf("A: support %v (want %v), means %v", a.Support, wantSupport, a.Mean)
	}
	if want := (6.0/7 + 7.0/8) / 2; math.Abs(a.Stability-want) > 1e-15 {
		t.Errorf("A: stability %v, want %v", a.Stability, want)
	}
	// Cells: 0 in chains 1, 2; 1 in all; 2 in 1, 3; 3 only in chain 3.
	if a.Cells != 3 || a.CellFrac != 0.3 {
		t.Errorf("A: %d cells (%v), want 3 (0.3)", a.Cells, a.CellFrac)
	}
	wantChains := []ChainCode{
		{Chain: 1, Code: 1, Jaccard: 1, Genes: 7, Unique: 6, Cells: 3},
		{Chain: 2, Code: 2, Jaccard: 6.0 / 7, Genes: 6, Unique: 5, Cells: 2},
		{Chain: 3, Code: 3, Jaccard: 7.0 / 8, Genes: 8, Unique: 7, Cells: 3},
	}
	if !slices.Equal(a.Chains, wantChains) {
		t.Errorf("A: chains %+v, want %+v", a.Chains, wantChains)
	}
	if b.Status != StatusProgram || !slices.Equal(b.Genes, B) || b.Stability != 1 || b.Cells != 2 {
		t.Errorf("B: %s genes %v stability %v cells %d", b.Status, b.Genes, b.Stability, b.Cells)
	}
	if !slices.Equal(a.Unique, span(0, 6)) || !slices.Equal(b.Unique, span(6, 9)) {
		t.Errorf("unique: A %v, B %v; want genes other than the shared 9", a.Unique, b.Unique)
	}
	if u.Status != StatusUnused || len(u.Genes) != 0 || u.Cells != 0 || u.Name() != "L03_code3" {
		t.Errorf("unused code: %s %s genes %v cells %d", u.Name(), u.Status, u.Genes, u.Cells)
	}
	if !a.Stable() || !b.Stable() || u.Stable() {
		t.Errorf("stable: A %v, B %v, the unused code %v; want true, true, false", a.Stable(), b.Stable(), u.Stable())
	}
}

// TestStableMatchesSummary checks that the programs enrich calls stable
// are those summary.tsv names (codematch.StablePrograms on the same gene
// sets), on random chains whose codes are the first chain's shuffled and
// moved by a random share of their genes.
func TestStableMatchesSummary(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(11, 12))
	const D, N, L = 120, 30, 5
	stable := 0
	for trial := range 50 {
		var chains []*chainFit
		for c := range 3 {
			codes, usage := make([][]int, L), make([][]int, L)
			order := r.Perm(L)
			for k := range L {
				lo := 20 * order[k]
				shift := 0
				if c > 0 {
					shift = r.IntN(12) // up to 12 of 20 genes moved: Jaccard from 8/32
				}
				codes[k] = span(lo+shift, lo+20+shift)
				if trial%5 != 0 || order[k] != 0 { // program 1 unused in every fifth trial
					usage[k] = []int{order[k], order[k] + L}
				}
			}
			chains = append(chains, fakeChain(c+1, D, N, codes, usage))
		}
		lv := consensus(L, chains, testGenes(D), testSets)
		var sets [][]codematch.Set
		for _, ch := range chains {
			sets = append(sets, ch.genes)
		}
		want := codematch.StablePrograms(sets).Codes[0]
		var got []int
		for k, p := range lv.Programs {
			if p.Stable() {
				got = append(got, k)
			}
		}
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("trial %d: enrich's stable programs %v, summary's %v", trial, got, want)
		}
		stable += len(got)
	}
	if stable == 0 || stable == 50*L {
		t.Errorf("%d stable programs of %d: the trials do not test both kinds", stable, 50*L)
	}
}

// TestConsensusOneChain: the consensus of one chain is the chain, with no
// stability.
func TestConsensusOneChain(t *testing.T) {
	t.Parallel()
	c := fakeChain(4, 10, 5, [][]int{{1, 2, 3}, {4}}, [][]int{{0}, {1, 2}})
	lv := consensus(2, []*chainFit{c}, testGenes(10), testSets)
	p := lv.Programs[0]
	if !slices.Equal(p.Genes, []int{1, 2, 3}) || !math.IsNaN(p.Stability) || p.Stable() || p.Cells != 1 || p.Chains[0].Chain != 4 {
		t.Errorf("program %+v", p)
	}
}

// TestHierarchy links hand-made programs over three L: a program that
// continues, one that splits in two, their merge back, a new program with a
// stray shared gene, and an unused code. The codes of L = 3 are numbered
// out of the hierarchy's order, so that L = 4 is linked to a reordered level.
func TestHierarchy(t *testing.T) {
	t.Parallel()
	prog := func(L, code int, genes []int) Program {
		return Program{L: L, Code: code, Status: StatusProgram, Genes: genes}
	}
	levels := []*Level{
		{L: 2, Programs: []Program{prog(2, 1, span(0, 10)), prog(2, 2, span(10, 20))}},
		{L: 3, Programs: []Program{prog(3, 1, span(15, 20)), prog(3, 2, span(0, 10)), prog(3, 3, span(10, 15))}},
		{L: 4, Programs: []Program{prog(4, 1, span(10, 20)), prog(4, 2, span(0, 10)), prog(4, 3, span(20, 25, 0)),
			{L: 4, Code: 4, Status: StatusUnused}}},
	}
	h := BuildHierarchy(levels, 25)
	type row struct {
		name, event, parent string
		order               int
		parents, children   []string
	}
	var got []row
	for _, n := range h.Nodes {
		got = append(got, row{n.Name(), string(n.Event), n.Parent, n.Order, n.Parents, n.Children})
	}
	want := []row{
		{"L02_code1", "root", "", 0, nil, []string{"L03_code2"}},
		{"L02_code2", "root", "", 1, nil, []string{"L03_code1", "L03_code3"}},
		{"L03_code2", "continues", "L02_code1", 0, []string{"L02_code1"}, []string{"L04_code2"}},
		{"L03_code1", "split", "L02_code2", 1, []string{"L02_code2"}, []string{"L04_code1"}},
		{"L03_code3", "split", "L02_code2", 2, []string{"L02_code2"}, []string{"L04_code1"}},
		{"L04_code2", "continues", "L03_code2", 0, []string{"L03_code2"}, nil},
		{"L04_code1", "merge", "L03_code1", 1, []string{"L03_code1", "L03_code3"}, nil},
		{"L04_code3", "new", "", 2, nil, nil}, // shares gene 0 with L03_code2: 1/6 and 1/10, no link
	}
	if len(got) != len(want) {
		t.Fatalf("nodes %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.name != w.name || g.event != w.event || g.parent != w.parent || g.order != w.order ||
			!slices.Equal(g.parents, w.parents) || !slices.Equal(g.children, w.children) {
			t.Errorf("node %d: %+v, want %+v", i, g, w)
		}
	}
	merge := h.Nodes[6]
	if merge.Containment != 0.5 || merge.Jaccard != 0.5 {
		t.Errorf("merge: containment %v, Jaccard %v; want 0.5, 0.5", merge.Containment, merge.Jaccard)
	}
	if n := h.Nodes[7]; !math.IsNaN(n.Containment) {
		t.Errorf("new program: containment %v, want NaN", n.Containment)
	}
	nan := math.NaN() // overlap infers no link probability
	wantEdges := []Edge{
		{"L02_code1", "L03_code2", 10, 1, 1, 1, nan},
		{"L02_code2", "L03_code1", 5, 1, 0.5, 0.5, nan},
		{"L02_code2", "L03_code3", 5, 1, 0.5, 0.5, nan},
		{"L03_code2", "L04_code2", 10, 1, 1, 1, nan},
		{"L03_code1", "L04_code1", 5, 0.5, 1, 0.5, nan},
		{"L03_code3", "L04_code1", 5, 0.5, 1, 0.5, nan},
	}
	if h.Method != HierarchyOverlap || !slices.EqualFunc(h.Edges, wantEdges, sameEdge) {
		t.Errorf("edges %+v\nwant %+v", h.Edges, wantEdges)
	}
	// Genes by the programs of L=2, then of L=3 (15-19 is L03_code1, ordered
	// before L03_code3), then the genes only L=4 has.
	wantGenes := slices.Concat(span(0, 10), span(15, 20), span(10, 15), span(20, 25))
	if !slices.Equal(h.GeneOrder, wantGenes) {
		t.Errorf("gene order %v, want %v", h.GeneOrder, wantGenes)
	}
	for _, n := range h.Nodes {
		if n.Jaccard > 1 || n.Containment > 1 {
			t.Errorf("%s: containment %v, Jaccard %v above 1", n.Name(), n.Containment, n.Jaccard)
		}
	}
}

// sameEdge reports whether a and b are equal, NaN links alike.
func sameEdge(a, b Edge) bool {
	al, bl := a.Link, b.Link
	a.Link, b.Link = 0, 0
	return a == b && (al == bl || math.IsNaN(al) && math.IsNaN(bl))
}

// TestHierarchyNested: a program inside two nested programs of the
// previous L is linked to both but merges neither (the larger one does not
// lie mostly inside it), and its parent is the closer one.
func TestHierarchyNested(t *testing.T) {
	t.Parallel()
	levels := []*Level{
		{L: 2, Programs: []Program{{L: 2, Code: 1, Status: StatusProgram, Genes: span(0, 30)}, {L: 2, Code: 2, Status: StatusProgram, Genes: span(0, 10)}}},
		{L: 3, Programs: []Program{{L: 3, Code: 1, Status: StatusProgram, Genes: span(0, 10)}}},
	}
	h := BuildHierarchy(levels, 30)
	n := h.Nodes[2]
	if n.Event != EventContinues || n.Parent != "L02_code2" || !slices.Equal(n.Parents, []string{"L02_code1", "L02_code2"}) {
		t.Errorf("nested program: event %s, parent %s, parents %v; want continues under L02_code2", n.Event, n.Parent, n.Parents)
	}
}

// TestCountVotes compares the word-wise count of elements in at least half
// of the sets with a count element by element, for every number of sets
// from one to five and sizes at the word boundaries.
func TestCountVotes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 4))
	for C := 1; C <= 5; C++ {
		for _, N := range []int{1, 63, 64, 65, 200} {
			sets := make([]codematch.Set, C)
			for c := range sets {
				sets[c] = codematch.NewSet(N)
				for n := range N {
					if rng.Float64() < 0.4 {
						sets[c].Add(n)
					}
				}
			}
			want := 0
			for n := range N {
				votes := 0
				for _, s := range sets {
					if s.Has(n) {
						votes++
					}
				}
				if votes > 0 && 2*votes >= C {
					want++
				}
			}
			if got := countVotes(sets); got != want {
				t.Errorf("%d sets of %d: %d elements in at least half, want %d", C, N, got, want)
			}
		}
	}
}

// TestReadChainLeavesOutHousekeepingGenes: a gene of the housekeeping code
// sits at ½ in every program (no program's bit for it changes the
// likelihood); it belongs to no program's MAP set, while a gene at ½ that
// the housekeeping code does not hold stays in (the threshold is
// inclusive), and without a housekeeping column nothing changes.
func TestReadChainLeavesOutHousekeepingGenes(t *testing.T) {
	const L, N = 2, 3
	genes := testGenes(4)
	// Gene 0: housekeeping (0.98), ½ in both codes. Gene 1: code 0. Gene 2:
	// housekeeping exactly at the threshold, ½ in code 1. Gene 3: ½ in code
	// 1, housekeeping 0.2.
	u := []float64{0.5, 0.5, 0.9, 0.1, 0.5, 0.5, 0.1, 0.5}
	hk := []float64{0.98, 0.01, 0.5, 0.2}
	z := []float64{0.9, 0.9, 0.9, 0.9, 0.9, 0.9}
	for _, tc := range []struct {
		name         string
		housekeeping []float64
		want         [L][]int
	}{
		{"housekeeping code", hk, [L][]int{{1}, {3}}},
		{"none", nil, [L][]int{{0, 1, 2}, {0, 2, 3}}},
	} {
		dir := t.TempDir()
		must(t, rundir.WriteCodes(filepath.Join(dir, rundir.CodesFile), rundir.Codes{GeneIDs: genes.IDs, GeneNames: genes.Names, L: L, Mean: u, Housekeeping: tc.housekeeping}))
		must(t, rundir.WriteCells(filepath.Join(dir, rundir.CellsFile), rundir.Cells{Barcodes: labels("cell", N), L: L, Mean: z}))
		c, err := readChain(rundir.Fit{L: L, Chain: 1, Dir: dir}, genes, 0.5, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k := range L {
			var got []int
			for g := range genes.Len() {
				if c.genes[k].Has(g) {
					got = append(got, g)
				}
			}
			if !slices.Equal(got, tc.want[k]) {
				t.Errorf("%s: code %d holds genes %v, want %v", tc.name, k, got, tc.want[k])
			}
		}
	}
}

// testSets are the defaults of scpipe enrich's top list and false
// discovery rate.
var testSets = setOptions{top: 100, fdr: 0.05}
