package gibbs

import (
	"math"
	"math/bits"
	"sync"
)

// MaxCellLevelBits bounds Config.CellLevelBits: up to 8 per-cell levels.
const MaxCellLevelBits = 3

// rowCounts returns each row's observed ones and observed entries of x
// (rows × cols) under mask (nil: all observed).
func rowCounts(x, mask BitMatrix, rows, cols int) (ones, observed []int32) {
	ones, observed = make([]int32, rows), make([]int32, rows)
	b := x.Segments()
	for i := range rows {
		for seg := 0; seg+1 < len(b); seg++ {
			xs := x.Segment(i, seg)
			for k, w := range xs {
				if mask != nil {
					m := mask.Segment(i, seg)[k]
					w &= m
					observed[i] += int32(bits.OnesCount64(m))
				}
				ones[i] += int32(bits.OnesCount64(w))
			}
		}
		if mask == nil {
			observed[i] = int32(cols)
		}
	}
	return ones, observed
}

// levels returns the number of cell levels of a Sampler, 1 without them.
func (s *Sampler) levels() int { return 1 << uint(s.cfg.CellLevelBits) }

// minLiftStep keeps the levels apart when the cells' backgrounds barely
// differ.
const minLiftStep = 0.02

// lift returns g(k), the gain of covering an observed one in a cell of
// level k.
func (r rates) lift(k uint8) float64 { return r.lift0 + r.step*float64(k) }

// cellRates returns P(x = 1 | covered) and P(x = 1 | not covered) in a
// cell of level k.
func (r rates) cellRates(k uint8) (on, off float64) {
	b := levelBackground(r.rho, r.lift(k))
	return 1 - r.rho*(1-b), b
}

// levelBackground returns β for a level whose gain is g, under ρ.
func levelBackground(rho, g float64) float64 { return (1 - rho) / (math.Exp(g) - rho) }

// levelCounts are the observed entries of a set of cells by coverage and
// value, as float64 for the likelihood's sums.
type levelCounts struct{ covOnes, covZeros, uncOnes, uncZeros float64 }

// logLik returns the log-likelihood of counts c at ρ and gain g.
func (c levelCounts) logLik(rho, g float64) float64 {
	b := levelBackground(rho, g)
	term := func(k, logp float64) float64 {
		if k == 0 {
			return 0
		}
		return float64(k * logp)
	}
	return term(c.covOnes, math.Log1p(-rho*(1-b))) + term(c.covZeros, math.Log(rho)+math.Log1p(-b)) +
		term(c.uncOnes, math.Log(b)) + term(c.uncZeros, math.Log1p(-b))
}

// cellCounts splits the observed entries of the process's n-th cell into
// levelCounts, from the Z step's counts (packCounts: mispredicted, covered).
func (s *Sampler) cellCounts(n int, counts uint64) levelCounts {
	miss, covered := splitCounts(counts)
	t := tally{observed: int64(s.cellObs[n]), ones: int64(s.cellOnes[n]), covered: covered, miss: miss}
	co, cz, uo, uz := t.split()
	return levelCounts{float64(co), float64(cz), float64(uo), float64(uz)}
}

// updateLevels sets c's levels and rates to their maximum-likelihood values
// given the state whose per-cell counts the Z step left (counts[n]), and
// returns the state's log-likelihood under them. Two rounds of coordinate
// ascent: each cell's background given ρ (a root of a quadratic), the
// levels' grid spanning the 2nd to 98th percentile of the cells' gains,
// each cell at the nearest level, then ρ given the levels (golden-section
// search). The totals are sums of integer counts, exact whatever the
// order in which the workers' blocks add up, so the result is the same for
// any number of workers. With fixed, only the log-likelihood is computed.
func (s *Sampler) updateLevels(c *chain, counts []uint64, fixed bool) float64 {
	K := s.levels()
	// A partitioned fit's process sets its own cells' levels (counts[i] is
	// its i-th cell's); the percentiles and totals are over every cell.
	// Each cell's levelCounts are taken from its counts where needed: kept
	// for every cell, they would be 32 bytes a cell of garbage a sweep.
	if !fixed {
		if len(s.gains) != len(c.level) {
			s.gains = make([]float64, len(c.level))
		}
		g := s.gains
		var byLevel []levelCounts
		for range 2 {
			rho := c.rates.rho
			s.forBlocks(len(g), func(lo, hi int) {
				for i := lo; i < hi; i++ {
					b := cellBackground(s.cellCounts(i, counts[i]), rho)
					g[i] = math.Log1p(-rho*(1-b)) - math.Log(b)
				}
			})
			q := s.orderStats(g, []int{s.n * 2 / 100, (s.n - 1) * 98 / 100})
			lo, hi := q[0], q[1]
			c.rates.lift0, c.rates.step = lo, max((hi-lo)/float64(max(K-1, 1)), minLiftStep)
			byLevel = s.levelTotals(c, counts, g)
			c.rates.rho = goldenMax(1e-3, 1-1e-3, func(rho float64) float64 {
				r := c.rates
				r.rho = rho
				return logLikByLevel(byLevel, r)
			})
		}
		s.setLiftPlanes(c)
		// The last round's totals are the final levels': only ρ moved.
		return logLikByLevel(byLevel, c.rates)
	}
	return logLikByLevel(s.levelTotals(c, counts, nil), c.rates)
}

// logLikByLevel returns the log-likelihood of the cells' counts by level
// under rates r.
func logLikByLevel(byLevel []levelCounts, r rates) float64 {
	t := 0.0
	for k, lc := range byLevel {
		t += lc.logLik(r.rho, r.lift(uint8(k)))
	}
	return t
}

