package gibbs

import (
	"math"
	"math/bits"
	"sync"
)

// stepSpec describes one step: the rows to update (cells or genes), their own
// codes, the other factor's codes and the data in the rows' orientation.
type stepSpec struct {
	rows   int
	cells  bool     // the rows are cells (a Z step)
	base   int      // the index of the first row in the whole data (a process's first cell; partitioned fits)
	own    []uint64 // codes of the rows, interleaved (written)
	other  []uint64 // codes of the columns, interleaved (read-only)
	m      BitMatrix
	mask   BitMatrix // nil: all observed
	bounds []int
	ones   []uint64
	logit  []float64
	// lik holds the rates of the step's likelihood; one and zero are the
	// log-likelihood gains of covering an observed one and zero.
	lik       rates
	one, zero float64
	symmetric bool // compute the conditional as the paper does, λ·(2·ones − entries)
	// With per-cell levels: in the Z step, each row's (cell's) level and
	// the gain of an observed one at each level; in the U step, the levels'
	// bit planes over the columns (cells), and the gain of level 0 and the
	// step between levels in lik.
	rowLevel []uint8
	levelOne [1 << MaxCellLevelBits]float64
	// With per-gene levels (genelevels.go): in the Z step, lift holds the
	// genes' planes and geneStep the gain per unit of their level; in the
	// U step, rowGene holds each row's (gene's) level and geneOne the gain
	// of a covered one at each.
	geneStep   float64
	rowGene    []uint8
	geneOne    [1 << MaxGeneLevelBits]float64
	lift       [][]uint64
	liftBlock  []uint64 // lift's storage, liftStride words a plane (setLiftPlanes)
	liftStride int
	// bounded, with lift planes, lets rows be scanned without the levels
	// of their ones (decideBounded); levelCount[l][k] counts the columns
	// of code l at level k (codeLevelCounts).
	bounded    bool
	levelCount [MaxL][1 << MaxCellLevelBits]int64
	// rowCounts, when not nil, receives each row's counts after the step
	// (packCounts: mispredicted, covered).
	rowCounts []uint64
	// trackLev has the step add up, over its accepted flips, the change
	// in the summed gene level of the covered ones (rowStats.lev): with
	// per-gene levels held, the log-likelihood follows from it
	// (heldLogLik).
	trackLev bool
	key      uint64
	// swapKey, when not 0, keys the swap move proposed for each row before
	// its flips (swap.go; Config.Swaps in a Z step, Config.GeneSwaps in a
	// U step).
	swapKey uint64
	L       int
	fixed   uint64 // codes the step leaves as they are (the Z step's clamped codes, the U step's fixed codes)
	// above, when not nil, adds ±aboveGain to the logit of code l of row i
	// as bit i of above[i/64*L+l] is set or not: the row's codes are the
	// data of a layer above (layers.go).
	above     []uint64
	aboveGain float64
	// hk, in a U step with a housekeeping code, is that code (bit L−1);
	// hkOnes and hkObs hold each row's (gene's) observed ones and entries
	// over the step's columns (foldHousekeeping).
	hk            uint64
	hkOnes, hkObs []int32
	// live holds the codes whose bitset in other is not empty. A code with
	// an empty one covers no column: its conditional sum is 0, it adds
	// nothing to a row's coverage, and flipping it changes no other code's
	// sum, so the kernel neither sums it nor re-scans a row after its flip.
	live uint64
	// planes, when not nil, holds other code-major for the vector kernel: word w
	// of code l is planes[l*stride+w].
	planes []uint64
	stride int
	kernel vectorKernel
	// totals, when not nil, caches Σ popcount(S_l) per set of active codes
	// (fully observed data; see startTotals); segWords holds the
	// words of each column segment and zeros as many zero words as the
	// longest, for computing them.
	totals   *stepTotals
	segWords []int
	zeros    []uint64

	// smp, with samples, holds their part of the likelihood (cellsamples.go).
	smp *stepSamples
}

// rowStats are the integer totals of a step; integers keep them independent
// of the number of workers. miss and covered count the observed entries that
// the state after the step mispredicts and covers.
//
// lev, in a step that tracks it (stepSpec.trackLev), is the change its
// accepted flips made to the summed gene level of the covered ones
// (heldLogLik).
type rowStats struct{ flips, miss, covered, lev int64 }

// add adds a row's counts (packed by packCounts) and flips.
func (t *rowStats) add(counts uint64, flips int64) {
	miss, covered := splitCounts(counts)
	t.flips += flips
	t.miss += miss
	t.covered += covered
}

