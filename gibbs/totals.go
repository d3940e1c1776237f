package gibbs

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// totalsPerRows bounds a step's stepTotals to one entry per this many rows
// (and maxTotals in all): an entry costs a scan of one row, so the cache
// adds at most that share of the step's scans. Variables so that tests can
// exercise a full cache.
var (
	totalsPerRows = 16
	maxTotals     = 4096
)

// stepTotals caches, for one step over fully observed data, the row total
// Σ_w popcount(S_l) of every live code l for each set of active codes met:
// with every entry observed, S_l = U_l &^ (cov2 | cov1·[l inactive]) depends
// on the row's active codes and the step's column codes, not on the row's
// data. A kernel that can (condSumsMode, vectorKernel.sumsX) then counts only
// popcount(x & S_l): a quarter to a third less work per code at L = 10 in
// the Go kernel and the nibble-table ones. The totals are exact integers,
// so results are the same with or without the cache.
type stepTotals struct {
	m    sync.Map     // active set (uint64) → *[MaxL]int64
	left atomic.Int64 // entries that may still be added
}

// startTotals gives the step sp (its bounds and planes set) a fresh
// stepTotals when its data are fully observed and the sampler's kernel can
// use one (the Go kernel and the nibble-table ones), and nil otherwise.
func (s *Sampler) startTotals(sp *stepSpec) {
	sp.totals = nil
	if sp.mask != nil || (s.vector && !s.kernel.hasSumsX()) {
		return
	}
	sp.totals = &stepTotals{}
	sp.totals.left.Store(int64(min(maxTotals, max(sp.rows/totalsPerRows, 1))))
	sp.segWords = sp.segWords[:0]
	longest := 0
	for seg := 0; seg+1 < len(sp.bounds); seg++ {
		n := len(sp.m.Segment(0, seg))
		sp.segWords, longest = append(sp.segWords, n), max(longest, n)
	}
	if len(s.zeros) < longest {
		s.zeros = make([]uint64, longest)
	}
	sp.zeros = s.zeros
}

// get returns the totals of the active set a (a ⊆ sp.live), computing them
// with buf's spare row by scanning a row of zeros, whose sums count
// Σ popcount(S_l) in their high halves; or nil when they are not cached and
// the cache is full.
func (t *stepTotals) get(sp *stepSpec, buf *rowScratch, a uint64) *[MaxL]int64 {
	if v, ok := t.m.Load(a); ok {
		return v.(*[MaxL]int64)
	}
	if t.left.Add(-1) < 0 {
		return nil
	}
	var acc [MaxL]uint64
	if sp.planes != nil {
		v := &buf.tot
		v.prepare(a, sp.live, sp.stride)
		for seg := 0; seg+1 < len(sp.bounds); seg++ {
			off := sp.bounds[seg] / 64
			v.scan(sp.kernel, &buf.vec, sp.planes[off:], sp.zeros[:sp.segWords[seg]], nil)
		}
		var lev [MaxL]uint64
		v.add(&acc, &lev)
	} else {
		for seg := 0; seg+1 < len(sp.bounds); seg++ {
			off, n := sp.bounds[seg]/64, sp.segWords[seg]
			condSums(&acc, a, sp.live, sp.L, sp.other[off*sp.L:(off+n)*sp.L], sp.zeros[:n], sp.ones)
		}
	}
	tot := new([MaxL]int64)
	for m := sp.live; m != 0; m &= m - 1 {
		l := bits.TrailingZeros64(m)
		_, tot[l] = splitCounts(acc[l])
	}
	got, _ := t.m.LoadOrStore(a, tot)
	return got.(*[MaxL]int64)
}
