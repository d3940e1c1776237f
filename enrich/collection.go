package enrich

import (
	"cmp"
	"math"
	"slices"
)

// Universe is the background of the enrichment tests: the genes a query
// and a library's sets are restricted to, compared by folded symbol (case
// does not matter).
type Universe struct {
	// Symbols is the reported spelling of each gene: the first spelling
	// among the symbols the universe was made from.
	Symbols []string
	index   map[string]int
}

// newUniverse makes a universe of the distinct symbols, compared
// case-insensitively; empty symbols are left out.
func newUniverse(symbols []string) *Universe {
	u := &Universe{index: make(map[string]int, len(symbols))}
	for _, s := range symbols {
		if s == "" {
			continue
		}
		if _, ok := u.index[foldSymbol(s)]; !ok {
			u.index[foldSymbol(s)] = len(u.Symbols)
			u.Symbols = append(u.Symbols, s)
		}
	}
	return u
}

// Len returns the number of genes in u.
func (u *Universe) Len() int { return len(u.Symbols) }

// Lookup returns the gene of u with the symbol s, in any case.
func (u *Universe) Lookup(s string) (int, bool) {
	g, ok := u.index[foldSymbol(s)]
	return g, ok
}

// Collection is a library restricted to a universe, ready to test queries
// against: the library's genes outside the universe are dropped, as
// Enrichr's background mode and gseapy do, so that a set's size counts only
// genes that could have been in a query.
type Collection struct {
	Library  *Library
	Universe *Universe
	terms    []int   // index in Library.Sets of each set kept
	sets     [][]int // genes of u in each kept set
	// Genes is the number of distinct library genes, Matched the number
	// of those in the universe; Unmatched the sets left with no gene.
	Genes, Matched, Unmatched int
}

// Restrict restricts lib to the genes of u.
func (u *Universe) Restrict(lib *Library) *Collection {
	c := &Collection{Library: lib, Universe: u}
	seen := make(map[string]bool)
	for i, s := range lib.Sets {
		var genes []int
		for _, sym := range s.Genes {
			g, ok := u.Lookup(sym)
			if key := foldSymbol(sym); !seen[key] {
				seen[key] = true
				c.Genes++
				if ok {
					c.Matched++
				}
			}
			if ok {
				genes = append(genes, g)
			}
		}
		if len(genes) == 0 {
			c.Unmatched++
			continue
		}
		c.terms = append(c.terms, i)
		c.sets = append(c.sets, genes)
	}
	return c
}

// Result is the test of one query against one gene set.
type Result struct {
	Term string
	// Overlap is the number of query genes in the set (k), TermSize the
	// set's genes in the universe (K), QuerySize the query's (n) and
	// Background the universe's (N).
	Overlap, TermSize, QuerySize, Background int
	// LogP is ln of the one-sided hypergeometric p-value P(X ≥ k), LogQ
	// ln of its Benjamini–Hochberg adjustment over the query's tests.
	LogP, LogQ    float64
	OddsRatio     float64 // gseapy's, Haldane–Anscombe corrected (OddsRatio)
	CombinedScore float64 // -ln p × odds ratio
	Genes         []int   // the overlap, as positions in the query, ascending
}

// Test tests the query (genes of the universe; repeats count once) against
// every set of c and returns the results sorted by adjusted p, then p, then
// term name. As in gseapy and Enrichr, only sets that share at least one
// gene with the query are tested and reported, so the Benjamini–Hochberg
// adjustment runs over those.
func (c *Collection) Test(query []int) []Result {
	pos := make([]int32, c.Universe.Len()) // 1 + first index in query, 0 if absent
	n := 0
	for i, g := range query {
		if pos[g] == 0 {
			n++
			pos[g] = int32(i + 1)
		}
	}
	N := c.Universe.Len()
	var res []Result
	var hits []int32
	for i, set := range c.sets {
		hits = hits[:0]
		for _, g := range set {
			if pos[g] != 0 {
				hits = append(hits, pos[g])
			}
		}
		if len(hits) == 0 {
			continue
		}
		slices.Sort(hits)
		k, K := len(hits), len(set)
		r := Result{
			Term: c.Library.Sets[c.terms[i]].Name, Overlap: k, TermSize: K, QuerySize: n, Background: N,
			LogP: LogHypergeomSF(k, K, n, N), OddsRatio: OddsRatio(k, K, n, N),
			Genes: make([]int, k),
		}
		r.CombinedScore = CombinedScore(r.LogP, r.OddsRatio)
		for j, p := range hits {
			r.Genes[j] = int(p - 1)
		}
		res = append(res, r)
	}
	logp := make([]float64, len(res))
	for i := range res {
		logp[i] = res[i].LogP
	}
	for i, q := range AdjustBH(logp) {
		res[i].LogQ = q
	}
	slices.SortStableFunc(res, func(a, b Result) int {
		return cmp.Or(cmp.Compare(a.LogQ, b.LogQ), cmp.Compare(a.LogP, b.LogP), cmp.Compare(a.Term, b.Term))
	})
	return res
}

// P returns the p-value: 0 only where it is below the smallest double.
func (r Result) P() float64 { return math.Exp(r.LogP) }

// Q returns the adjusted p-value.
func (r Result) Q() float64 { return math.Exp(r.LogQ) }
