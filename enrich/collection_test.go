package enrich

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestUniverse(t *testing.T) {
	t.Parallel()
	u := newUniverse([]string{"Cd3e", "CD3E", "", "Actb", "cd3e"})
	if u.Len() != 2 || !slices.Equal(u.Symbols, []string{"Cd3e", "Actb"}) {
		t.Errorf("universe %q, want [Cd3e Actb]", u.Symbols)
	}
	for _, s := range []string{"CD3E", "cd3E", "Cd3e"} {
		if g, ok := u.Lookup(s); !ok || g != 0 {
			t.Errorf("Lookup(%q) = %d, %v; want 0, true", s, g, ok)
		}
	}
	if _, ok := u.Lookup("Gapdh"); ok {
		t.Error("Lookup(Gapdh) found a gene not in the universe")
	}
}

// TestCollectionTest checks the counts, restriction to the background, the
// order and the adjustment of one query's tests by hand.
func TestCollectionTest(t *testing.T) {
	t.Parallel()
	var bg []string
	for i := range 100 {
		bg = append(bg, fmt.Sprintf("g%03d", i))
	}
	u := newUniverse(bg)
	lib := &Library{Name: "lib", Sets: []GeneSet{
		{Name: "hit", Genes: []string{bg[0], bg[1], bg[2], bg[3], "NOT_IN_BACKGROUND"}}, // K = 4 after restriction
		{Name: "miss", Genes: []string{bg[50], bg[51]}},                                 // no overlap: not tested
		{Name: "half", Genes: []string{strings.ToUpper(bg[3]), bg[60], bg[61], bg[62]}}, // overlap 1, matched case-insensitively
		{Name: "outside", Genes: []string{"NOPE1", "NOPE2"}},                            // nothing in the background
	}}
	c := u.Restrict(lib)
	if c.Unmatched != 1 || c.Genes != 12 || c.Matched != 9 {
		t.Errorf("restricted: %d unmatched sets, %d of %d genes matched; want 1, 9 of 12", c.Unmatched, c.Matched, c.Genes)
	}
	query := []int{3, 0, 2, 1, 40, 3} // bg[3] twice: n = 5
	res := c.Test(query)
	if len(res) != 2 || res[0].Term != "hit" || res[1].Term != "half" {
		t.Fatalf("results %+v, want hit then half", res)
	}
	hit := res[0]
	if hit.Overlap != 4 || hit.TermSize != 4 || hit.QuerySize != 5 || hit.Background != 100 || !slices.Equal(hit.Genes, []int{0, 1, 2, 3}) {
		t.Errorf("hit: %+v", hit)
	}
	// P(X ≥ 4) for K=4, n=5, N=100: C(4,4)·C(96,1)/C(100,5) = 96/75287520.
	if want := 96.0 / 75287520; math.Abs(hit.P()-want) > 1e-12*want {
		t.Errorf("hit: p = %v, want %v", hit.P(), want)
	}
	if want := OddsRatio(4, 4, 5, 100); hit.OddsRatio != want || hit.CombinedScore != -hit.LogP*want {
		t.Errorf("hit: odds ratio %v, combined %v", hit.OddsRatio, hit.CombinedScore)
	}
	half := res[1]
	if half.Overlap != 1 || half.TermSize != 4 || !slices.Equal(half.Genes, []int{0}) {
		t.Errorf("half: %+v", half)
	}
	// Two tests: q = min(p·2/rank, running minimum from above).
	if q0, q1 := hit.Q(), half.Q(); math.Abs(q0-2*hit.P()) > 1e-12*q0 || math.Abs(q1-min(1, half.P())) > 1e-12 {
		t.Errorf("q = %v, %v from p = %v, %v", q0, q1, hit.P(), half.P())
	}
	if res := c.Test(nil); len(res) != 0 {
		t.Errorf("empty query: %d results", len(res))
	}
}

func TestNewGenes(t *testing.T) {
	t.Parallel()
	ids := []string{"E1", "E2", "E3", "E4", "E5", "E6", "E7"}
	names := []string{"Tbce", "TBCE", "Tbce-1", "", "Actb", "Tbce", "E4"}
	g := NewGenes(ids, names)
	// "Tbce-1" is taken by gene 3, so the repeats of Tbce (in any case) skip
	// it; an empty name is replaced by the id, which gene 7 then repeats.
	wantNames := []string{"Tbce", "TBCE", "Tbce-1", "E4", "Actb", "Tbce", "E4"}
	wantSymbols := []string{"Tbce", "TBCE-2", "Tbce-1", "E4", "Actb", "Tbce-3", "E4-1"}
	if !slices.Equal(g.Names, wantNames) || !slices.Equal(g.Symbols, wantSymbols) || !slices.Equal(g.IDs, ids) {
		t.Errorf("names %q symbols %q, want %q %q", g.Names, g.Symbols, wantNames, wantSymbols)
	}
}

func TestLibrarySymbol(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"TMBIM4.1", "TMBIM4"},   // R's make.unique of a repeated symbol
		{"NDUFA7.12", "NDUFA7"},  // any count
		{"Y_RNA.3", "Y_RNA"},     // a repeated family name
		{"Gm12345.1", "Gm12345"}, // mouse
		{"AL627309.1", "AL627309.1"},
		{"AC000061.2", "AC000061.2"},
		{"RP11-206L10.2", "RP11-206L10.2"},
		{"CTD-2331H12.4", "CTD-2331H12.4"},
		{"XXbac-B461K10.4", "XXbac-B461K10.4"},
		{"AL627309.1.1", "AL627309.1"}, // a repeated accession
		{"NKX2-1", "NKX2-1"},           // a hyphen is part of symbols
		{"CD3E", "CD3E"},
		{"HLA-A.0", "HLA-A.0"}, // no count of make.unique starts at 0
		{".1", ".1"},
	} {
		if got := librarySymbol(tc.in); got != tc.want {
			t.Errorf("LibrarySymbol(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// The lists hold each library symbol once.
	g := NewGenes([]string{"E1", "E2", "E3"}, []string{"TMBIM4.1", "CD3E", "TMBIM4"})
	if got := Symbols(g, []int{0, 1, 2}); !slices.Equal(got, []string{"TMBIM4", "CD3E"}) {
		t.Errorf("Symbols = %q", got)
	}
	if !slices.Equal(g.Symbols, []string{"TMBIM4", "CD3E", "TMBIM4-1"}) {
		t.Errorf("unique symbols %q", g.Symbols)
	}
}