// sweepChain runs one sweep of c and updates its likelihood's parameters.
func (s *Sampler) sweepChain(c *chain, sweep int) SweepStats {
	if s.cfg.CellLevelBits > 0 {
		return s.sweepLevels(c, sweep)
	}
	z := s.zStep(c, streamKey(c.seed, sweep, stepZ))
	s.setLikelihood(&z, c)
	z.swapKey = s.swapKey(c, sweep, stepZ)
	zs := s.runStep(&z)
	u := s.uStep(c, streamKey(c.seed, sweep, stepU))
	s.setLikelihood(&u, c)
	u.swapKey = s.swapKey(c, sweep, stepU)
	us := s.runUStep(&u)
	s.sumCounts(&zs, &us)
	return s.sweepStats(c, sweep, zs, us)
}

// sweepStats updates the rates of c after a sweep whose Z and U steps
// counted zs and us, and describes the sweep.
func (s *Sampler) sweepStats(c *chain, sweep int, zs, us rowStats) SweepStats {
	// The U step leaves the state of the sweep: its rows' counts are the
	// counts of that state.
	t := tally{observed: s.observed, ones: s.obsOnes, covered: us.covered, miss: us.miss}
	c.rates = s.cfg.Noise.update(t, c.rates, !s.sched.estimates(sweep))
	st := SweepStats{Sweep: sweep, Lambda: math.NaN(), Dropout: 1 - c.rates.on, Background: c.rates.off,
		Flips: zs.flips + us.flips, LogLik: s.cfg.Noise.logLik(t, c.rates)}
	if s.cfg.Noise == Symmetric {
		st.Lambda = c.rates.lambda
	}
	if s.observed > 0 {
		st.Accuracy = float64(s.observed-us.miss) / float64(s.observed)
	}
	return st
}

// sweepLevels is sweepChain with per-cell levels: a U step, then a Z step
// whose per-cell counts (the sweep's final state) set the levels and rates.
func (s *Sampler) sweepLevels(c *chain, sweep int) SweepStats {
	estimate, genes := s.sched.estimates(sweep), s.sched.genes
	u := s.uStep(c, streamKey(c.seed, sweep, stepU))
	s.setLikelihood(&u, c)
	if genes {
		u.rowCounts = s.geneCountBuf()
	}
	u.trackLev = genes && !estimate
	u.swapKey = s.swapKey(c, sweep, stepU)
	us := s.runUStep(&u)
	z := s.zStep(c, streamKey(c.seed, sweep, stepZ))
	s.setLikelihood(&z, c)
	z.rowCounts, z.trackLev, z.swapKey = s.cellCountBuf(), u.trackLev, s.swapKey(c, sweep, stepZ)
	zs := s.runStep(&z)
	s.sumCounts(&zs, &us)
	st := SweepStats{Sweep: sweep, Lambda: math.NaN(), Flips: zs.flips + us.flips}
	switch {
	case genes && !estimate:
		st.LogLik = s.heldLogLik(c, s.cellStep, zs.lev+us.lev)
	case genes:
		// While the levels move, the reported log-likelihood leaves the
		// genes' out (exactlik.go says why): a pass a sweep would cost
		// more than the sweep.
		st.LogLik = s.updateLevels(c, s.cellStep, false)
		if sweep+1 >= s.sched.genesFrom {
			s.updateGeneLevels(c, s.geneStep)
		}
	default:
		st.LogLik = s.updateLevels(c, s.cellStep, !estimate)
	}
	c.rates.on, c.rates.off = s.meanRates(c)
	st.Dropout, st.Background = 1-c.rates.on, c.rates.off
	if s.observed > 0 {
		st.Accuracy = float64(s.observed-zs.miss) / float64(s.observed)
	}
	return st
}

// cellCountBuf returns a buffer for the Z step's per-cell counts (of the
// process's cells), reused from sweep to sweep.
func (s *Sampler) cellCountBuf() []uint64 {
	if first, last := s.cellRange(); len(s.cellStep) != last-first {
		s.cellStep = make([]uint64, last-first)
	}
	return s.cellStep
}

// meanRates returns P(x = 1 | covered) and P(x = 1 | not covered) averaged
// over the cells, for the trace.
func (s *Sampler) meanRates(c *chain) (on, off float64) {
	byLevel := make([]float64, s.levels())
	for _, k := range c.level {
		byLevel[k]++
	}
	sumAcross(s.part, byLevel)
	for k, n := range byLevel {
		b := levelBackground(c.rates.rho, c.rates.lift(uint8(k)))
		on += n * (1 - c.rates.rho*(1-b))
		off += n * b
	}
	return on / float64(s.n), off / float64(s.n)
}

