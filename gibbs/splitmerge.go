package gibbs

import (
	"math"
	"math/bits"
	"slices"

	"scpipe/internal/splitmix"
)

// Split–merge moves (Config.SplitMerge): a Metropolis–Hastings move that
// splits the cells of one code between it and an unused code, merges two
// codes into one, or divides two codes' cells between them afresh, with
// their genes, in one step.
//
// Flips and swaps move one cell at a time. A code that holds two cell
// types, or two codes that share one, is then mended only by carrying a
// population across, cell by cell, through states that each cost
// hundreds of nats: chains from different seeds keep the partitions their
// starts gave them. The move is Jain and Neal's restricted Gibbs
// split–merge (J. Comput. Graph. Stat. 13, 2004; the non-conjugate form of
// Jain and Neal 2007, since a code's genes are not integrated out),
// written for Boolean codes:
//
//   - An ordered pair (l, m) of free codes (neither clamped nor fixed) is
//     drawn uniformly. With l unused there is no move. With m unused it
//     proposes a split of l's cells S; with both used, S the cells using
//     either, a fair coin proposes the merge of m into l or a re-split
//     of S between l and m.
//   - The restricted variables are, for each cell of S, which of l and m
//     it uses (l, m or both: every cell of S keeps one), and for each gene
//     its (u_l, u_m). Given the genes the cells' choices are independent,
//     and given the cells the genes': a restricted Gibbs scan draws the
//     cells, then the genes, each from its exact conditional under the
//     held parameters, and the probability of its outcome is a product.
//   - The launch state depends on S and the data alone: two anchor cells
//     of S drawn by the key, every other cell given to the code of the
//     anchor whose ones it shares more of, then smLaunchScans scans. A
//     split takes one more scan from the launch; a merge sets every cell
//     of S to l, draws u_l from its conditional and u_m (a code no cell
//     uses) from its prior.
//   - A split is accepted with probability
//     min(1, π(split)·q(merge)/2 / (π(merged)·q(final scan))), a merge
//     with the inverse, q(final scan) the probability of the split state
//     under the final scan from the launch (the 2: the coin that chose
//     the merge). A re-split from x to x' is accepted with probability
//     min(1, π(x')·q(x) / (π(x)·q(x'))), both under the final scan from
//     the one launch. A split that leaves l or m without cells is
//     refused: its reverse would be no merge.
//   - The reverse scan's probability is at most 1, so a merge or re-split
//     refused without it is refused with it: most are, and a refused
//     merge's launch is never built.
//
// The move leaves p(Z, U | X, θ) invariant for the parameters of the
// sweep, as the flips do (TestSplitMergeMatchesEnumeration). It is made
// before the burn-in sweeps only: a merge and a split can carry a
// program from one code to another, and the sampling sweeps average each
// code's states, so there every code keeps its program. Its
// arithmetic is that of the steps' conditionals (stepSpec.gain), summed
// in the cells' and the genes' order, and its draws are keyed by (seed,
// sweep, proposal, variable): results are the same for any number of
// workers. It needs every cell in one process, and samples' gene levels
// are not weighed by it yet (NewSampler refuses both).

// maxSplitMerge bounds Config.SplitMerge: a proposal costs a few scans of
// its codes' cells and of every gene.
const maxSplitMerge = 1000

// smLaunchScans is the number of restricted Gibbs scans that take a
// split's launch state from its anchors' assignment.
const smLaunchScans = 3

// smCellGrain and smGeneGrain are the fewest cells and genes a worker
// takes in a move's scans: a cell's row costs a pass over the genes, a
// gene's over the words of S.
const (
	smCellGrain = 16
	smGeneGrain = 256
)

// smGolden separates the moves' stream from the steps' (splitMergeKey).
const smGolden = 0x5851f42d4c957f2d

// A proposal's key gives its pair (variable 0), its acceptance (1), its
// anchors (2), the coin between merge and re-split (3) and the anchors'
// ties (4 + the cell's place in S); its
// scans draw from sub-keys, the launch's t-th at smScanKey + t, the
// split's final scan at smScanKey + smLaunchScans and the merge's genes
// one after.
const smScanKey = 1 << 40

