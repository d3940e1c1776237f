package gibbs

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Samples of cells (Config.CellSamples): the cells fall into S technical
// groups, libraries or lanes or donors, each a contiguous run of cells,
// and with per-gene levels each sample has its own: gene d's level in a
// cell of sample s is k_{d,s}, and the gain of a covered one is
//
//	g(n, d) = lift0 + step·k_n + gene0 + geneStep·k_{d,s(n)}.
//
// A sample with more ambient RNA shows its ambient genes in every cell at
// a higher background; with one level per gene those ones are explained
// best by a code that the sample's cells use, a program that is a batch
// effect. The cells' levels already take a sample's depth and overall
// background; the genes' per-sample levels take its ambient profile.
// The grid (gene0, geneStep) is shared by the samples.
//
// The conditionals. In the Z step (a cell's row of sample s) the genes'
// levels along the row are sample s's: the kernel sums Σ_j 2^j·o_j over
// sample s's gene planes, as over the genes' planes without samples. In
// the U step (gene d's row over the cells) the ones' sum is
//
//	lift0·o + step·Σ_j 2^j·o_j + Σ_s (gene0 + geneStep·k_{d,s})·o_s,
//
// o_s the ones that the code alone decides in sample s's cells: the step
// scans each sample's columns apart (scanBySample), the whole words with
// the step's kernel and the word a sample boundary splits with the Go
// kernel under the sample's part of the mask. Every term is a count and
// the sum runs in sample order, so the conditional is the same for any
// kernel and number of workers. A partitioned fit's process scans its own
// cells of each sample, and the ones each code alone decides in each
// sample are summed across the processes before the code is decided
// (runStepPart), as the U step's counts per sample are before the levels
// are set: the conditional is the same for any number of processes.
//
// The levels are set, as the genes' are without samples, after the sweeps
// from schedule.genesFrom until Config.HoldFrom and held after it
// (updateSampleGeneLevels): sample s's background of gene d is the
// frequency of ones among its uncovered entries in s's cells, shrunk
// towards the gene's over every sample by sampleShrink·N_s entries (which
// is itself shrunk towards the pooled background as genelevels.go says).
// The exact log-likelihood counts the entries by cell level and the gene
// level of the cell's sample (exactlik.go reads the planes of each cell's
// sample).
//
// A sample is a technical grouping. A condition the study compares
// (treated against control) must not be declared one: a program of the
// treated cells alone would be absorbed into their genes' background.

// sampleShrink is the weight, in entries per cell of the sample, of a
// gene's background over every sample in its background in one sample:
// a sample's gene moves two thirds of the way from the gene's background
// to its own when every entry is uncovered.
const sampleShrink = 0.5

// sampleModel holds a Sampler's samples and the per-sample counts of its
// steps (nil without samples).
type sampleModel struct {
	S    int
	cell []uint16 // each cell's sample (Config.CellSamples)
	lo   []int    // lo[s]: sample s's first cell; lo[S] = N
	d    int
	// ones and obs count each gene's observed ones and entries in each
	// sample's cells, at s·D + d.
	ones, obs []int32
	// A partitioned fit's process scans its own cells, from base: loc[s]
	// is sample s's first among them (lo less base, within them), and
	// ownOnes and ownObs count its cells as ones and obs count every
	// cell. A single process's are lo, ones and obs themselves.
	base            int
	loc             []int
	ownOnes, ownObs []int32
	// rowCounts holds the U step's counts of each gene in each sample's
	// cells, at d·S + s (packCounts: mispredicted, covered); stepOnes the
	// ones that code l alone decides in row d in sample s's cells, at
	// (d·L + l)·S + s, as of the row's last scan.
	rowCounts []uint64
	stepOnes  []int64
	// levelCount holds, per sample, codeLevelCounts over its gene planes
	// (the Z step's bounds).
	levelCount [][MaxL][1 << MaxCellLevelBits]int64
}

// checkCellSamples reports whether samples numbers contiguous runs of
// cells 0, 1, …, in order.
func checkCellSamples(samples []uint16) error {
	for i, v := range samples {
		switch {
		case i == 0 && v != 0:
			return fieldError("CellSamples", "start with sample %d, want 0", v)
		case i > 0 && v != samples[i-1] && v != samples[i-1]+1:
			return fieldError("CellSamples", "go from sample %d to %d at cell %d: each sample's cells must be one run, the samples in order", samples[i-1], v, i)
		}
	}
	return nil
}