// zStep returns the Z step of c with draws keyed by key: over every cell,
// or a partitioned fit's process's own.
func (s *Sampler) zStep(c *chain, key uint64) stepSpec {
	sp := stepSpec{rows: s.n, own: c.z, other: c.u, m: s.data.X, mask: s.data.Mask,
		logit: s.logitZ, key: key, fixed: s.clamped, cells: true,
		above: s.above, aboveGain: s.aboveGain}
	if p := s.part; p != nil {
		sp.rows, sp.base, sp.m, sp.mask = p.Hi-p.Lo, p.Lo, p.x, p.mask
	}
	return sp
}

// uStep returns the U step of c with draws keyed by key: over every cell,
// or a partitioned fit's process's own.
func (s *Sampler) uStep(c *chain, key uint64) stepSpec {
	sp := stepSpec{rows: s.d, own: c.u, other: c.z, m: s.data.XT, mask: s.data.MaskT,
		logit: s.logitU, key: key, fixed: s.fixedU}
	if p := s.part; p != nil {
		sp.m, sp.mask = p.xt, p.maskT
	}
	return sp
}

// setLikelihood gives sp the likelihood of chain c: its rates, and with
// per-cell levels the Z step's gain per row or the U step's lift planes.
func (s *Sampler) setLikelihood(sp *stepSpec, c *chain) {
	r := c.rates
	sp.lik, sp.symmetric = r, s.cfg.Noise == Symmetric
	sp.one, sp.zero = r.gains()
	if s.cfg.CellLevelBits == 0 {
		return
	}
	sp.zero = math.Log(r.rho)
	if sp.cells {
		for k := range s.levels() {
			sp.levelOne[k] = r.lift(uint8(k))
		}
		sp.rowLevel = c.level
		if s.cfg.GeneLevelBits > 0 {
			s.setGeneLikelihood(sp, c)
		}
		return
	}
	sp.lift, sp.liftBlock, sp.liftStride = c.liftPlanes, c.liftBlock, s.cnw
	if s.cfg.GeneLevelBits > 0 {
		s.setGeneLikelihood(sp, c)
	}
}

// runStep updates every row of sp, in parallel over blocks of 64-row words.
func (s *Sampler) runStep(sp *stepSpec) rowStats {
	s.prepareStep(sp)
	words := (sp.rows + 63) / 64
	w := min(s.workers, words)
	if w <= 1 {
		return sp.rowsRange(s.scratchFor(0), 0, words)
	}
	res := make([]rowStats, w)
	var wg sync.WaitGroup
	for k := range w {
		lo, hi := k*words/w, (k+1)*words/w
		buf := s.scratchFor(k)
		wg.Go(func() { res[k] = sp.rowsRange(buf, lo, hi) })
	}
	wg.Wait()
	var tot rowStats
	for _, r := range res {
		tot.flips += r.flips
		tot.miss += r.miss
		tot.covered += r.covered
		tot.lev += r.lev
	}
	return tot
}

// prepareStep sets what sp's scans read beside its rows: the column
// segments, the live codes, the vector kernel's planes, the housekeeping
// code, the bounds of the levels and the totals cache.
func (s *Sampler) prepareStep(sp *stepSpec) {
	sp.bounds = sp.m.Segments()
	sp.ones = s.ones
	sp.L = s.l
	sp.live = liveCodes(sp.other, s.l)
	if s.vector {
		s.planes = codeMajor(s.planes, sp.other, s.l)
		sp.planes, sp.stride, sp.kernel = s.planes, len(sp.other)/s.l, s.kernel
	}
	s.setHousekeeping(sp)
	g := sp.levelGain()
	sp.bounded = sp.lift != nil && g >= 0 && !math.IsInf(g, 1)
	if sp.bounded {
		codeLevelCounts(&sp.levelCount, sp.other, sp.L, sp.live, sp.lift)
	}
	s.startTotals(sp)
	if sp.smp != nil {
		sp.prepareSamples()
	}
}

// setHousekeeping lets a U step with a housekeeping code fold it
// (foldHousekeeping); sp.live must be set.
func (s *Sampler) setHousekeeping(sp *stepSpec) {
	sp.hk = 0
	if !sp.cells && sp.live&s.clamped != 0 {
		sp.hk, sp.hkOnes, sp.hkObs = s.clamped, s.hkOnes, s.hkObs
	}
}

// countHousekeeping sets each gene's observed ones and entries over the
// process's cells, for the U step's housekeeping code: the counts of
// countGenes when they are these.
func (s *Sampler) countHousekeeping() {
	switch p := s.part; {
	case p != nil:
		s.hkOnes, s.hkObs = rowCounts(p.xt, p.maskT, s.d, p.Hi-p.Lo)
	case s.geneOnes != nil:
		s.hkOnes, s.hkObs = s.geneOnes, s.geneObs
	default:
		s.hkOnes, s.hkObs = rowCounts(s.data.XT, s.data.MaskT, s.d, s.n)
	}
}