// subKey returns the key of a proposal's j-th scan.
func subKey(key uint64, j int) uint64 { return splitmix.At(key, smScanKey+uint64(j)) }

// Choices of the restricted variables, as bits: whether a cell of S uses
// l, m or both (smL|smM), and whether a gene is in l, m or both.
const (
	smL = 1
	smM = 2
)

// smMove is one proposal's workspace: the pair, the cells S and the
// likelihood of the chain's rows.
type smMove struct {
	s      *Sampler
	c      *chain
	zs, us stepSpec // the Z and U steps' likelihood (gain)
	l, m   int
	lm     uint64
	scans  int       // the launch's restricted scans (Sampler.smScans)
	cells  []int     // S, ascending
	words  []segWord // the cell words holding S, ascending, and where XT keeps them
	lp     []float64 // per variable log-probabilities, summed in order
	pick   []uint8   // per variable choices, written into the bitsets after
	lev    []int64   // per cell summed gene levels (energy)
}

// segWord locates cell word w in segment seg of XT, at index k.
type segWord struct{ w, seg, k int }

// smState is a state of the restricted variables.
type smState struct {
	zl, zm []uint64 // over cells
	ul, um []uint64 // over genes
}

// splitMergeKey returns the key of c's split–merge proposals in sweep.
func (s *Sampler) splitMergeKey(c *chain, sweep int) uint64 {
	return splitmix.Mix(streamKey(c.seed, sweep, stepU)^smGolden) | 1
}

// splitMerge makes Config.SplitMerge proposals on c before sweep (a
// burn-in sweep).
func (s *Sampler) splitMerge(c *chain, sweep int) {
	free := s.freeCodes()
	if s.cfg.SplitMerge == 0 || s.above != nil || bits.OnesCount64(free) < 2 {
		return
	}
	key := s.splitMergeKey(c, sweep)
	for p := range s.cfg.SplitMerge {
		k := splitmix.At(key, uint64(p))
		l, m := codePair(free, k)
		s.proposeSplitMerge(c, k, l, m)
	}
}

// codePair returns the ordered pair of distinct codes among free (two or
// more) that a proposal's key draws.
func codePair(free, key uint64) (l, m int) {
	h := bitsAt(key, 0)
	l = nthBit(free, int(h%uint64(bits.OnesCount64(free))))
	rest := free &^ (1 << uint(l))
	return l, nthBit(rest, int((h>>32)%uint64(bits.OnesCount64(rest))))
}

// freeCodes returns the codes a split–merge may change.
func (s *Sampler) freeCodes() uint64 {
	all := uint64(1)<<uint(s.l) - 1
	if s.l == 64 {
		all = ^uint64(0)
	}
	return all &^ s.clamped &^ s.fixedU
}

// proposeSplitMerge makes the proposal keyed by key on the pair (l, m) of
// c and reports whether it was accepted.
func (s *Sampler) proposeSplitMerge(c *chain, key uint64, l, m int) bool {
	cur := s.codeState(c, l, m)
	if isZero(cur.zl) {
		return false
	}
	mv := s.newSMMove(c, l, m, cur)
	takes := func(logA float64) bool { return logA >= 0 || accept(logA, uniformAt(key, 1)) }
	prop, launch, logA := mv.propose(cur, key)
	if prop == nil {
		return false
	}
	eProp, levProp := mv.energy(prop)
	eCur, levCur := mv.energy(cur)
	logA += eProp - eCur
	if !isZero(cur.zm) {
		// A merge's or re-split's reverse: the final scan from the launch
		// to cur, whose probability is at most 1.
		if !takes(logA) {
			return false
		}
		if launch == nil {
			launch = mv.launch(key)
		}
		logA += mv.scan(launch, subKey(key, mv.scans), cur)
	}
	if !takes(logA) {
		return false
	}
	s.setCodeState(c, l, m, prop)
	if c.held {
		c.coveredLev += levProp - levCur
	}
	return true
}

