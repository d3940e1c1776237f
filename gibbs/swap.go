package gibbs

import (
	"math"
	"math/bits"

	"scpipe/internal/splitmix"
)

// swapRows proposes, for some of the rows of a step's group (cells in a Z
// step, Config.Swaps; genes in a U step, Config.GeneSwaps), to move the
// row from one of its codes to one it does not use, in one step: a
// Metropolis–Hastings move beside the single-bit flips, made before the
// rows' flips.
//
// Under single flips a cell passes from code l to code m through a state
// that uses both or neither, and with programs of hundreds of genes either
// costs hundreds of nats: the chain then carries a population from one
// code to another a few cells a hundred sweeps, and its log-likelihood
// climbs for hundreds of sweeps under held parameters. The move proposes
// the pair (l, m) uniformly among the row's free codes l it uses and m it
// does not; its reverse, from A − l + m, draws (m, l) with the same
// probability (the row uses as many codes), so the proposal is symmetric
// and the move is accepted with probability min(1, e^Δ). With R the
// coverage of the row's other codes A − l, the entries that both l and m
// cover outside R stay covered, so
//
//	Δ = gain(U_m − R) − gain(U_l − R) + logit(p_m) − logit(p_l),
//
// the two codes' flip conditionals given A − l: one scan of the row with
// A − l active and l and m wanted gives both (stepSpec.scan, any kernel).
// It leaves the posterior invariant, as every flip does. Each sweep a
// quarter of the rows, drawn by their key (sp.swapKey, the row), propose
// one, which keeps the move's scan a small part of the step's; results
// stay the same for any number of workers or processes. A cell never
// leaves the housekeeping code (its z are clamped); a gene may.
func (sp *stepSpec) swapRows(buf *rowScratch, i0 int, rows []rowState) {
	all := uint64(1)<<uint(sp.L) - 1
	var pending uint64
	var pair [rowGroup][2]int
	for k := range rows {
		r := &rows[k]
		from, to := r.a&^sp.fixed, all&^r.a&^sp.fixed
		h := bitsAt(sp.swapKey, uint64(sp.base+i0+k))
		if from == 0 || to == 0 || h>>62 != 0 {
			continue
		}
		l := nthBit(from, int(h%uint64(bits.OnesCount64(from))))
		m := nthBit(to, int((h>>32)%uint64(bits.OnesCount64(to))))
		pair[k] = [2]int{l, m}
		r.a &^= 1 << uint(l)
		r.lifted = sp.liftFirst()
		pending |= 1 << uint(k)
	}
	// A row scanned without its ones' levels whose move they decide is
	// scanned again with them (decideBounded says why that is rare).
	for pending != 0 {
		for p := pending; p != 0; p &= p - 1 {
			k := bits.TrailingZeros64(p)
			r, l, m := &rows[k], pair[k][0], pair[k][1]
			r.want = (1<<uint(l) | 1<<uint(m)) & sp.live
			r.acc[l], r.acc[m], r.lev[l], r.lev[m] = 0, 0, 0, 0
		}
		sp.scan(buf, i0, rows, pending)
		var again uint64
		for p := pending; p != 0; p &= p - 1 {
			k := bits.TrailingZeros64(p)
			r := &rows[k]
			if !sp.swap(r, i0+k, pair[k][0], pair[k][1]) {
				r.lifted = true
				again |= 1 << uint(k)
				continue
			}
			// The flips start from a row not yet scanned (rowsRange).
			r.want, r.lifted = sp.live&^sp.fixed, sp.liftFirst()
			clear(r.acc[:sp.L])
			clear(r.lev[:sp.L])
		}
		pending = again
	}
}

// swap decides the move of row i, scanned with A − l active, from l to
// m, and reports whether it could: a row scanned without its ones'
// levels decides it when the bounds of those levels (levelBounds) give
// the same decision at both ends, and is not accepted without them when
// the step tracks them.
func (sp *stepSpec) swap(r *rowState, i, l, m int) bool {
	ol, _ := splitCounts(r.acc[l])
	om, _ := splitCounts(r.acc[m])
	delta := func(levM, levL uint64) float64 {
		return sp.conditional(r, m, i, levM) - sp.conditional(r, l, i, levL) + sp.logit[m] - sp.logit[l]
	}
	u := uniformAt(sp.swapKey, uint64(sp.base+i)|1<<63)
	takes := func(d float64) bool { return d >= 0 || accept(d, u) }
	if !r.lifted && sp.lift != nil {
		loM, hiM := sp.levelBounds(m, i, om)
		loL, hiL := sp.levelBounds(l, i, ol)
		hi, lo := delta(hiM, loL), delta(loM, hiL)
		switch {
		case math.IsNaN(hi) || math.IsNaN(lo):
			return false
		case !takes(hi + expMargin(hi)):
			r.a |= 1 << uint(l)
			return true
		case !sp.trackLev && takes(lo-expMargin(lo)):
			r.a |= 1 << uint(m)
			r.flips += 2
			return true
		}
		return false
	}
	if !takes(delta(r.lev[m], r.lev[l])) {
		r.a |= 1 << uint(l)
		return true
	}
	r.a |= 1 << uint(m)
	r.flips += 2
	if sp.trackLev {
		r.dLev += sp.flipLev(r, m, i, r.lev[m]) - sp.flipLev(r, l, i, r.lev[l])
	}
	return true
}

// nthBit returns the index of the k-th set bit of m (k from 0).
func nthBit(m uint64, k int) int {
	for range k {
		m &= m - 1
	}
	return bits.TrailingZeros64(m)
}

// swapKey returns the key of the swap moves of c's step (stepZ: the
// cells', Config.Swaps; stepU: the genes', Config.GeneSwaps) in sweep, or
// 0 when the configuration asks for none or a layer above weighs the
// codes (layers.go): a stream apart from the steps' (streamKey), never 0.
func (s *Sampler) swapKey(c *chain, sweep int, step uint64) uint64 {
	on := s.cfg.Swaps
	if step == stepU {
		on = s.cfg.GeneSwaps
	}
	if !on || s.above != nil {
		return 0
	}
	return splitmix.Mix(streamKey(c.seed, sweep, step)^splitmix.Golden) | 1
}
