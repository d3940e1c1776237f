package hierarchy

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"scpipe/enrich"
)

// genes returns lo … hi−1 followed by extra.
func genes(lo, hi int, extra ...int) []int {
	var g []int
	for i := lo; i < hi; i++ {
		g = append(g, i)
	}
	return append(g, extra...)
}

// exactLinks returns the posterior means of the links of each coarse set
// given λ, by enumerating every subset of the fine sets: with U fixed and
// a uniform prior, p(z_i | x_i, U, λ) ∝ exp(−λ · the entries of row i that
// the union of the chosen fine sets gets wrong).
func exactLinks(coarse, fine [][]int, D int, lambda float64) [][]float64 {
	member := func(s []int) []bool {
		m := make([]bool, D)
		for _, g := range s {
			m[g] = true
		}
		return m
	}
	fm := make([][]bool, len(fine))
	for j, s := range fine {
		fm[j] = member(s)
	}
	out := make([][]float64, len(coarse))
	for i, s := range coarse {
		x := member(s)
		var total float64
		mean := make([]float64, len(fine))
		for z := range 1 << len(fine) {
			wrong := 0
			for g := range D {
				covered := false
				for j := range fine {
					covered = covered || z>>j&1 == 1 && fm[j][g]
				}
				if covered != x[g] {
					wrong++
				}
			}
			w := math.Exp(-lambda * float64(wrong))
			total += w
			for j := range fine {
				if z>>j&1 == 1 {
					mean[j] += w
				}
			}
		}
		for j := range mean {
			mean[j] /= total
		}
		out[i] = mean
	}
	return out
}

// TestHierarchyLinksExact plants coarse codes over five fine ones and
// compares the sampler's links with the exact posterior means at its λ: a
// union of two fine codes, a fine code alone, a code that is a fine code
// and half of another (a tie: that link's posterior mean is ½), and a
// code that is no union (one fine code, two thirds of another and three
// genes in no fine code), whose links are its best cover, and a code that
// is a fine code but for 7 of its 15 genes (the link's posterior mean is
// σ(λ), as covering it gets one entry fewer wrong). Every gene in no code
// (60 … 89) is left out of the data.
func TestHierarchyLinksExact(t *testing.T) {
	t.Parallel()
	const D = 100
	fine := [][]int{genes(0, 10), genes(10, 20), genes(20, 35), genes(35, 45), genes(45, 60)}
	coarse := [][]int{
		genes(0, 20),                   // A ∪ B
		genes(20, 35),                  // C
		genes(0, 10, genes(35, 40)...), // A and half of D: tie
		genes(10, 30, 90, 91, 92),      // B, two thirds of C, three stray genes
		genes(45, 53),                  // 8 of E's 15 genes: E is one wrong gene better than none
	}
	wantMAP := [][]int{{0, 1}, {2}, nil, {1, 2}, {4}}
	l, err := inferLinks(context.Background(), coarse, fine, D, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if l.Genes != 63 {
		t.Errorf("data of %d genes, want the 63 in some code", l.Genes)
	}
	// Coarse genes outside the data are explained whatever the links, so
	// the exact posterior on the data's genes alone is the same.
	exact := exactLinks(coarse, fine, D, l.Lambda)
	t.Logf("λ = %.3f; links %.3f; exact %.3f", l.Lambda, l.Mean, exact)
	for i := range coarse {
		var MAP []int
		for j, p := range l.Mean[i] {
			if d := math.Abs(p - exact[i][j]); d > 0.08 {
				t.Errorf("coarse %d, fine %d: posterior mean %.3f, exact %.3f at λ = %.3f", i, j, p, exact[i][j], l.Lambda)
			}
			if p >= 0.5 && exact[i][j] > 0.6 {
				MAP = append(MAP, j)
			}
		}
		if wantMAP[i] != nil && !slices.Equal(MAP, wantMAP[i]) {
			t.Errorf("coarse %d: links %v (means %.3f), want %v", i, MAP, l.Mean[i], wantMAP[i])
		}
	}
	if tie := l.Mean[2][3]; math.Abs(tie-0.5) > 0.1 || l.Mean[2][0] < 0.99 {
		t.Errorf("tied link: posterior mean %.3f, want about ½; sure link %.3f", tie, l.Mean[2][0])
	}
	if p, want := l.Mean[4][4], 1/(1+math.Exp(-l.Lambda)); math.Abs(p-want) > 0.05 {
		t.Errorf("link of the part-cover: posterior mean %.3f, want σ(λ) = %.3f", p, want)
	}
	// At the best covers 20 of the 5 × 63 entries are wrong (5 in the tie,
	// 5 + 3 and 7 in the last rows), 21 without the last link: λ, their
	// logit, is set from the last sweep's state.
	lo, hi := math.Log((5*63-21)/21.0), math.Log((5*63-20)/20.0)
	if l.Lambda < lo-1e-9 || l.Lambda > hi+1e-9 {
		t.Errorf("λ = %.4f, want it in [%.4f, %.4f]", l.Lambda, lo, hi)
	}
}

// TestHierarchyLinksReproducible: the links depend on the seed alone, not
// on the workers.
func TestHierarchyLinksReproducible(t *testing.T) {
	t.Parallel()
	fine := [][]int{genes(0, 8), genes(8, 16), genes(4, 12), genes(16, 20)}
	coarse := [][]int{genes(0, 16), genes(4, 20), genes(0, 6, 17)}
	var got [][][]float64
	for _, w := range []int{1, 3, 1} {
		o := DefaultOptions()
		o.Workers = w
		l, err := inferLinks(context.Background(), coarse, fine, 20, o)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l.Mean)
	}
	for k := 1; k < len(got); k++ {
		for i := range got[0] {
			if !slices.Equal(got[0][i], got[k][i]) {
				t.Fatalf("run %d, coarse %d: %v, first run %v", k, i, got[k][i], got[0][i])
			}
		}
	}
}