// propose returns the proposal keyed by key from cur, the launch state
// when it built one, and the log-ratio of its proposal probabilities but
// a merge's or re-split's reverse scan; prop is nil for a split that
// leaves a code without cells.
func (mv *smMove) propose(cur *smState, key uint64) (prop, launch *smState, logQ float64) {
	if !isZero(cur.zm) && bitsAt(key, 3)&1 == 0 {
		prop = &smState{zl: mv.union(cur), zm: make([]uint64, len(cur.zm)),
			ul: make([]uint64, len(cur.ul)), um: make([]uint64, len(cur.um))}
		return prop, nil, math.Ln2 - mv.mergeDraw(prop, subKey(key, mv.scans+1), false)
	}
	launch = mv.launch(key)
	prop = launch.clone()
	logQ = -mv.scan(prop, subKey(key, mv.scans), nil)
	if isZero(prop.zl) || isZero(prop.zm) {
		return nil, nil, 0
	}
	if isZero(cur.zm) {
		logQ += mv.mergeDraw(cur, 0, true) - math.Ln2
	}
	return prop, launch, logQ
}

func (st *smState) clone() *smState {
	return &smState{slices.Clone(st.zl), slices.Clone(st.zm), slices.Clone(st.ul), slices.Clone(st.um)}
}

// newSMMove returns the workspace of a proposal on (l, m) of c in state
// cur.
func (s *Sampler) newSMMove(c *chain, l, m int, cur *smState) *smMove {
	mv := &smMove{s: s, c: c, l: l, m: m, lm: 1<<uint(l) | 1<<uint(m), scans: s.smScans}
	mv.zs = s.zStep(c, 0)
	s.setLikelihood(&mv.zs, c)
	mv.us = s.uStep(c, 0)
	s.setLikelihood(&mv.us, c)
	b := s.data.XT.Segments()
	seg := 0
	for w, z := range mv.union(cur) {
		if z == 0 {
			continue
		}
		for b[seg+1] <= 64*w {
			seg++
		}
		mv.words = append(mv.words, segWord{w, seg, w - b[seg]/64})
		for ; z != 0; z &= z - 1 {
			mv.cells = append(mv.cells, 64*w+bits.TrailingZeros64(z))
		}
	}
	// The buffers are the sampler's, reused from proposal to proposal:
	// at 1.3 million cells they would be its largest garbage.
	if n := max(len(mv.cells), s.d); len(s.smBuf.lp) < n {
		s.smBuf.lp, s.smBuf.pick, s.smBuf.lev = make([]float64, n), make([]uint8, n), make([]int64, n)
	}
	mv.lp, mv.pick, mv.lev = s.smBuf.lp, s.smBuf.pick, s.smBuf.lev
	return mv
}

// union returns the cells of st using l or m.
func (mv *smMove) union(st *smState) []uint64 {
	out := make([]uint64, len(st.zl))
	for w := range out {
		out[w] = st.zl[w] | st.zm[w]
	}
	return out
}

// codeState returns codes l and m of c as bitsets.
func (s *Sampler) codeState(c *chain, l, m int) *smState {
	col := func(words []uint64, n, code int) []uint64 {
		out := make([]uint64, n)
		for w := range out {
			out[w] = words[w*s.l+code]
		}
		return out
	}
	return &smState{col(c.z, s.nw, l), col(c.z, s.nw, m), col(c.u, s.dw, l), col(c.u, s.dw, m)}
}

// setCodeState writes st into codes l and m of c.
func (s *Sampler) setCodeState(c *chain, l, m int, st *smState) {
	for w := range s.nw {
		c.z[w*s.l+l], c.z[w*s.l+m] = st.zl[w], st.zm[w]
	}
	for w := range s.dw {
		c.u[w*s.l+l], c.u[w*s.l+m] = st.ul[w], st.um[w]
	}
}

func isZero(ws []uint64) bool {
	for _, w := range ws {
		if w != 0 {
			return false
		}
	}
	return true
}