// scratchFor returns worker k's scratch space, kept from step to step: it
// holds a vector-kernel state per row of a group (tens of KiB), which
// zeroing afresh each step would cost more than a small step's work.
func (s *Sampler) scratchFor(k int) *rowScratch {
	for len(s.scratch) <= k {
		s.scratch = append(s.scratch, new(rowScratch))
	}
	return s.scratch[k]
}

// rowsRange updates rows 64·w0 … 64·w1−1 with scratch space buf. Rows
// sharing a word of own are updated by one call, so no two goroutines write
// the same word.
func (sp *stepSpec) rowsRange(buf *rowScratch, w0, w1 int) rowStats {
	var tot rowStats
	L := sp.L
	for w := w0; w < w1; w++ {
		ow := sp.own[w*L : w*L+L]
		for i0 := w * 64; i0 < min(w*64+64, sp.rows); i0 += rowGroup {
			rows := buf.rows[:min(rowGroup, sp.rows-i0)]
			for k := range rows {
				r, bit := &rows[k], uint((i0+k)%64)
				r.a, r.want, r.next, r.flips, r.lifted = 0, sp.live&^sp.fixed, 0, 0, sp.liftFirst()
				r.dLev, r.fetch, r.fetchOn = 0, 0, 0
				for l, word := range ow {
					r.a |= (word >> bit & 1) << uint(l)
				}
				clear(r.acc[:L])
				clear(r.lev[:L])
			}
			sp.updateRows(buf, i0, rows)
			for k := range rows {
				r, bit := &rows[k], uint((i0+k)%64)
				tot.add(r.counts, r.flips)
				tot.lev += r.dLev
				if sp.rowCounts != nil {
					sp.rowCounts[i0+k] = r.counts
				}
				for l := range ow {
					ow[l] = ow[l]&^(1<<bit) | (r.a>>uint(l)&1)<<bit
				}
			}
		}
	}
	return tot
}

// rowGroup is the number of rows updated together. Their scans walk the
// column segments in order, each segment for all the rows in turn: the
// rows' words of a segment lie side by side in a tiled file (the U step's
// Xᵀ has one tile per cell block), and the segment's column codes stay in
// cache for the whole group. Rows are independent given the column codes,
// and every draw is keyed by its variable, so the grouping changes no
// result. It divides 64.
const rowGroup = 16

// rowState is a row of a group being updated.
type rowState struct {
	acc   [MaxL]uint64 // counts of the codes still to be decided (packCounts: ones, entries)
	lev   [MaxL]uint64 // with lift planes: the summed level of those ones (condSumsLift)
	a     uint64       // current codes
	want  uint64       // codes whose sums the next scan adds to acc
	next  int          // next code to decide
	flips int64        // accepted flips
	// lifted: the row's scans sum the levels of its ones (lev) too, and
	// its decisions use them; otherwise they are bounded (decideBounded).
	lifted bool
	// counts holds the observed entries that a mispredicts and covers
	// (packCounts), as of the last scan.
	counts uint64
	// dLev is the change the row's accepted flips made to the summed
	// gene level of its covered ones (stepSpec.trackLev). A flip decided
	// without the levels of its ones (decideBounded) leaves its code in
	// fetch, and its new value in fetchOn, for the next scan to sum.
	dLev           int64
	fetch, fetchOn uint64
	// tot, when not nil during a scan, holds Σ popcount(S_l) of the row's
	// active codes (from stepTotals): the kernel then leaves it out.
	tot *[MaxL]int64
	// sums holds the codes the kernel sums in a scan: want, less the
	// housekeeping code and, when it is active, every code
	// (foldHousekeeping).
	sums uint64
}

// rowScratch is a worker's scratch space.
type rowScratch struct {
	rows  [rowGroup]rowState
	vec   vecScratch
	vrows [rowGroup]vecRow           // the rows' vector-kernel state, when sp.planes is set
	lift  [MaxCellLevelBits][]uint64 // a segment's lift planes
	tot   vecRow                     // a row of zeros, for computing stepTotals
}

// updateRows proposes to flip each code of rows i0 … i0+len(rows)−1 in
// turn. A row's codes are decided in order, each over complete sums: a scan
// of all the pending rows, then decisions until a row's coverage changes,
// which leaves that row pending for the next scan.
func (sp *stepSpec) updateRows(buf *rowScratch, i0 int, rows []rowState) {
	if sp.swapKey != 0 {
		sp.swapRows(buf, i0, rows)
	}
	pending := uint64(1)<<uint(len(rows)) - 1
	for pending != 0 {
		sp.scan(buf, i0, rows, pending)
		var again uint64
		for p := pending; p != 0; p &= p - 1 {
			k := bits.TrailingZeros64(p)
			if sp.decide(&rows[k], i0+k) {
				again |= 1 << uint(k)
			}
		}
		pending = again
	}
}