// setSamples sets up s's samples from Config.CellSamples: none with fewer
// than two, or without per-gene levels, whose likelihood they are part of.
func (s *Sampler) setSamples(p *Part) error {
	cs := s.cfg.CellSamples
	if len(cs) == 0 || s.cfg.GeneLevelBits == 0 || cs[len(cs)-1] == 0 {
		return nil
	}
	if len(cs) != s.n {
		return fmt.Errorf("%w: %d cell samples for %d cells", errShape, len(cs), s.n)
	}
	S := int(cs[len(cs)-1]) + 1
	m := &sampleModel{S: S, cell: cs, lo: make([]int, S+1), d: s.d,
		levelCount: make([][MaxL][1 << MaxCellLevelBits]int64, S)}
	for i := 1; i < len(cs); i++ {
		if cs[i] != cs[i-1] {
			m.lo[cs[i]] = i
		}
	}
	m.lo[S] = s.n
	first, last := s.cellRange()
	m.base, m.loc = first, make([]int, S+1)
	for smp, v := range m.lo {
		m.loc[smp] = min(max(v-first, 0), last-first)
	}
	xt, maskT := s.data.XT, s.data.MaskT
	if q := s.part; q != nil {
		xt, maskT = q.xt, q.maskT
	}
	m.ownOnes, m.ownObs = sampleGeneCounts(xt, maskT, m.loc, s.d, last-first)
	m.ones, m.obs = m.ownOnes, m.ownObs
	if q := s.part; q != nil {
		m.ones, m.obs = slices.Clone(m.ownOnes), slices.Clone(m.ownObs)
		sumAcross(q, m.ones)
		sumAcross(q, m.obs)
		if q.err != nil {
			return q.err
		}
	}
	m.rowCounts = make([]uint64, s.d*S)
	m.stepOnes = make([]int64, s.d*s.l*S)
	s.smp = m
	return nil
}

// sampleGeneCounts returns each gene's observed ones and entries in each
// sample's cells of xt's n columns (cells), at s·D + d, sample s's cells
// being columns [lo[s], lo[s+1]).
func sampleGeneCounts(xt, maskT BitMatrix, lo []int, D, n int) (ones, obs []int32) {
	S := len(lo) - 1
	ones, obs = make([]int32, S*D), make([]int32, S*D)
	for d := range D {
		for seg, b := 0, xt.Segments(); seg+1 < len(b); seg++ {
			x := xt.Segment(d, seg)
			var mask []uint64
			if maskT != nil {
				mask = maskT.Segment(d, seg)
			}
			for k, xw := range x {
				w := b[seg]/64 + k
				for smp := range S {
					mk := wordMask(w, lo[smp], lo[smp+1])
					if mk == 0 {
						continue
					}
					ob := mk & colMask(w, n)
					if mask != nil {
						ob = mk & mask[k]
					}
					ones[smp*D+d] += int32(bits.OnesCount64(xw & ob))
					obs[smp*D+d] += int32(bits.OnesCount64(ob))
				}
			}
		}
	}
	return ones, obs
}

// whole returns m as a single process's over every cell (the whole fit
// that a partitioned one gathers).
func (m *sampleModel) whole() *sampleModel {
	w := *m
	w.base, w.loc, w.ownOnes, w.ownObs = 0, m.lo, m.ones, m.obs
	return &w
}

// wordMask returns the bits of word w that lie in columns [lo, hi).
func wordMask(w, lo, hi int) uint64 {
	a, b := max(lo-64*w, 0), min(hi-64*w, 64)
	if a >= b {
		return 0
	}
	m := ^uint64(0) << uint(a)
	if b < 64 {
		m &= 1<<uint(b) - 1
	}
	return m
}

// colMask returns the bits of word w that lie below column n.
func colMask(w, n int) uint64 { return wordMask(w, 0, n) }

// sampleCount returns the number of samples the likelihood knows, 1
// without them.
func (s *Sampler) sampleCount() int {
	if s.smp == nil {
		return 1
	}
	return s.smp.S
}

// geneLevelAt returns the index, in chain.geneLevel, of gene d's level in
// the process's i-th cell: d without samples.
func (s *Sampler) geneLevelAt(i, d int) int {
	if s.smp == nil {
		return d
	}
	return int(s.smp.cell[s.smp.base+i])*s.d + d
}

// cellGenePlanes returns the gene planes of c that the process's i-th cell
// reads.
func (s *Sampler) cellGenePlanes(c *chain, i int) [][]uint64 {
	if s.smp == nil {
		return c.genePlanes
	}
	return c.samplePlanes[s.smp.cell[s.smp.base+i]]
}