// launch returns the split's launch state: S divided by two anchor cells
// drawn by key, then smLaunchScans restricted scans. It reads S and the
// data alone, so that a split and the merge that reverses it build the
// same one.
func (mv *smMove) launch(key uint64) *smState {
	s := mv.s
	st := &smState{zl: make([]uint64, s.nw), zm: make([]uint64, s.nw), ul: make([]uint64, s.dw), um: make([]uint64, s.dw)}
	n := len(mv.cells)
	h := bitsAt(key, 2)
	a := int(h % uint64(n))
	b := a
	if n > 1 {
		b = (a + 1 + int((h>>32)%uint64(n-1))) % n
	}
	ra, rb := mv.cellOnes(mv.cells[a]), mv.cellOnes(mv.cells[b])
	na, nb := ones(ra), ones(rb)
	s.forBlocksOf(n, smCellGrain, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			var sa, sb int
			switch k {
			case a:
				sa = 1
			case b:
				sb = 1
			default:
				lineWords(s.data.X, s.data.Mask, mv.cells[k], func(w int, x, _ uint64) {
					sa += bits.OnesCount64(x & ra[w])
					sb += bits.OnesCount64(x & rb[w])
				})
			}
			// Shares of each anchor's ones, compared without division.
			d := sa*max(nb, 1) - sb*max(na, 1)
			switch {
			case d > 0:
				mv.pick[k] = smL
			case d < 0:
				mv.pick[k] = smM
			default:
				mv.pick[k] = smL + uint8(bitsAt(key, 4+uint64(k))&1)
			}
		}
	})
	mv.setCells(st)
	for t := range mv.scans {
		mv.scan(st, subKey(key, t), nil)
	}
	return st
}

// cellOnes returns the observed ones of cell i.
func (mv *smMove) cellOnes(i int) []uint64 {
	row := make([]uint64, mv.s.dw)
	lineWords(mv.s.data.X, mv.s.data.Mask, i, func(w int, x, _ uint64) { row[w] = x })
	return row
}

func ones(row []uint64) int {
	n := 0
	for _, x := range row {
		n += bits.OnesCount64(x)
	}
	return n
}

// setCells writes the cells' choices mv.pick into st.zl and st.zm.
func (mv *smMove) setCells(st *smState) {
	clear(st.zl)
	clear(st.zm)
	for k, i := range mv.cells {
		bit := uint64(1) << uint(i%64)
		if mv.pick[k]&smL != 0 {
			st.zl[i/64] |= bit
		}
		if mv.pick[k]&smM != 0 {
			st.zm[i/64] |= bit
		}
	}
}

// scan runs one restricted Gibbs scan on st, the genes given the cells,
// then the cells given the genes, drawn by key, and returns the log
// probability of its outcome. With target it draws nothing: it scores
// target's genes and cells, and leaves st at target.
func (mv *smMove) scan(st *smState, key uint64, target *smState) float64 {
	return mv.geneHalf(st, key, target) + mv.cellHalf(st, key, target)
}

// geneHalf draws (or scores) every gene's (u_l, u_m) given st's cells.
func (mv *smMove) geneHalf(st *smState, key uint64, target *smState) float64 {
	s := mv.s
	s.forBlocksOf(s.d, smGeneGrain, func(lo, hi int) {
		var w [4]float64
		for d := lo; d < hi; d++ {
			sl, sm, sb := mv.geneSums(d, st.zl, st.zm)
			w[1] = mv.us.gain(d, sl) + s.logitU[mv.l]
			w[2] = mv.us.gain(d, sm) + s.logitU[mv.m]
			w[3] = mv.us.gain(d, sb) + s.logitU[mv.l] + s.logitU[mv.m]
			want := -1
			if target != nil {
				want = int(target.ul[d/64]>>uint(d%64)&1 | target.um[d/64]>>uint(d%64)&1<<1)
			}
			c, lp := choose(w[:], uniformAt(key, uint64(d)), want)
			mv.pick[d], mv.lp[d] = uint8(c), lp
		}
	})
	clear(st.ul)
	clear(st.um)
	total := 0.0
	for d := range s.d {
		bit := uint64(1) << uint(d%64)
		if mv.pick[d]&smL != 0 {
			st.ul[d/64] |= bit
		}
		if mv.pick[d]&smM != 0 {
			st.um[d/64] |= bit
		}
		total += mv.lp[d]
	}
	return total
}

