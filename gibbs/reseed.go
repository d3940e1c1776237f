package gibbs

import (
	"math"
	"math/bits"
	"slices"
)

// reseedEvery is the spacing of the re-seedings in sweeps, and the fewest
// burn-in sweeps that follow the last one: enough for a seeded code to
// take its cells and settle before the next look.
const reseedEvery = 5

// reseedLooks is the number of looks, and reseedAtOnce the most codes a
// look seeds. A look costs about what a start's clustering costs, and
// where L is above the data's programs every look finds idle codes: a
// look before every fifth sweep of the burn-in, in every start, took 24%
// of the CPU time of `scpipe bench --e2e --size 2000x1500` (L = 2..10),
// while issue 28's planted fits need one. Looking once the starts have
// run, in the kept chain only, lets the multi-start phase compare starts
// as they are, and a chain whose start left a code idle is mended
// whichever start it is.
const (
	reseedLooks  = 2
	reseedAtOnce = 2
)

// idleCodes returns the codes of c, neither clamped nor fixed, that cover
// no entry: an empty column of U, or of Z (over every process's cells).
func (s *Sampler) idleCodes(c *chain) uint64 {
	genes, cells := liveCodes(c.u, s.l), liveCodes(c.z, s.l)
	if s.part != nil {
		// A code is used when some process's cells use it.
		used := make([]int64, s.l)
		for l := range used {
			used[l] = int64(cells >> uint(l) & 1)
		}
		s.part.sum(used)
		cells = 0
		for l, n := range used {
			if n > 0 {
				cells |= 1 << uint(l)
			}
		}
	}
	mask := uint64(1)<<uint(s.l) - 1
	if s.l == 64 {
		mask = ^uint64(0)
	}
	return mask &^ (genes & cells) &^ s.clamped &^ s.fixedU
}

// reseed re-seeds the idle codes of c before sweep (see above). It
// reports whether it changed a code.
func (s *Sampler) reseed(c *chain, sweep int) bool {
	idle := s.idleCodes(c)
	if idle == 0 {
		return false
	}
	// stepInit keys the starts at sweeps 0 and 1; the re-seeding before
	// sweep t takes its key at t + 1 ≥ 2.
	key := streamKey(c.seed, sweep+1, stepInit)
	smp := s.sampleState(c, key)
	k := min(bits.OnesCount64(idle), reseedAtOnce)
	moves := s.residualMoves(smp, k, c.rates, key)
	if len(moves) < k {
		// Splits cost a clustering per code tried: only when the residual
		// leaves idle codes without a move.
		moves = append(moves, s.splitMoves(smp, c, k-len(moves), c.rates, key)...)
	}
	slices.SortStableFunc(moves, func(a, b seedMove) int {
		switch {
		case a.gain > b.gain:
			return -1
		case a.gain < b.gain:
			return 1
		}
		return 0
	})
	var split uint64 // codes already split
	changed := false
	for m, seeded := idle, 0; m != 0 && seeded < reseedAtOnce; m, seeded = m&(m-1), seeded+1 {
		l := bits.TrailingZeros64(m)
		k := slices.IndexFunc(moves, func(mv seedMove) bool { return mv.from < 0 || split>>uint(mv.from)&1 == 0 })
		if k < 0 {
			break
		}
		mv := moves[k]
		moves = slices.Delete(moves, k, k+1)
		for w := range s.dw {
			c.u[w*s.l+l] = 0
		}
		for g, on := range mv.genes {
			if !on {
				continue
			}
			c.u[g/64*s.l+l] |= 1 << uint(g%64)
			if mv.from >= 0 {
				c.u[g/64*s.l+mv.from] &^= 1 << uint(g%64)
			}
		}
		if mv.from >= 0 {
			split |= 1 << uint(mv.from)
		}
		changed = true
	}
	if changed && s.cfg.CellLevelBits > 0 {
		// stepInitZ keys the start's Z step at sweep 0; the re-seeding's
		// is at sweep + 1 ≥ 2.
		z := s.zStep(c, streamKey(c.seed, sweep+1, stepInitZ))
		s.setLikelihood(&z, c)
		s.runStep(&z)
	}
	return changed
}

// seedMove is a way to seed an idle code: with genes, taken from code
// from when it is not negative (a split), for an expected gain of
// log-likelihood.
type seedMove struct {
	genes []bool
	from  int
	gain  float64
}