// decide proposes to flip the codes of row i from r.next on, and reports
// whether it stopped at a flip that changed the row's coverage, whose later
// codes then need a new scan (and the mispredictions too, even when no code
// is left), or at a code whose decision needs the levels of its ones, which
// the scan left out (decideBounded).
//
// The logit of the full conditional of code l being on is
// c = λ·acc[l] + logit(p_l) (eq. update_z of the paper); the flip of the
// current value is accepted with probability min(1, e^c) from off to on and
// min(1, e^−c) from on to off (Metropolised Gibbs).
func (sp *stepSpec) decide(r *rowState, i int) bool {
	L := sp.L
	for ; r.fetch != 0; r.fetch &= r.fetch - 1 {
		l := bits.TrailingZeros64(r.fetch)
		r.dLev += signed(int64(r.lev[l]), r.fetchOn>>uint(l)&1 != 0)
	}
	for l := r.next; l < L; l++ {
		flipped, known := false, true
		if r.lifted || sp.lift == nil {
			flipped = sp.flip(r, l, i)
		} else {
			flipped, known = sp.decideBounded(r, l, i)
		}
		if !known {
			clear(r.acc[l:L])
			clear(r.lev[l:L])
			r.want, r.next, r.lifted = sp.live&^sp.fixed&^(1<<uint(l)-1), l, true
			return true
		}
		if flipped && sp.live>>uint(l)&1 != 0 {
			clear(r.acc[l+1 : L])
			clear(r.lev[l+1 : L])
			r.want, r.next, r.lifted = sp.live&^sp.fixed&^(2<<uint(l)-1), l+1, sp.liftFirst()
			if r.fetch>>uint(l)&1 != 0 {
				// The next scan sums code l's ones and their levels anew:
				// after the flip it alone decides the same entries.
				r.acc[l], r.lev[l] = 0, 0
				r.want |= 1 << uint(l)
				r.lifted = true
			}
			return true
		}
		r.fetch &^= 1 << uint(l) // a code that covers nothing changes no level
	}
	return false
}

// liftFirst reports whether a row's first scan, and its scans after a
// flip, sum the levels of its ones: with lift planes whose decisions
// cannot be bounded without them.
func (sp *stepSpec) liftFirst() bool { return sp.lift != nil && !sp.bounded }

// flip proposes to flip code l of row i (its counts complete in r.acc[l],
// and with lift planes r.lev[l]) and reports whether it did.
func (sp *stepSpec) flip(r *rowState, l, i int) bool {
	if sp.fixed>>uint(l)&1 != 0 {
		return false
	}
	if sp.accepts(sp.proposal(r, l, i, r.lev[l]), l, i) {
		r.a ^= 1 << uint(l)
		r.flips++
		if sp.trackLev {
			r.dLev += signed(sp.flipLev(r, l, i, r.lev[l]), r.a>>uint(l)&1 != 0)
		}
		return true
	}
	return false
}

// flipLev returns the summed gene level of the ones that code l alone
// decides in row i, whose cells' levels sum to lev (a Z step with gene
// planes): lev itself in a cell's row, the row's gene level times the
// ones in a gene's.
func (sp *stepSpec) flipLev(r *rowState, l, i int, lev uint64) int64 {
	if sp.cells {
		return int64(lev)
	}
	if sp.smp != nil {
		return sp.sampleFlipLev(l, i)
	}
	ones, _ := splitCounts(r.acc[l])
	return int64(sp.rowGene[i]) * ones
}

// signed returns v when on (the flip covered the entries) and −v when not.
func signed(v int64, on bool) int64 {
	if on {
		return v
	}
	return -v
}