// cellHalf draws (or scores) every cell of S's choice given st's genes.
func (mv *smMove) cellHalf(st *smState, key uint64, target *smState) float64 {
	s := mv.s
	s.forBlocksOf(len(mv.cells), smCellGrain, func(lo, hi int) {
		var w [3]float64
		for k := lo; k < hi; k++ {
			i := mv.cells[k]
			sl, sm, sb := mv.cellSums(i, st)
			w[0] = mv.zs.gain(i, sl) + s.logitZ[mv.l]
			w[1] = mv.zs.gain(i, sm) + s.logitZ[mv.m]
			w[2] = mv.zs.gain(i, sb) + s.logitZ[mv.l] + s.logitZ[mv.m]
			want := -1
			if target != nil {
				want = int(target.zl[i/64]>>uint(i%64)&1|target.zm[i/64]>>uint(i%64)&1<<1) - 1
			}
			c, lp := choose(w[:], uniformAt(key, uint64(s.d+i)), want)
			mv.pick[k], mv.lp[k] = uint8(c+1), lp
		}
	})
	mv.setCells(st)
	total := 0.0
	for k := range mv.cells {
		total += mv.lp[k]
	}
	return total
}

// mergeDraw draws (with score false) or scores (true) st's genes given its
// cells, all of them l's: u_l from its conditional, u_m from its prior
// (no cell uses m). It returns the log-probability of the outcome.
func (mv *smMove) mergeDraw(st *smState, key uint64, score bool) float64 {
	s := mv.s
	pm := 1 / (1 + math.Exp(-s.logitU[mv.m]))
	s.forBlocksOf(s.d, smGeneGrain, func(lo, hi int) {
		for d := lo; d < hi; d++ {
			sl, _, _ := mv.geneSums(d, st.zl, st.zm)
			w := [2]float64{0, mv.us.gain(d, sl) + s.logitU[mv.l]}
			wl, wm := -1, -1
			if score {
				wl, wm = int(st.ul[d/64]>>uint(d%64)&1), int(st.um[d/64]>>uint(d%64)&1)
			}
			cl, lp := choose(w[:], uniformAt(key, uint64(2*d)), wl)
			if wm < 0 {
				wm = b2i(uniformAt(key, uint64(2*d+1)) < pm)
			}
			if wm == 1 {
				lp += math.Log(pm)
			} else {
				lp += math.Log1p(-pm)
			}
			mv.pick[d], mv.lp[d] = uint8(cl|wm<<1), lp
		}
	})
	total := 0.0
	for d := range s.d {
		bit := uint64(1) << uint(d%64)
		st.ul[d/64] = st.ul[d/64]&^bit | uint64(mv.pick[d]&1)<<uint(d%64)
		st.um[d/64] = st.um[d/64]&^bit | uint64(mv.pick[d]>>1)<<uint(d%64)
		total += mv.lp[d]
	}
	return total
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// choose returns a state drawn by u from the log-weights w (or, with
// want ≥ 0, want) and its log-probability.
func choose(w []float64, u float64, want int) (int, float64) {
	top := slices.Max(w)
	z := 0.0
	for _, v := range w {
		z += math.Exp(v - top)
	}
	logZ := top + math.Log(z)
	if want < 0 {
		want = len(w) - 1
		acc := 0.0
		for k, v := range w {
			acc += math.Exp(v - logZ)
			if u < acc {
				want = k
				break
			}
		}
	}
	return want, w[want] - logZ
}

// energy returns the log-density of st's restricted variables, up to a
// constant of the other codes, and the summed gene level of the ones
// their codes alone cover (stepSpec.trackLev).
func (mv *smMove) energy(st *smState) (float64, int64) {
	s := mv.s
	lev := mv.lev
	s.forBlocksOf(len(mv.cells), smCellGrain, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			i := mv.cells[k]
			sl, sm, sb := mv.cellSums(i, st)
			zl, zm := st.zl[i/64]>>uint(i%64)&1 != 0, st.zm[i/64]>>uint(i%64)&1 != 0
			var t entrySums
			e := 0.0
			switch {
			case zl && zm:
				t, e = sb, s.logitZ[mv.l]+s.logitZ[mv.m]
			case zl:
				t, e = sl, s.logitZ[mv.l]
			case zm:
				t, e = sm, s.logitZ[mv.m]
			}
			mv.lp[k], lev[k] = e+mv.zs.gain(i, t), int64(t.lev)
		}
	})
	total, levels := 0.0, int64(0)
	for k := range mv.cells {
		total += mv.lp[k]
		levels += lev[k]
	}
	for w := range s.dw {
		total += float64(bits.OnesCount64(st.ul[w]))*s.logitU[mv.l] + float64(bits.OnesCount64(st.um[w]))*s.logitU[mv.m]
	}
	return total, levels
}

