package gibbs

import (
	"fmt"
	"runtime"
)

// dataCounts are what NewSampler counts in its data before the first
// sweep; Counted takes them once for many samplers.
type dataCounts struct {
	ones     int64 // observed ones, the same in X and XT
	observed int64 // observed entries
	// cellOnes and cellObs are each row's observed ones and entries; nil
	// when not asked for (no per-cell levels).
	cellOnes, cellObs []int32
}

// Counted returns d with its counts taken on workers goroutines (all cores
// when workers ≤ 0): the observed ones of X and of XT, which must agree,
// the observed entries of Mask and MaskT, likewise, and each row's
// observed ones and entries. NewSampler reuses them instead of reading the
// data again, so that a run fitting many (L, chain) to the same data reads
// it once rather than five times per fit (14 GB at the paper's size with a
// held-out mask). The counts are shared, read-only, by every copy of the
// result: replace none of its matrices.
func (d Data) Counted(workers int) (Data, error) {
	if d.X == nil || d.XT == nil {
		return d, fmt.Errorf("%w: X and XT are required", errShape)
	}
	if (d.Mask == nil) != (d.MaskT == nil) {
		return d, fmt.Errorf("%w: Mask and MaskT must both be set or both be nil", errShape)
	}
	d.counts = nil
	c, err := d.count(workers, true)
	if err != nil {
		return d, err
	}
	d.counts = c
	return d, nil
}

// count returns the counts Counted took, or takes them now on workers
// goroutines, each row's only when rows is true.
func (d Data) count(workers int, rows bool) (*dataCounts, error) {
	if d.counts != nil {
		return d.counts, nil
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	c := &dataCounts{ones: countOnes(d.X, d.Mask, workers)}
	if onesT := countOnes(d.XT, d.MaskT, workers); c.ones != onesT {
		return nil, fmt.Errorf("%w: X has %d observed ones but XT has %d: XT is not the transpose of X", errShape, c.ones, onesT)
	}
	n, m := d.X.Rows(), d.X.Cols()
	c.observed = int64(n) * int64(m)
	if d.Mask != nil {
		c.observed = countOnes(d.Mask, nil, workers)
		if t := countOnes(d.MaskT, nil, workers); t != c.observed {
			return nil, fmt.Errorf("%w: Mask has %d observed entries but MaskT has %d", errShape, c.observed, t)
		}
	}
	if rows {
		c.cellOnes, c.cellObs = rowCounts(d.X, d.Mask, n, m)
	}
	return c, nil
}