// decideBounded is flip for a row scanned without the levels of its ones,
// and reports whether the flip's fate is known without them. The scan that
// sums them costs two to three times the one that does not (a popcount per
// level plane and word, beside the one of the ones), yet they rarely
// matter: the ones' summed level lies between the bounds of levelBounds
// (at worst 0 and 7·ones), and the proposal's logit is monotone in it
// (float rounding included: products by a gain ≥ 0 and sums are
// monotone), so when the logits at both ends give the same decision it is
// the flip's. math.Exp is accurate to an ulp but not proven monotone, so
// the ends are widened by a margin far above an ulp's worth before they
// are compared with the draw. The ends disagree on a few percent of the
// proposals of real data (BENCHMARKS.md), whose rows alone are scanned
// again with levels.
func (sp *stepSpec) decideBounded(r *rowState, l, i int) (flipped, known bool) {
	if sp.fixed>>uint(l)&1 != 0 {
		return false, true
	}
	// The logit grows with the level when the code is off and falls when
	// it is on; most proposals are refused at the end that favours them.
	ones, _ := splitCounts(r.acc[l])
	loLev, hiLev := sp.levelBounds(l, i, ones)
	if r.a>>uint(l)&1 != 0 {
		loLev, hiLev = hiLev, loLev
	}
	hi := sp.proposal(r, l, i, hiLev)
	if math.IsNaN(hi) {
		return false, false
	}
	if !sp.accepts(hi+expMargin(hi), l, i) {
		return false, true
	}
	lo := sp.proposal(r, l, i, loLev)
	if math.IsNaN(lo) || !sp.accepts(lo-expMargin(lo), l, i) {
		return false, false
	}
	r.a ^= 1 << uint(l)
	r.flips++
	switch on := r.a>>uint(l)&1 != 0; {
	case !sp.trackLev:
	case sp.cells:
		// The levels of a cell's ones are the genes', which the scan left
		// out: the next scan sums them (decide).
		r.fetch |= 1 << uint(l)
		r.fetchOn = r.fetchOn&^(1<<uint(l)) | boolBit(on)<<uint(l)
	default:
		r.dLev += signed(sp.flipLev(r, l, i, 0), on)
	}
	return true, true
}

// codeLevelCounts sets n[l][k] to the number of columns of level k,
// over the lift planes, of each live code l of the interleaved codes.
func codeLevelCounts(n *[MaxL][1 << MaxCellLevelBits]int64, codes []uint64, L int, live uint64, lift [][]uint64) {
	*n = [MaxL][1 << MaxCellLevelBits]int64{}
	K := 1 << uint(len(lift))
	var at [1 << MaxCellLevelBits]uint64 // a word's columns of each level
	for w := range len(codes) / L {
		levelMasks(&at, lift, w, K)
		for m := live; m != 0; m &= m - 1 {
			l := bits.TrailingZeros64(m)
			u := codes[w*L+l]
			for k := range K {
				n[l][k] += int64(bits.OnesCount64(u & at[k]))
			}
		}
	}
}

// levelBounds returns bounds of the summed level of ones columns of code
// l: the sums of the ones lowest and of the ones highest levels among the
// code's columns (levelCount). The ones that code l alone decides are
// that many of its columns, so their summed level lies between: bounds
// far tighter than 0 and ones times the planes' highest level when few
// of a code's columns (the genes of a program, the cells of a cell type)
// lie at the extreme levels, and they decide more proposals
// (decideBounded).
func (sp *stepSpec) levelBounds(l, i int, ones int64) (lo, hi uint64) {
	n := sp.levelCountOf(l, i)
	left := ones
	for k := 0; k < len(n) && left > 0; k++ {
		t := min(left, n[k])
		lo += uint64(t) * uint64(k)
		left -= t
	}
	left = ones
	for k := len(n) - 1; k >= 0 && left > 0; k-- {
		t := min(left, n[k])
		hi += uint64(t) * uint64(k)
		left -= t
	}
	return lo, hi
}

// expMargin returns a step from c across which math.Exp, accurate to an
// ulp, grows by a factor far above an ulp's (about 1 + 1e-9) however it
// rounds.
func expMargin(c float64) float64 { return 1e-9 * max(1, math.Abs(c)) }

// proposal returns the logit of flipping code l of row i, whose ones
// decided by code l have summed level lev: the full conditional's logit,
// negated when the code is on.
func (sp *stepSpec) proposal(r *rowState, l, i int, lev uint64) float64 {
	c := sp.conditional(r, l, i, lev) + sp.logit[l]
	if sp.above != nil {
		c += sp.aboveTerm(i, l)
	}
	if r.a>>uint(l)&1 != 0 {
		c = -c
	}
	return c
}

// accepts reports whether the flip of code l of row i, whose proposal has
// logit c, is accepted: its uniform draw is made only when c < 0.
func (sp *stepSpec) accepts(c float64, l, i int) bool {
	return c >= 0 || accept(c, uniformAt(sp.key, uint64(sp.base+i)*uint64(sp.L)+uint64(l)))
}

// levelGain returns the gain per unit of a column's level in a conditional
// with lift planes.
func (sp *stepSpec) levelGain() float64 {
	if sp.rowLevel != nil {
		return sp.geneStep
	}
	return sp.lik.step
}

// conditional returns the log-likelihood gain of switching code l of row i
// on, from the counts of the observed ones and entries that it alone
// decides (r.acc[l], packCounts) and, with lift planes, their summed level
// lev.
func (sp *stepSpec) conditional(r *rowState, l, i int, lev uint64) float64 {
	ones, all := splitCounts(r.acc[l])
	if sp.smp != nil && !sp.cells {
		// A gene's row with samples (cellsamples.go): its ones' gain
		// depends on the samples of code l's cells.
		return sp.sampleOnesGain(l, i) + float64(sp.lik.step*float64(lev)) + float64(sp.zero*float64(all-ones))
	}
	return sp.gain(i, entrySums{ones, all, lev})
}