// TestHierarchyLinksErrors: inputs the OrMachine cannot take are errors
// that say why.
func TestHierarchyLinksErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		coarse, fine [][]int
		want         string
	}{
		{"no coarse", nil, [][]int{{1}}, "0 coarse and 1 fine"},
		{"no fine", [][]int{{1}}, nil, "1 coarse and 0 fine"},
		{"gene outside", [][]int{{1, 12}}, [][]int{{1}}, "gene 12 outside 0..9"},
		{"negative gene", [][]int{{1}}, [][]int{{-1}}, "gene -1 outside"},
		{"empty fine", [][]int{{1}}, [][]int{{1}, {}}, "fine code 2 has no gene"},
		{"too many fine", [][]int{{1}}, make([][]int, 65), "65 fine codes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := inferLinks(context.Background(), tc.coarse, tc.fine, 10, DefaultOptions())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestHierarchyFixedCodesLevels links three L of seven-segment-like
// programs through enrich with the OrMachine: a dense program of L = 2
// splits into two at L = 3, one of which splits again at L = 4, while the
// other programs continue; every link is sure.
func TestHierarchyFixedCodesLevels(t *testing.T) {
	t.Parallel()
	prog := func(L, code int, g []int) enrich.Program {
		return enrich.Program{L: L, Code: code, Status: enrich.StatusProgram, Genes: g}
	}
	bar := func(k ...int) []int { // bars of 10 genes
		var g []int
		for _, b := range k {
			g = append(g, genes(10*b, 10*b+10)...)
		}
		return g
	}
	levels := []*enrich.Level{
		{L: 2, Programs: []enrich.Program{prog(2, 1, bar(0, 1, 2, 3)), prog(2, 2, bar(4, 5))}},
		{L: 3, Programs: []enrich.Program{prog(3, 1, bar(4, 5)), prog(3, 2, bar(2, 3)), prog(3, 3, bar(0, 1))}},
		{L: 4, Programs: []enrich.Program{prog(4, 1, bar(0)), prog(4, 2, bar(2, 3)), prog(4, 3, bar(4, 5)), prog(4, 4, bar(1))}},
	}
	h, err := enrich.BuildHierarchyFixedCodes(context.Background(), levels, 60, Linker(DefaultOptions()))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		event  enrich.Event
		parent string
	}{
		"L02_code1": {enrich.EventRoot, ""}, "L02_code2": {enrich.EventRoot, ""},
		"L03_code1": {enrich.EventContinues, "L02_code2"}, "L03_code2": {enrich.EventSplit, "L02_code1"},
		"L03_code3": {enrich.EventSplit, "L02_code1"},
		"L04_code1": {enrich.EventSplit, "L03_code3"}, "L04_code4": {enrich.EventSplit, "L03_code3"},
		"L04_code2": {enrich.EventContinues, "L03_code2"}, "L04_code3": {enrich.EventContinues, "L03_code1"},
	}
	if len(h.Nodes) != len(want) || h.Method != enrich.HierarchyFixedCodes {
		t.Fatalf("%d nodes by %s, want %d by fixed codes", len(h.Nodes), h.Method, len(want))
	}
	for _, n := range h.Nodes {
		w := want[n.Name()]
		if n.Event != w.event || n.Parent != w.parent {
			t.Errorf("%s: %s under %q, want %s under %q", n.Name(), n.Event, n.Parent, w.event, w.parent)
		}
		if n.Parent != "" && (n.Link < 0.99 || n.Containment != 1) {
			t.Errorf("%s: link %.3f, containment %v; want a sure link to a program holding it", n.Name(), n.Link, n.Containment)
		}
	}
	if len(h.Edges) != 7 {
		t.Errorf("%d edges, want 7: %+v", len(h.Edges), h.Edges)
	}
}