// stateSample is the state of up to clusterSample cells drawn with a key:
// each one's observed ones (as words), the codes its row of Z uses, and
// the observed ones that none of them covers (as gene lists).
type stateSample struct {
	obs      [][]uint64
	codes    []uint64
	residual [][]int32
	// open holds each cell's observed entries that none of its codes
	// covers (as words): where a new code's genes would change the
	// likelihood.
	open [][]uint64
}

// sampleState draws the cells of a stateSample with key and reads their
// rows of X and Z. In a partitioned fit each process fills its own cells'
// rows, and the sum across the processes gives every process all of them.
func (s *Sampler) sampleState(c *chain, key uint64) stateSample {
	cells := sampleCells(s.n, clusterSample, key)
	first, last := s.cellRange()
	// A row's observed ones, its observed entries, then its codes.
	stride := 2*s.dw + 1
	flat := make([]uint64, len(cells)*stride)
	for i, n := range cells {
		if n < first || n >= last {
			continue
		}
		row := flat[i*stride : (i+1)*stride]
		s.readCellRow(n, row[:s.dw])
		s.readCellMask(n, row[s.dw:2*s.dw])
		w := n/64 - first/64
		for l, word := range c.z[w*s.l : (w+1)*s.l] {
			row[2*s.dw] |= (word >> uint(n%64) & 1) << uint(l)
		}
	}
	sumAcross(s.part, flat)
	smp := stateSample{obs: make([][]uint64, len(cells)), codes: make([]uint64, len(cells)),
		residual: make([][]int32, len(cells)), open: make([][]uint64, len(cells))}
	for i := range cells {
		row := flat[i*stride : (i+1)*stride]
		smp.obs[i], smp.open[i], smp.codes[i] = row[:s.dw], row[s.dw:2*s.dw], row[2*s.dw]
		var r []int32
		for k, w := range smp.obs[i] {
			var cover uint64
			for m := smp.codes[i]; m != 0; m &= m - 1 {
				cover |= c.u[k*s.l+bits.TrailingZeros64(m)]
			}
			smp.open[i][k] &^= cover
			for w &^= cover; w != 0; w &= w - 1 {
				r = append(r, int32(64*k+bits.TrailingZeros64(w)))
			}
		}
		smp.residual[i] = r
	}
	return smp
}

// minMoveGenes is the fewest genes a re-seeding moves: a set of one or
// two genes is what chance leaves in a cluster of a few dozen cells (the
// cells that happen to lack a gene), not a program.
const minMoveGenes = 5

// residualMoves returns up to k+1 moves that seed an idle code from the
// residual: the sampled cells are split into k + 1 clusters by their
// residual ones (bisect, splitting the cluster holding the most ones). A
// cluster's genes are those detected in at least a fifth of the
// cluster's uncovered entries, at least twice as often plus 5 points as
// in the other cells' uncovered entries (as distinctive, but counting
// only the entries that a new code would change), and often enough that
// covering them gains log-likelihood at rates r. A move's gain is the
// sum of its genes' gains.
func (s *Sampler) residualMoves(smp stateSample, k int, r rates, key uint64) []seedMove {
	rows := smp.residual
	_, weight, norm := rowWeights(rows, s.d)
	clusters := bisect(rows, weight, norm, s.d, k+1, max(10, len(rows)/100), key, onesMass(rows))
	one, zero := r.gains()
	// A gene detected in a fraction f of its uncovered entries gains
	// f·one + (1 − f)·zero per entry when covered: positive above f0.
	f0 := 1.0
	if one > zero {
		f0 = -zero / (one - zero)
	}
	// Each gene's residual ones and uncovered entries, in all the cells
	// and in a cluster's.
	ones, open := make([]float64, s.d), make([]float64, s.d)
	onesIn, openIn := make([]float64, s.d), make([]float64, s.d)
	tally := func(ones, open []float64, members []int) {
		for _, i := range members {
			for _, g := range rows[i] {
				ones[g]++
			}
			for k, w := range smp.open[i] {
				for ; w != 0; w &= w - 1 {
					open[64*k+bits.TrailingZeros64(w)]++
				}
			}
		}
	}
	all := make([]int, len(rows))
	for i := range all {
		all[i] = i
	}
	tally(ones, open, all)
	var moves []seedMove
	for _, members := range clusters {
		clear(onesIn)
		clear(openIn)
		tally(onesIn, openIn, members)
		genes := make([]bool, s.d)
		gain, n := 0.0, 0
		for g := range genes {
			if openIn[g] == 0 {
				continue
			}
			rIn, rOut := onesIn[g]/openIn[g], 0.0
			if out := open[g] - openIn[g]; out > 0 {
				rOut = (ones[g] - onesIn[g]) / out
			}
			if rIn >= max(0.2, f0) && rIn >= 2*rOut+0.05 {
				genes[g] = true
				gain += onesIn[g]*one + (openIn[g]-onesIn[g])*zero
				n++
			}
		}
		if n >= minMoveGenes && gain > 0 && !math.IsInf(gain, 0) {
			moves = append(moves, seedMove{genes: genes, from: -1, gain: gain})
		}
	}
	return moves
}

