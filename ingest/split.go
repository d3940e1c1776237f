package ingest

import (
	"runtime"
	"sync"
)

// passSplit says how the per-entry work on one batch (validation, counting,
// spill encoding) is divided: into at most workers contiguous ranges of
// whole blocks of entries. Results never depend on workers: each range
// keeps its own counts, summed in range order, and value sums are taken
// per block and added in block order.
type passSplit struct {
	workers int
	block   int
}

// newSplit divides among workers, in blocks large enough that a range's
// setup (a binary search, a goroutine) is noise beside its entries.
func newSplit(workers int) passSplit {
	return passSplit{workers: workers, block: 1 << 12}
}

// goroutines is a Workers setting as a count: n, or GOMAXPROCS when n is
// 0, the default of a caller that names none.
func goroutines(n int) int {
	if n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

// ranges returns how many ranges [0, n) is divided into: 1 when n spans
// a single block or workers ≤ 1 (the serial path).
func (s passSplit) ranges(n int) int {
	blocks := (n + s.block - 1) / s.block
	return max(min(s.workers, blocks), 1)
}

// bounds returns range r of m ranges over n entries.
func (s passSplit) bounds(n, m, r int) (lo, hi int) {
	blocks := (n + s.block - 1) / s.block
	return min(blocks*r/m*s.block, n), min(blocks*(r+1)/m*s.block, n)
}

// run calls fn(r, lo, hi) for each of the m = ranges(n) ranges, concurrently
// (the last on the calling goroutine), and returns m once all are done.
func (s passSplit) run(n int, fn func(r, lo, hi int)) int {
	m := s.ranges(n)
	if m == 1 {
		fn(0, 0, n)
		return 1
	}
	var wg sync.WaitGroup
	for r := range m - 1 {
		lo, hi := s.bounds(n, m, r)
		wg.Go(func() { fn(r, lo, hi) })
	}
	lo, hi := s.bounds(n, m, m-1)
	fn(m-1, lo, hi)
	wg.Wait()
	return m
}