// setSamplePlanes writes each sample's gene levels of c as bit planes over
// the genes; sample 0's are also c.genePlanes.
func (s *Sampler) setSamplePlanes(c *chain) {
	S := s.smp.S
	if len(c.samplePlanes) != S {
		c.samplePlanes, c.sampleBlocks = make([][][]uint64, S), make([][]uint64, S)
	}
	for smp := range S {
		s.writePlanes(&c.sampleBlocks[smp], &c.samplePlanes[smp], c.geneLevel[smp*s.d:(smp+1)*s.d], s.cfg.GeneLevelBits, s.dw)
	}
	c.genePlanes, c.geneBlock = c.samplePlanes[0], c.sampleBlocks[0]
}

// stepSamples gives a step the samples' part of a chain's likelihood.
type stepSamples struct {
	m     *sampleModel
	level []uint8 // the chain's gene levels, at s·D + d
	// planes and blocks hold each sample's gene planes (a Z step).
	planes [][][]uint64
	blocks [][]uint64
	// summed: the step's stepOnes are sums over every process's cells.
	summed bool
}

// setSampleLikelihood gives sp, a step of c with samples, their part of
// the likelihood.
func (s *Sampler) setSampleLikelihood(sp *stepSpec, c *chain) {
	sp.smp = &stepSamples{m: s.smp, level: c.geneLevel, planes: c.samplePlanes, blocks: c.sampleBlocks}
	sp.rowGene = nil
}

// prepareSamples finishes prepareStep for a step with samples: a Z step's
// bounds per sample; a U step scans each sample apart, without the totals
// cache, whose counts are the whole row's (the housekeeping fold takes
// each sample's counts of the row, unfoldSample).
func (sp *stepSpec) prepareSamples() {
	if sp.cells {
		if sp.bounded {
			for smp, p := range sp.smp.planes {
				codeLevelCounts(&sp.smp.m.levelCount[smp], sp.other, sp.L, sp.live, p)
			}
		}
		return
	}
	sp.totals = nil
}

// rowLift returns the lift planes of row i of sp, and their block.
func (sp *stepSpec) rowLift(i int) ([][]uint64, []uint64) {
	if sp.smp == nil || !sp.cells {
		return sp.lift, sp.liftBlock
	}
	smp := sp.smp.m.cell[sp.base+i]
	return sp.smp.planes[smp], sp.smp.blocks[smp]
}

// levelCountOf returns the counts of code l's columns by level that row i
// reads (codeLevelCounts).
func (sp *stepSpec) levelCountOf(l, i int) *[1 << MaxCellLevelBits]int64 {
	if sp.smp != nil && sp.cells {
		return &sp.smp.m.levelCount[sp.smp.m.cell[sp.base+i]][l]
	}
	return &sp.levelCount[l]
}

// sampleOnesGain returns, in a U step with samples, the gain of the ones
// that code l alone decides in row (gene) i at their samples' levels, less
// the cells' part: Σ_s (lift0 + gene0 + geneStep·k_{i,s})·o_s.
func (sp *stepSpec) sampleOnesGain(l, i int) float64 {
	m := sp.smp.m
	t := 0.0
	for smp, o := range sp.sampleOnes(l, i) {
		t += float64(sp.geneOne[sp.smp.level[smp*m.d+i]] * float64(o))
	}
	return t
}

// sampleOnes returns the ones that code l alone decides in row (gene) i of
// a U step with samples, in each sample's cells: none where no cell uses
// the code, which decides nothing there and whose counts no scan set. In
// a partitioned fit they are the sums over every process's cells
// (runStepPart), whatever codes the process's own cells use.
func (sp *stepSpec) sampleOnes(l, i int) []int64 {
	m := sp.smp.m
	if sp.live>>uint(l)&1 == 0 && !sp.smp.summed {
		return nil
	}
	return m.stepOnes[(i*sp.L+l)*m.S:][:m.S]
}

// sampleFlipLev is flipLev in a U step with samples: Σ_s k_{i,s}·o_s.
func (sp *stepSpec) sampleFlipLev(l, i int) int64 {
	m := sp.smp.m
	var t int64
	for smp, o := range sp.sampleOnes(l, i) {
		t += int64(sp.smp.level[smp*m.d+i]) * o
	}
	return t
}

