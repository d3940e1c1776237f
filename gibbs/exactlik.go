package gibbs

import (
	"math"
	"math/bits"
	"sync"
)

// entryTotals returns the observed entries of c's state by cell level kc
// and gene level kg (index kc·G + kg), summed over every process's cells.
// The counts are integers, so the totals are the same for any number of
// workers or processes.
func (s *Sampler) entryTotals(c *chain) []levelCounts {
	K, G := s.levels(), s.geneLevels()
	out := s.sumCells(4*K*G, func(i int, acc []int64) {
		by := acc[4*int(c.level[i])*G:]
		var at [1 << MaxGeneLevelBits]uint64
		s.rowWords(c, i, func(w int, x, obs, cov uint64) {
			levelMasks(&at, s.cellGenePlanes(c, i), w, G)
			for kg := range G {
				m := at[kg] & obs
				co := bits.OnesCount64(x & cov & m)
				cz := bits.OnesCount64(cov&m) - co
				uo := bits.OnesCount64(x&m) - co
				by[4*kg] += int64(co)
				by[4*kg+1] += int64(cz)
				by[4*kg+2] += int64(uo)
				by[4*kg+3] += int64(bits.OnesCount64(m) - co - cz - uo)
			}
		})
	})
	by := make([]levelCounts, K*G)
	for k := range by {
		o := out[4*k:]
		by[k] = levelCounts{float64(o[0]), float64(o[1]), float64(o[2]), float64(o[3])}
	}
	return by
}

// sumCells returns the sums of width counters that f adds to for each of
// the process's cells, over every process's cells: f(i, acc) adds the
// i-th cell's to acc, one acc a block of cells, the blocks' summed in
// any order (integers).
func (s *Sampler) sumCells(width int, f func(i int, acc []int64)) []int64 {
	rows := s.n
	if p := s.part; p != nil {
		rows = p.Hi - p.Lo
	}
	out := make([]int64, width)
	var mu sync.Mutex
	s.forBlocks((rows+63)/64, func(lo, hi int) {
		acc := make([]int64, width)
		for i := lo * 64; i < min(hi*64, rows); i++ {
			f(i, acc)
		}
		mu.Lock()
		for k, v := range acc {
			out[k] += v
		}
		mu.Unlock()
	})
	if s.part != nil {
		s.part.sum(out)
	}
	return out
}

// rowWords calls f with each word w of the process's i-th cell: its
// observed ones x, its observed entries obs and those c's state covers.
func (s *Sampler) rowWords(c *chain, i int, f func(w int, x, obs, cov uint64)) {
	x, mask := s.data.X, s.data.Mask
	if p := s.part; p != nil {
		x, mask = p.x, p.mask
	}
	a := s.rowCodes(c, i)
	lineWords(x, mask, i, func(w int, xw, obs uint64) {
		var cov uint64
		for m := a; m != 0; m &= m - 1 {
			cov |= c.u[w*s.l+bits.TrailingZeros64(m)]
		}
		f(w, xw, obs, cov)
	})
}

// levelMasks sets at[k], k < K, to the columns of word w at level k,
// from the levels' bit planes.
func levelMasks(at *[1 << MaxCellLevelBits]uint64, planes [][]uint64, w, K int) {
	for k := range K {
		m := ^uint64(0)
		for j, p := range planes {
			if k>>uint(j)&1 != 0 {
				m &= p[w]
			} else {
				m &^= p[w]
			}
		}
		at[k] = m
	}
}

// heldLogLik returns exactLogLik of c's state with its parameters held,
// from the Z step's per-cell counts (counts[i], packCounts: mispredicted,
// covered) and the change dLev the sweep's flips made to the summed gene
// level of the covered ones (stepSpec.trackLev). On the first held sweep,
// and the first after a restore, it sums them in a pass of its own.
func (s *Sampler) heldLogLik(c *chain, counts []uint64, dLev int64) float64 {
	if c.held {
		c.coveredLev += dLev
	} else {
		c.heldBase, c.coveredLev, c.held = s.heldBase(c), s.coveredGeneLevels(c), true
	}
	r := c.rates
	byLevel := s.levelTotals(c, counts, nil)
	t := c.heldBase
	var zeros float64
	for k, lc := range byLevel {
		t += float64((r.lift(uint8(k)) + r.gene0) * lc.covOnes)
		zeros += lc.covZeros
	}
	t += float64(r.geneStep * float64(c.coveredLev))
	return t + float64(math.Log(r.rho)*zeros)
}

// heldBase returns the log-likelihood of c's observed entries with
// nothing covered, at c's levels and rates.
func (s *Sampler) heldBase(c *chain) float64 {
	G := s.geneLevels()
	t := 0.0
	for k, lc := range s.entryTotals(c) {
		bare := levelCounts{uncOnes: lc.covOnes + lc.uncOnes, uncZeros: lc.covZeros + lc.uncZeros}
		t += bare.logLik(c.rates.rho, c.rates.lift(uint8(k/G))+c.rates.geneLift(uint8(k%G)))
	}
	return t
}

// coveredGeneLevels returns the sum, over the observed ones that c's state
// covers in every process's cells, of their genes' levels.
func (s *Sampler) coveredGeneLevels(c *chain) int64 {
	return s.sumCells(1, func(i int, acc []int64) {
		planes := s.cellGenePlanes(c, i)
		s.rowWords(c, i, func(w int, x, _, cov uint64) {
			for j, p := range planes {
				acc[0] += int64(bits.OnesCount64(x&cov&p[w])) << uint(j)
			}
		})
	})[0]
}

// rowCodes returns the codes of the process's i-th cell in c's state.
func (s *Sampler) rowCodes(c *chain, i int) uint64 {
	var a uint64
	for l := range s.l {
		a |= (c.z[i/64*s.l+l] >> uint(i%64) & 1) << uint(l)
	}
	return a
}