// splitMoves returns moves that split one of k codes of c
// (splitCandidates) in two: the sampled
// cells using the code are split in two (bisect) by their observed ones
// among the code's genes, and the genes distinctive of one side move to
// the idle code. Two programs merged in one code, which the cells of
// either use, leave the cells of each with the other's genes covered and
// mostly zero: uncovering them in the other side's cells is the move's
// gain, at rates r; moves that gain nothing are left out.
func (s *Sampler) splitMoves(smp stateSample, c *chain, k int, r rates, key uint64) []seedMove {
	one, zero := r.gains()
	minSize := max(10, len(smp.obs)/100)
	var moves []seedMove
	in := make([]float64, s.d)
	for _, j := range s.splitCandidates(smp, c, k) {
		var rows [][]int32
		for i, codes := range smp.codes {
			if codes>>uint(j)&1 == 0 {
				continue
			}
			var row []int32
			for k, w := range smp.obs[i] {
				for w &= c.u[k*s.l+j]; w != 0; w &= w - 1 {
					row = append(row, int32(64*k+bits.TrailingZeros64(w)))
				}
			}
			rows = append(rows, row)
		}
		if len(rows) < 2*minSize {
			continue
		}
		count, weight, norm := rowWeights(rows, s.d)
		sides := bisect(rows, weight, norm, s.d, 2, minSize, bitsAt(key, uint64(j)+1<<32), clusterRows)
		if len(sides) != 2 {
			continue
		}
		for _, members := range sides {
			genes := distinctive(rows, members, count, s.d, 0.2, in)
			other := float64(len(rows) - len(members))
			gain, n := 0.0, 0
			for g, on := range genes {
				if on {
					// The other side's detections of g, uncovered.
					out := count[g] - in[g]
					gain -= out*one + (other-out)*zero
					n++
				}
			}
			if n >= minMoveGenes && gain > 0 && !math.IsInf(gain, 0) {
				moves = append(moves, seedMove{genes: genes, from: j, gain: gain})
			}
		}
	}
	return moves
}

// splitCandidates returns up to k codes of c to try splitting, worst
// first: the codes whose covered entries in the sampled cells are zeros
// most often (over a tenth of them), as two programs merged in one code
// leave each one's genes zero in the other's cells.
func (s *Sampler) splitCandidates(smp stateSample, c *chain, k int) []int {
	zeros, covered := make([]float64, s.l), make([]float64, s.l)
	for i, codes := range smp.codes {
		for m := codes &^ (s.clamped | s.fixedU); m != 0; m &= m - 1 {
			j := bits.TrailingZeros64(m)
			for w, x := range smp.obs[i] {
				u := c.u[w*s.l+j]
				covered[j] += float64(bits.OnesCount64(u))
				zeros[j] += float64(bits.OnesCount64(u &^ x))
			}
		}
	}
	var codes []int
	for j := range s.l {
		if covered[j] > 0 && zeros[j] > covered[j]/10 {
			codes = append(codes, j)
		}
	}
	slices.SortStableFunc(codes, func(a, b int) int {
		fa, fb := zeros[a]/covered[a], zeros[b]/covered[b]
		switch {
		case fa > fb:
			return -1
		case fa < fb:
			return 1
		}
		return 0
	})
	return codes[:min(k, len(codes))]
}

// onesMass returns the size of a cluster of rows by the ones it holds.
func onesMass(rows [][]int32) func([]int) int {
	return func(members []int) int {
		t := 0
		for _, i := range members {
			t += len(rows[i])
		}
		return t
	}
}