// scanBySample is scan for a U step with samples: each sample's columns
// apart, so that the ones each code alone decides are known per sample
// (stepOnes), and the row's counts per sample (rowCounts). A sample's
// whole words go to the step's kernel, and a word a sample boundary splits
// to the Go kernel under the sample's bits of the mask; counts are
// integers, so the sums are those of one scan of the row.
func (sp *stepSpec) scanBySample(buf *rowScratch, i0 int, rows []rowState, pending uint64) {
	L, m := sp.L, sp.smp.m
	vec := sp.planes != nil
	var before [rowGroup][MaxL]uint64
	var active [rowGroup]uint64 // the codes whose coverage the kernel builds
	for p := pending; p != 0; p &= p - 1 {
		k := bits.TrailingZeros64(p)
		active[k] = sp.startScan(&rows[k])
	}
	for smp := range m.S {
		lo, hi := m.loc[smp], m.loc[smp+1]
		var counts [rowGroup]uint64
		for p := pending; p != 0; p &= p - 1 {
			k := bits.TrailingZeros64(p)
			before[k] = rows[k].acc
			if vec {
				buf.vrows[k].prepare(active[k], rows[k].sums, sp.stride)
			}
		}
		for seg := 0; seg+1 < len(sp.bounds); seg++ {
			a, b := max(lo, sp.bounds[seg]), min(hi, sp.bounds[seg+1])
			if a >= b {
				continue
			}
			for p := pending; p != 0; p &= p - 1 {
				k := bits.TrailingZeros64(p)
				counts[k] += sp.scanPiece(buf, &rows[k], k, i0+k, seg, a, b, active[k])
			}
		}
		for p := pending; p != 0; p &= p - 1 {
			k := bits.TrailingZeros64(p)
			r := &rows[k]
			if vec {
				buf.vrows[k].add(&r.acc, &r.lev)
			}
			i := i0 + k
			if sp.hk != 0 && !r.lifted {
				sp.unfoldSample(r, i, smp, &counts[k])
			}
			for w := r.want; w != 0; w &= w - 1 {
				l := bits.TrailingZeros64(w)
				ones, _ := splitCounts(r.acc[l] - before[k][l])
				m.stepOnes[(i*L+l)*m.S+smp] = ones
			}
			m.rowCounts[i*m.S+smp] = counts[k]
			r.counts += counts[k]
		}
	}
}

// scanPiece scans columns [a, b) of row i (r, the group's k-th) in
// segment seg, and returns their counts (packCounts: mispredicted,
// covered).
func (sp *stepSpec) scanPiece(buf *rowScratch, r *rowState, k, i, seg, a, b int, active uint64) uint64 {
	off := sp.bounds[seg] / 64
	x := sp.m.Segment(i, seg)
	var obs []uint64
	if sp.mask != nil {
		obs = sp.mask.Segment(i, seg)
	}
	var counts uint64
	w := a / 64
	if a%64 != 0 {
		counts += sp.scanWord(r, w, off, x, obs, wordMask(w, a, b), active)
		w++
	}
	if end := b / 64; end > w {
		counts += sp.scanWords(buf, r, k, w, end, off, x, obs, active)
		w = end
	}
	if b%64 != 0 && b/64 >= w {
		counts += sp.scanWord(r, b/64, off, x, obs, wordMask(b/64, a, b), active)
	}
	return counts
}

// scanWords scans whole words [w0, w1) of a segment starting at word off
// with the step's kernel.
func (sp *stepSpec) scanWords(buf *rowScratch, r *rowState, k, w0, w1, off int, x, obs []uint64, active uint64) uint64 {
	L := sp.L
	xs := x[w0-off : w1-off]
	if sp.planes != nil {
		var os []uint64
		if obs != nil {
			os = obs[w0-off : w1-off]
		}
		v := &buf.vrows[k]
		if r.lifted {
			return v.scanLift(sp.kernel, &buf.vec, sp.planes[w0:], xs, os, sp.liftBlock[w0:], sp.liftStride)
		}
		return v.scan(sp.kernel, &buf.vec, sp.planes[w0:], xs, os)
	}
	os := sp.ones[:len(xs)]
	if obs != nil {
		os = obs[w0-off : w1-off]
	}
	codes := sp.other[w0*L : w1*L]
	if r.lifted {
		for j, p := range sp.lift {
			buf.lift[j] = p[w0:w1]
		}
		return condSumsLift(&r.acc, &r.lev, r.a&sp.live, r.want, L, codes, xs, os, buf.lift[:len(sp.lift)])
	}
	return condSumsMode(&r.acc, active, r.sums, L, codes, xs, os, true)
}