// forBlocks calls f on contiguous blocks [lo, hi) covering 0..n, on the
// sampler's workers side by side: for per-cell work whose results do not
// depend on how the cells are split.
func (s *Sampler) forBlocks(n int, f func(lo, hi int)) { s.forBlocksOf(n, 4096, f) }

// forBlocksOf is forBlocks with blocks of at least grain rows.
func (s *Sampler) forBlocksOf(n, grain int, f func(lo, hi int)) {
	w := min(s.workers, max(n/grain, 1))
	if w <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for k := range w {
		wg.Go(func() { f(k*n/w, (k+1)*n/w) })
	}
	wg.Wait()
}

// levelTotals adds up the cells' counts by level (counts[i] is the
// process's i-th cell's, as the Z step left them; across the processes of
// a partitioned fit). With gains g it first places each cell at the level
// of c's grid nearest its gain, in the same pass. The workers' blocks are
// added in any order: the counts are integers, exact in float64 (their
// sums stay below 2⁵³), so the totals are the same.
func (s *Sampler) levelTotals(c *chain, counts []uint64, g []float64) []levelCounts {
	K := s.levels()
	out := make([]levelCounts, K)
	var mu sync.Mutex
	s.forBlocks(len(c.level), func(lo, hi int) {
		part := make([]levelCounts, K)
		for i := lo; i < hi; i++ {
			if g != nil {
				c.level[i] = uint8(min(max(math.Round((g[i]-c.rates.lift0)/c.rates.step), 0), float64(K-1)))
			}
			part[c.level[i]].add(s.cellCounts(i, counts[i]))
		}
		mu.Lock()
		for k := range out {
			out[k].add(part[k])
		}
		mu.Unlock()
	})
	s.sumLevelCounts(out)
	return out
}

// add adds b's counts to c's.
func (c *levelCounts) add(b levelCounts) {
	c.covOnes += b.covOnes
	c.covZeros += b.covZeros
	c.uncOnes += b.uncOnes
	c.uncZeros += b.uncZeros
}

// cellBackground returns the background β in (0, 1) that maximises a
// cell's likelihood given ρ, with half an entry added to its uncovered ones
// and zeros so that it stays inside (0, 1):
//
//	U1·log β + Z·log(1 − β) + O1·log(1 − ρ(1 − β)),
//
// U1 the uncovered ones, Z all the zeros, O1 the covered ones; setting its
// derivative to zero gives aβ² + bβ + c = 0 with a < 0 ≤ c, whose one root
// in [0, 1] is the maximum (the function is concave).
func cellBackground(cc levelCounts, rho float64) float64 {
	u1, z, o1 := cc.uncOnes+0.5, cc.uncZeros+cc.covZeros+0.5, cc.covOnes
	a := -rho * (u1 + z + o1)
	b := rho*(u1+o1) - (1-rho)*(u1+z)
	c := u1 * (1 - rho)
	beta := (-b - math.Sqrt(b*b-4*a*c)) / (2 * a)
	return min(max(beta, 1e-9), 1-1e-9)
}

// goldenMax returns the maximum of a unimodal f on [lo, hi] by
// golden-section search to a width of 1e-9.
func goldenMax(lo, hi float64, f func(float64) float64) float64 {
	const r = 0.6180339887498949
	a, b := hi-r*(hi-lo), lo+r*(hi-lo)
	fa, fb := f(a), f(b)
	for hi-lo > 1e-9 {
		if fa < fb {
			lo, a, fa = a, b, fb
			b = lo + r*(hi-lo)
			fb = f(b)
		} else {
			hi, b, fb = b, a, fa
			a = hi - r*(hi-lo)
			fa = f(a)
		}
	}
	return (lo + hi) / 2
}

// setLiftPlanes writes c's levels as bit planes over the process's cells,
// for the U step: bit n of plane j is bit j of its n-th cell's level.
func (s *Sampler) setLiftPlanes(c *chain) {
	s.writePlanes(&c.liftBlock, &c.liftPlanes, c.level, s.cfg.CellLevelBits, s.cnw)
}

// writePlanes writes levels as nb bit planes, nw words each, to *planes:
// bit i of plane j is bit j of levels[i]. The planes lie in one block,
// *block (made on first use), nw words apart, MaxCellLevelBits of them
// (those past nb stay zero, for the vector kernels, which always read
// them) and a block of 8 words more that a vector load may touch.
func (s *Sampler) writePlanes(block *[]uint64, planes *[][]uint64, levels []uint8, nb, nw int) {
	if *block == nil {
		*block = make([]uint64, MaxCellLevelBits*nw+8)
		*planes = make([][]uint64, nb)
		for j := range *planes {
			(*planes)[j] = (*block)[j*nw : (j+1)*nw]
		}
	}
	clear(*block)
	p := *planes
	// Words apart, so that workers write disjoint words.
	s.forBlocks(nw, func(lo, hi int) {
		for i := lo * 64; i < min(hi*64, len(levels)); i++ {
			k := levels[i]
			for j := range nb {
				p[j][i/64] |= uint64(k>>uint(j)&1) << uint(i%64)
			}
		}
	})
}

// initialLevels gives c its starting levels and grid: every cell at the
// middle level, whose gain and ρ are those of the initial rates.
func (s *Sampler) initialLevels(c *chain) {
	K := s.levels()
	on, off := s.start.on, s.start.off
	c.rates.rho = (1 - on) / (1 - off)
	mid := math.Log(on) - math.Log(off)
	c.rates.step = 0.2
	c.rates.lift0 = mid - c.rates.step*float64(K/2)
	first, last := s.cellRange()
	c.level = make([]uint8, last-first)
	for n := range c.level {
		c.level[n] = uint8(K / 2)
	}
	s.setLiftPlanes(c)
}