// cellSums returns, for cell i, the observed entries that l, m and both
// would cover beyond the cell's other codes, with st's genes.
func (mv *smMove) cellSums(i int, st *smState) (sl, sm, sb entrySums) {
	s, c := mv.s, mv.c
	other := s.rowCodes(c, i) &^ mv.lm
	planes := s.cellGenePlanes(c, i)
	lineWords(s.data.X, s.data.Mask, i, func(w int, x, obs uint64) {
		var r uint64
		for a := other; a != 0; a &= a - 1 {
			r |= c.u[w*s.l+bits.TrailingZeros64(a)]
		}
		free := obs &^ r
		gl, gm := st.ul[w]&free, st.um[w]&free
		sl.add(x, gl, planes, w)
		sm.add(x, gm, planes, w)
		sb.add(x, gl|gm, planes, w)
	})
	return sl, sm, sb
}

// geneSums returns, for gene d, the observed entries of the cells zl,
// zm and either that code l or m of d would cover beyond the cells' other
// codes.
func (mv *smMove) geneSums(d int, zl, zm []uint64) (sl, sm, sb entrySums) {
	s, c := mv.s, mv.c
	var other uint64
	for l := range s.l {
		other |= (c.u[d/64*s.l+l] >> uint(d%64) & 1) << uint(l)
	}
	other &^= mv.lm
	xt, mt := s.data.XT, s.data.MaskT
	var xs, ms []uint64
	seg := -1
	for _, sw := range mv.words {
		if sw.seg != seg {
			seg, xs = sw.seg, xt.Segment(d, sw.seg)
			if mt != nil {
				ms = mt.Segment(d, sw.seg)
			}
		}
		w, x, obs := sw.w, xs[sw.k], ^uint64(0)
		if ms != nil {
			obs = ms[sw.k]
		}
		var r uint64
		for a := other; a != 0; a &= a - 1 {
			r |= c.z[w*s.l+bits.TrailingZeros64(a)]
		}
		free := obs &^ r
		cl, cm := zl[w]&free, zm[w]&free
		sl.add(x, cl, c.liftPlanes, w)
		sm.add(x, cm, c.liftPlanes, w)
		sb.add(x, cl|cm, c.liftPlanes, w)
	}
	return sl, sm, sb
}

// add adds to t the entries g of a word whose ones are x, and their
// ones' summed level from the level planes (none: level 0).
func (t *entrySums) add(x, g uint64, planes [][]uint64, w int) {
	t.all += int64(bits.OnesCount64(g))
	if o := x & g; o != 0 {
		t.ones += int64(bits.OnesCount64(o))
		for j, p := range planes {
			t.lev += uint64(bits.OnesCount64(o&p[w])) << uint(j)
		}
	}
}

// lineWords calls f with each word w of row i of m: its observed ones x
// and its observed entries obs (mask nil: every entry).
func lineWords(m, mask BitMatrix, i int, f func(w int, x, obs uint64)) {
	b := m.Segments()
	for seg := 0; seg+1 < len(b); seg++ {
		xs := m.Segment(i, seg)
		var ms []uint64
		if mask != nil {
			ms = mask.Segment(i, seg)
		}
		w0 := b[seg] / 64
		for k, xw := range xs {
			obs := ^uint64(0)
			if ms != nil {
				obs = ms[k]
			} else if r := b[seg+1] - 64*(w0+k); r < 64 {
				obs = 1<<uint(r) - 1
			}
			f(w0+k, xw&obs, obs)
		}
	}
}