// gain returns the log-likelihood gain of covering, in row i, observed
// entries with the counts t: conditional's, and a swap's (swap.go).

// entrySums are the counts of a set of a row's observed entries: its
// ones, its entries and, with lift planes, the summed level of its ones.
type entrySums struct {
	ones, all int64
	lev       uint64
}

func (sp *stepSpec) gain(i int, t entrySums) float64 {
	ones, all, lev := t.ones, t.all, t.lev
	switch {
	case sp.symmetric:
		// The paper's accumulator, rounded as before the rates existed.
		return float64(sp.lik.lambda * float64(2*ones-all))
	case sp.rowLevel != nil && sp.lift != nil:
		// A cell's row over genes with levels (genelevels.go).
		return float64(sp.levelOne[sp.rowLevel[i]]*float64(ones)) + float64(sp.geneStep*float64(lev)) +
			float64(sp.zero*float64(all-ones))
	case sp.rowLevel != nil:
		return float64(sp.levelOne[sp.rowLevel[i]]*float64(ones)) + float64(sp.zero*float64(all-ones))
	case sp.rowGene != nil:
		return float64(sp.geneOne[sp.rowGene[i]]*float64(ones)) + float64(sp.lik.step*float64(lev)) +
			float64(sp.zero*float64(all-ones))
	case sp.lift != nil:
		return float64(sp.lik.lift0*float64(ones)) + float64(sp.lik.step*float64(lev)) +
			float64(sp.zero*float64(all-ones))
	}
	return float64(sp.one*float64(ones)) + float64(sp.zero*float64(all-ones))
}

// aboveTerm returns the log-likelihood gain, in the layer above, of
// switching code l of row i on: the code is that layer's datum, predicted
// on (bit set) or off by its Boolean product (layers.go).
func (sp *stepSpec) aboveTerm(i, l int) float64 {
	if sp.above[i/64*sp.L+l]>>uint(i%64)&1 != 0 {
		return sp.aboveGain
	}
	return -sp.aboveGain
}

// accept reports whether u < e^c for c < 0 and u a multiple of 2⁻⁵³ in
// [0, 1). Most proposals are refused, and e^c is rarely needed to see it:
// with k = c·log₂e, e^c ≤ 2^⌈k⌉ (and math.Exp is within an ulp of it), so
// u ≥ 2^(⌈k⌉+1) refuses; the margin of one covers the rounding of k. e^c is
// computed only for u below that bound, which has probability below 4e^c.
// Below c = −37.5, e^c < 2⁻⁵³, so only u = 0 can pass and e^c need not be
// computed (it is, to honour e^c = 0 far below).
func accept(c, u float64) bool {
	if k := c * math.Log2E; k > -1000 && u >= math.Float64frombits(uint64(1024+int64(k))<<52) {
		return false // int64(k) = ⌈k⌉ for k ≤ 0
	}
	if c < -37.5 {
		return u == 0 && math.Exp(c) > 0
	}
	return u < math.Exp(c)
}

// scan adds to the accumulators of the pending rows (bit k: row i0+k) the
// sums of their wanted codes and sets their mispredicted observed entries.
func (sp *stepSpec) scan(buf *rowScratch, i0 int, rows []rowState, pending uint64) {
	if sp.smp != nil && !sp.cells {
		sp.scanBySample(buf, i0, rows, pending)
		return
	}
	L := sp.L
	vec := sp.planes != nil
	var active [rowGroup]uint64 // the codes whose coverage the kernel builds
	for p := pending; p != 0; p &= p - 1 {
		k := bits.TrailingZeros64(p)
		r := &rows[k]
		active[k] = sp.startScan(r)
		if sp.totals != nil && !r.lifted && r.sums != 0 {
			r.tot = sp.totals.get(sp, buf, active[k])
		}
		if vec {
			buf.vrows[k].prepare(active[k], r.sums, sp.stride)
			if r.tot != nil {
				buf.vrows[k].setTotals(r.tot)
			}
		}
	}
	for seg := 0; seg+1 < len(sp.bounds); seg++ {
		off := sp.bounds[seg] / 64
		for p := pending; p != 0; p &= p - 1 {
			k := bits.TrailingZeros64(p)
			r := &rows[k]
			x := sp.m.Segment(i0+k, seg)
			obs := sp.ones
			if sp.mask != nil {
				obs = sp.mask.Segment(i0+k, seg)
			}
			if vec {
				if sp.mask == nil {
					obs = nil
				}
				if r.lifted {
					_, block := sp.rowLift(i0 + k)
					r.counts += buf.vrows[k].scanLift(sp.kernel, &buf.vec, sp.planes[off:], x, obs, block[off:], sp.liftStride)
				} else {
					r.counts += buf.vrows[k].scan(sp.kernel, &buf.vec, sp.planes[off:], x, obs)
				}
			} else if r.lifted {
				lift, _ := sp.rowLift(i0 + k)
				for j, p := range lift {
					buf.lift[j] = p[off : off+len(x)]
				}
				r.counts += condSumsLift(&r.acc, &r.lev, r.a&sp.live, r.want, L, sp.other[off*L:(off+len(x))*L], x, obs, buf.lift[:len(lift)])
			} else {
				r.counts += condSumsMode(&r.acc, active[k], r.sums, L, sp.other[off*L:(off+len(x))*L], x, obs, r.tot == nil)
			}
		}
	}
	for p := pending; p != 0; p &= p - 1 {
		k := bits.TrailingZeros64(p)
		r := &rows[k]
		switch {
		case vec:
			buf.vrows[k].add(&r.acc, &r.lev)
		case r.tot != nil:
			for m := r.sums; m != 0; m &= m - 1 {
				l := bits.TrailingZeros64(m)
				r.acc[l] += packCounts(0, r.tot[l])
			}
		}
		if sp.hk != 0 && !r.lifted {
			sp.unfoldHousekeeping(r, i0+k)
		}
	}
}