// scanWord scans the columns mask of word w with the Go kernel, whatever
// the step's.
func (sp *stepSpec) scanWord(r *rowState, w, off int, x, obs []uint64, mask uint64, active uint64) uint64 {
	L := sp.L
	ob := [1]uint64{mask}
	if obs != nil {
		ob[0] &= obs[w-off]
	}
	codes := sp.other[w*L : (w+1)*L]
	xs := x[w-off : w-off+1]
	if r.lifted {
		var lift [MaxCellLevelBits][]uint64
		for j, p := range sp.lift {
			lift[j] = p[w : w+1]
		}
		return condSumsLift(&r.acc, &r.lev, r.a&sp.live, r.want, L, codes, xs, ob[:], lift[:len(sp.lift)])
	}
	return condSumsMode(&r.acc, active, r.sums, L, codes, xs, ob[:], true)
}

// unfoldSample is unfoldHousekeeping for sample smp's columns of row i,
// whose counts the kernel left in *counts: the housekeeping code's sum
// there, when wanted, and the counts when it is active, from the row's
// observed ones and entries in the sample's cells.
func (sp *stepSpec) unfoldSample(r *rowState, i, smp int, counts *uint64) {
	m := sp.smp.m
	miss, covered := splitCounts(*counts)
	ones, obs := int64(m.ownOnes[smp*m.d+i]), int64(m.ownObs[smp*m.d+i])
	if r.want&sp.hk != 0 {
		r.acc[bits.TrailingZeros64(sp.hk)] += packCounts(ones-(ones+covered-miss)/2, obs-covered)
	}
	if r.a&sp.hk != 0 {
		*counts = packCounts(obs-ones, obs)
	}
}

// updateSampleGeneLevels is updateGeneLevels with samples: each gene's
// level in each sample, from the U step's counts of gene d in sample s's
// cells, counts[d·S + s] (packCounts: mispredicted, covered; see the
// comment at the top of the file).
func (s *Sampler) updateSampleGeneLevels(c *chain, counts []uint64) {
	m, K, S, D := s.smp, s.geneLevels(), s.smp.S, s.d
	rho := c.rates.rho
	pairs := make([]levelCounts, S*D)
	dev, sorted := make([]float64, S*D), make([]float64, S*D)
	var uncOnes, uncAll float64
	for d := range D {
		for smp := range S {
			miss, covered := splitCounts(counts[d*S+smp])
			t := tally{observed: int64(m.obs[smp*D+d]), ones: int64(m.ones[smp*D+d]), covered: covered, miss: miss}
			co, cz, uo, uz := t.split()
			pairs[smp*D+d] = levelCounts{float64(co), float64(cz), float64(uo), float64(uz)}
			uncOnes += float64(uo)
			uncAll += float64(uo + uz)
		}
	}
	pooled := (uncOnes + 0.5) / (uncAll + 1)
	ref := gainOf(pooled, rho)
	shrink := geneShrink * float64(s.n)
	for d := range D {
		var o, all float64
		for smp := range S {
			g := pairs[smp*D+d]
			o += g.uncOnes
			all += g.uncOnes + g.uncZeros
		}
		gene := (o + shrink*pooled) / (all + shrink)
		for smp := range S {
			g := pairs[smp*D+d]
			w := sampleShrink * float64(m.lo[smp+1]-m.lo[smp])
			b := (g.uncOnes + w*gene) / (g.uncOnes + g.uncZeros + w)
			dev[smp*D+d] = gainOf(min(max(b, 1e-9), 1-1e-9), rho) - ref
		}
	}
	copy(sorted, dev)
	slices.Sort(sorted)
	n := len(sorted)
	lo, hi := sorted[n*2/100], sorted[(n-1)*98/100]
	step := max((hi-lo)/float64(max(K-1, 1)), minLiftStep)
	for k, v := range dev {
		c.geneLevel[k] = uint8(min(max(math.Round((v-lo)/step), 0), float64(K-1)))
	}
	c.rates.gene0, c.rates.geneStep = lo+s.calibrate(pairs, c.geneLevel, rho, ref, lo, step), step
	c.rates.gene0 = max(c.rates.gene0, minLift-c.rates.lift0)
	s.setGenePlanes(c)
}

// sampleResult gives r each gene's offset in each sample of c, and as
// GeneLift their mean over the cells.
func (s *Sampler) sampleResult(r *Result, c *chain) {
	m := s.smp
	r.CellSamples = m.cell
	r.SampleGeneLift = make([][]float64, m.S)
	for d := range r.GeneLift {
		r.GeneLift[d] = 0
	}
	for smp := range m.S {
		lift := make([]float64, s.d)
		w := float64(m.lo[smp+1]-m.lo[smp]) / float64(s.n)
		for d := range lift {
			lift[d] = c.rates.geneLift(c.geneLevel[smp*s.d+d])
			r.GeneLift[d] += w * lift[d]
		}
		r.SampleGeneLift[smp] = lift
	}
}