// startScan readies row r for a scan: no counts yet, and the codes it
// sums (r.sums); it returns the codes whose coverage the kernel builds.
// Codes with an empty bitset cover nothing.
func (sp *stepSpec) startScan(r *rowState) (active uint64) {
	r.counts, r.tot = 0, nil
	active, r.sums = r.a&sp.live, r.want
	if sp.hk != 0 && !r.lifted {
		active, r.sums = sp.foldHousekeeping(active, r.want)
	}
	return active
}

// foldHousekeeping returns the codes whose coverage a U step's kernel
// builds for a row with active codes a (a ⊆ live), and those it sums, of
// the codes want, when the step has a housekeeping code H (sp.hk). H's
// column codes are all ones (every cell uses it), so the kernel need not
// read them: with cov the observed columns that the other active codes
// cover, H's sum S_H = obs &^ cov whether H is active or not (active, it
// covers every column, so cov is the columns it shares), and its counts
// follow from the row's observed ones and entries and the kernel's counts
// of a without H (unfoldHousekeeping). While H is active it covers every
// column, so no other code decides one: their sums are zero and need no
// scan.
func (sp *stepSpec) foldHousekeeping(a, want uint64) (active, sums uint64) {
	if a&sp.hk != 0 {
		return a &^ sp.hk, 0
	}
	return a, want &^ sp.hk
}

// unfoldHousekeeping completes the scan of row i (r) that
// foldHousekeeping set up: H's sum, when wanted, and the row's counts
// when H is active. The kernel counted, over the coverage cov of the
// other active codes, miss = |(x ^ cov) ∩ obs| and covered = |cov ∩ obs|;
// with ones = |x ∩ obs| and obs the row's observed entries,
// |x ∩ cov ∩ obs| = (ones + covered − miss)/2, so S_H holds
// ones − |x ∩ cov ∩ obs| ones of obs − covered entries; and with H
// active every observed column is covered: obs − ones mispredicted.
func (sp *stepSpec) unfoldHousekeeping(r *rowState, i int) {
	miss, covered := splitCounts(r.counts)
	ones, obs := int64(sp.hkOnes[i]), int64(sp.hkObs[i])
	if r.want&sp.hk != 0 {
		r.acc[bits.TrailingZeros64(sp.hk)] += packCounts(ones-(ones+covered-miss)/2, obs-covered)
	}
	if r.a&sp.hk != 0 {
		r.counts = packCounts(obs-ones, obs)
	}
}

// liveCodes returns the set of codes (bit l) whose bitset in the interleaved
// codes is not empty.
func liveCodes(codes []uint64, L int) uint64 {
	var live uint64
	for w := 0; w < len(codes); w += L {
		for l, c := range codes[w : w+L] {
			if c != 0 {
				live |= 1 << uint(l)
			}
		}
	}
	return live
}

// codeMajor returns the interleaved codes (word w of code l at w*L+l) laid out
// code-major (at l*words+w), in buf when it is large enough.
func codeMajor(buf, codes []uint64, L int) []uint64 {
	words := len(codes) / L
	if cap(buf) < len(codes) {
		buf = make([]uint64, len(codes))
	}
	buf = buf[:len(codes)]
	for l := range L {
		p := buf[l*words : (l+1)*words]
		for w := range p {
			p[w] = codes[w*L+l]
		}
	}
	return buf
}

// boolBit returns 1 for true and 0 for false.
func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
