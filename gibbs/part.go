package gibbs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// Reducer joins the processes of a partitioned fit. SumInt64 sums vectors
// element-wise, in place: on return every process holds the same sums.
// GatherBytes collects every process's bytes (of any length) into root,
// which gets them in the order of the processes' numbers; the others get
// nil. All processes call them the same number of times in the same
// order, SumInt64 with vectors of the same length. A reduction takes no
// context: a process that abandoned one would leave the others waiting in
// it, so a fit stops only between sweeps, where its processes agree to
// (PartSampler.Run).
type Reducer interface {
	SumInt64(v []int64) error
	GatherBytes(root int, b []byte) ([][]byte, error)
}

// Part is a process's share of a partitioned fit: cells [Lo, Hi) of the
// data, and the Reducer joining it to the others. Lo and Hi must be
// multiples of 64 (Hi may be the number of cells) and column boundaries of
// XT's segments (the shards' cell blocks), so that the process reads only
// whole segments of XT and whole words of Z.
type Part struct {
	Lo, Hi int
	Reduce Reducer
}

// errPart is wrapped by the errors about a partitioned fit's settings.
var errPart = errors.New("gibbs: partitioned fit")

// ErrOtherStopped is returned by the processes of a partitioned fit whose
// context was not done when another process's was: all of them stop
// between the same two sweeps.
var ErrOtherStopped = errors.New("gibbs: another process of the fit was stopped")

// part is a Sampler's Part with the views of its data.
type part struct {
	Part
	seg0, seg1 int       // XT's segments of the range
	x, mask    BitMatrix // rows [Lo, Hi) of X and Mask
	xt, maskT  BitMatrix // columns [Lo, Hi) of XT and MaskT
	gathered   int       // the sweep at the last Gather (−1: none)
	whole      *Sampler  // the fit Gather collected into the first process (nil in the others)
	err        error     // the first reduction error of a sweep
	rows       []rowState
	buf        []int64
	// calls, words and spent measure the reductions made so far.
	calls, words int64
	spent        time.Duration
}

// PartSampler is the sampler of one process of a partitioned fit: it
// sweeps the cells of its Part beside the other processes, and Gather
// collects the whole fit into the first process (Whole) for its results
// and final state. It is not safe for concurrent use.
type PartSampler struct {
	s *Sampler
}

// NewPartSampler returns the sampler of one process of a partitioned fit:
// NewSampler's, for the cells of p. Every process must be given the same
// data shapes, cfg and number of calls. It supports Symmetric and Dropout
// noise, per-cell levels, masks, housekeeping codes, multiple starts and
// every Init: the whole model. Seeding the starts stops, in every process
// together, when ctx of any one is done.
func NewPartSampler(ctx context.Context, data Data, cfg Config, p Part) (*PartSampler, error) {
	if p.Reduce == nil {
		return nil, fmt.Errorf("%w: no Reducer", errPart)
	}
	s, err := newSampler(ctx, data, cfg, &p)
	if err != nil {
		return nil, err
	}
	return &PartSampler{s: s}, nil
}

// Run runs the remaining sweeps as Sampler.Run does, in step with the
// other processes; the results come from Whole after Gather. Before each
// sweep the processes agree whether any one's ctx is done, and then all
// stop: that one returns ctx.Err(), the others ErrOtherStopped.
func (q *PartSampler) Run(ctx context.Context, onSweep func(SweepStats) error) error {
	return q.s.Run(ctx, onSweep)
}

// Sweep returns the number of completed sweeps.
func (q *PartSampler) Sweep() int { return q.s.Sweep() }

// Sweeps returns the total number of sweeps as far as they are known, as
// Sampler.Sweeps: it grows while a burn-in run on by MaxBurnIn discards
// windows of samples.
func (q *PartSampler) Sweeps() int { return q.s.Sweeps() }

// Kernel returns the name of the sweep kernel in use.
func (q *PartSampler) Kernel() string { return q.s.Kernel() }

// UnmarshalBinary restores the state every process holds alike from a
// whole state (Sampler.MarshalBinary, or Whole's) or the shared piece of
// a checkpoint in pieces (MarshalShared), with the process's cells from
// the former; UnmarshalPart then sets them from the latter's parts.
func (q *PartSampler) UnmarshalBinary(data []byte) error { return q.s.UnmarshalBinary(data) }

// UnmarshalPart sets those of the process's cells that a part encoded by
// MarshalPart holds, as Sampler.UnmarshalPart does.
func (q *PartSampler) UnmarshalPart(data []byte) (lo, hi int, err error) {
	return q.s.UnmarshalPart(data)
}

// newPart checks p against the data and returns its views.
func newPart(p *Part, data Data) (*part, error) {
	n := data.X.Rows()
	if p.Lo < 0 || p.Lo >= p.Hi || p.Hi > n || p.Lo%64 != 0 || (p.Hi%64 != 0 && p.Hi != n) {
		return nil, fmt.Errorf("%w: cells [%d, %d) of %d: want a non-empty range of whole 64-cell words", errPart, p.Lo, p.Hi, n)
	}
	b := data.XT.Segments()
	s0, s1 := -1, -1
	for s, v := range b {
		if v == p.Lo {
			s0 = s
		}
		if v == p.Hi {
			s1 = s
		}
	}
	if s0 < 0 || s1 < 0 {
		return nil, fmt.Errorf("%w: cells [%d, %d) do not start and end at cell blocks of XT (boundaries %v)", errPart, p.Lo, p.Hi, b)
	}
	q := &part{Part: *p, seg0: s0, seg1: s1, gathered: -1}
	q.x = rowView{data.X, p.Lo, p.Hi}
	q.xt = newColView(data.XT, s0, s1)
	if data.Mask != nil {
		q.mask = rowView{data.Mask, p.Lo, p.Hi}
		q.maskT = newColView(data.MaskT, s0, s1)
	}
	return q, nil
}

// rowView is rows [lo, hi) of a BitMatrix.
type rowView struct {
	m      BitMatrix
	lo, hi int
}

func (v rowView) Rows() int                 { return v.hi - v.lo }
func (v rowView) Cols() int                 { return v.m.Cols() }
func (v rowView) Segments() []int           { return v.m.Segments() }
func (v rowView) Segment(i, s int) []uint64 { return v.m.Segment(v.lo+i, s) }

// colView is segments [s0, s1) of a BitMatrix, as a matrix of their
// columns.
type colView struct {
	m      BitMatrix
	s0     int
	bounds []int
}

func newColView(m BitMatrix, s0, s1 int) colView {
	b := m.Segments()
	v := colView{m: m, s0: s0, bounds: make([]int, 0, s1-s0+1)}
	for _, x := range b[s0 : s1+1] {
		v.bounds = append(v.bounds, x-b[s0])
	}
	return v
}

func (v colView) Rows() int                 { return v.m.Rows() }
func (v colView) Cols() int                 { return v.bounds[len(v.bounds)-1] }
func (v colView) Segments() []int           { return v.bounds }
func (v colView) Segment(i, s int) []uint64 { return v.m.Segment(i, v.s0+s) }

// countData counts the data's observed ones and entries, and with rows
// each cell's: across the processes of a partitioned fit p (which it sets
// up), else once for the data (Data.Counted).
func (s *Sampler) countData(data Data, workers int, p *Part, rows bool) (*dataCounts, error) {
	if p == nil {
		return data.count(workers, rows)
	}
	var err error
	if s.part, err = newPart(p, data); err != nil {
		return nil, err
	}
	q := s.part
	v := []int64{countOnes(q.x, q.mask, workers), countOnes(q.xt, q.maskT, workers),
		int64(q.x.Rows()) * int64(q.x.Cols()), int64(q.x.Rows()) * int64(q.x.Cols())}
	if q.mask != nil {
		v[2], v[3] = countOnes(q.mask, nil, workers), countOnes(q.maskT, nil, workers)
	}
	if err := q.reduce(v); err != nil {
		return nil, fmt.Errorf("%w: counting the data: %w", errPart, err)
	}
	if v[0] != v[1] {
		return nil, fmt.Errorf("%w: X has %d observed ones but XT has %d: XT is not the transpose of X", errShape, v[0], v[1])
	}
	if v[2] != v[3] {
		return nil, fmt.Errorf("%w: Mask has %d observed entries but MaskT has %d", errShape, v[2], v[3])
	}
	c := &dataCounts{ones: v[0], observed: v[2]}
	if rows {
		c.cellOnes, c.cellObs = s.levelRowCounts()
	}
	return c, nil
}

// sum adds v across the processes, keeping the sweep's first error.
func (p *part) sum(v []int64) {
	if p.err != nil {
		return
	}
	if err := p.reduce(v); err != nil {
		p.err = fmt.Errorf("%w: %w", errPart, err)
	}
}

// sumAcross sums v across the processes of p (nothing without one),
// through int64: counts (below 2⁵³ as float64), or bit words whose
// processes set disjoint bits, which the wrapping conversions carry to
// their union.
func sumAcross[T uint64 | float64 | int32](p *part, v []T) {
	if p == nil {
		return
	}
	w := make([]int64, len(v))
	for i, x := range v {
		w[i] = int64(x)
	}
	p.sum(w)
	for i, x := range w {
		v[i] = T(x)
	}
}

// stopped returns ctx.Err(), or in a process of a partitioned fit, after
// summing the processes' flags, ErrOtherStopped when another process's
// context is done: every process of a fit reaches the same verdict.
func (s *Sampler) stopped(ctx context.Context) error {
	err := ctx.Err()
	if s.part == nil {
		return err
	}
	v := []int64{0}
	if err != nil {
		v[0] = 1
	}
	if rerr := s.part.reduce(v); rerr != nil {
		return fmt.Errorf("%w: %w", errPart, rerr)
	}
	switch {
	case err != nil:
		return err
	case v[0] > 0:
		return ErrOtherStopped
	}
	return nil
}

// reduce sums v across the processes and counts the reduction.
func (p *part) reduce(v []int64) error {
	start := time.Now()
	err := p.Reduce.SumInt64(v)
	p.calls++
	p.words += int64(len(v))
	p.spent += time.Since(start)
	return err
}

// Reductions reports the reductions the process has made so far: their
// number, their int64 words and the seconds spent in them (waiting for
// the other processes included).
func (q *PartSampler) Reductions() (calls, words int64, seconds float64) {
	p := q.s.part
	return p.calls, p.words, p.spent.Seconds()
}

// runUStep runs the U step sp: runStep, or runStepPart in a process of a
// partitioned fit.
func (s *Sampler) runUStep(sp *stepSpec) rowStats {
	if s.part == nil {
		return s.runStep(sp)
	}
	return s.runStepPart(sp)
}

// sumCounts sums the Z step's counts and the U step's state counts across
// the processes of a partitioned fit (the U step's flips are the same in
// every process).
func (s *Sampler) sumCounts(zs, us *rowStats) {
	if s.part == nil {
		return
	}
	v := []int64{zs.flips, zs.miss, zs.covered, us.miss, us.covered, zs.lev}
	s.part.sum(v)
	zs.flips, zs.miss, zs.covered, us.miss, us.covered, zs.lev = v[0], v[1], v[2], v[3], v[4], v[5]
}

// cellRange returns the cells this process sweeps: all of them, or its
// part's.
func (s *Sampler) cellRange() (lo, hi int) {
	if s.part == nil {
		return 0, s.n
	}
	return s.part.Lo, s.part.Hi
}

// levelRowCounts returns the observed ones and entries of each of the
// process's cells.
func (s *Sampler) levelRowCounts() (ones, observed []int32) {
	if s.part == nil {
		return rowCounts(s.data.X, s.data.Mask, s.n, s.d)
	}
	p := s.part
	return rowCounts(p.x, p.mask, p.Hi-p.Lo, s.d)
}

// runStepPart is runStep for the U step of a partitioned fit: codes are
// decided one at a time for every gene, each from counts summed across the
// processes.
func (s *Sampler) runStepPart(sp *stepSpec) rowStats {
	p := s.part
	sp.bounds, sp.ones, sp.L = sp.m.Segments(), s.ones, s.l
	sp.live = liveCodes(sp.other, s.l) // over this process's cells: a scan's business only
	if s.vector {
		s.planes = codeMajor(s.planes, sp.other, s.l)
		sp.planes, sp.stride, sp.kernel = s.planes, len(sp.other)/s.l, s.kernel
	}
	if sp.lift == nil {
		s.startTotals(sp)
	}
	s.setHousekeeping(sp)
	L := s.l
	lift := sp.lift != nil
	S := 0 // with samples, each code's ones in each sample's cells are summed too
	if sp.smp != nil {
		S, sp.totals, sp.smp.summed = sp.smp.m.S, nil, true
		clear(sp.smp.m.stepOnes) // a code no cell of the process uses adds none
	}
	if len(p.rows) < sp.rows || len(p.buf) < (2+S)*sp.rows {
		p.rows = make([]rowState, sp.rows)
		p.buf = make([]int64, (2+S)*sp.rows)
	}
	rows, dirty := p.rows[:sp.rows], make([]uint64, (sp.rows+63)/64)
	for i := range rows {
		r, w, bit := &rows[i], i/64, uint(i%64)
		r.a, r.want, r.next, r.flips, r.lifted = 0, sp.live, 0, 0, lift
		r.dLev, r.fetch, r.fetchOn = 0, 0, 0
		for l := range L {
			r.a |= (sp.own[w*L+l] >> bit & 1) << uint(l)
		}
		clear(r.acc[:L])
		clear(r.lev[:L])
		dirty[w] |= 1 << bit
	}
	for l := range L {
		s.scanDirty(sp, rows, dirty)
		// With lift planes, the summed levels of the ones follow the counts,
		// and with samples each sample's ones after them.
		sums := p.buf[:sp.rows]
		if lift || S > 0 {
			sums = p.buf[:(2+S)*sp.rows]
		}
		for i := range rows {
			sums[i] = int64(rows[i].acc[l])
			if lift {
				sums[sp.rows+i] = int64(rows[i].lev[l])
			}
			if S > 0 {
				copy(sums[2*sp.rows+i*S:2*sp.rows+(i+1)*S], sp.sampleOnes(l, i))
			}
		}
		p.sum(sums)
		if p.err != nil {
			return rowStats{}
		}
		for i := range rows {
			r := &rows[i]
			r.acc[l] = uint64(sums[i])
			if lift {
				r.lev[l] = uint64(sums[sp.rows+i])
			}
			if S > 0 {
				copy(sp.sampleOnes(l, i), sums[2*sp.rows+i*S:2*sp.rows+(i+1)*S])
			}
			if sp.flip(r, l, i) && sp.live>>uint(l)&1 != 0 {
				clear(r.acc[l+1 : L])
				clear(r.lev[l+1 : L])
				r.want = sp.live &^ (2<<uint(l) - 1)
				dirty[i/64] |= 1 << uint(i%64)
			}
		}
	}
	s.scanDirty(sp, rows, dirty)
	var tot rowStats
	for i := range rows {
		r, w, bit := &rows[i], i/64, uint(i%64)
		tot.add(r.counts, r.flips)
		tot.lev += r.dLev
		if sp.rowCounts != nil {
			sp.rowCounts[i] = r.counts
		}
		for l := range L {
			sp.own[w*L+l] = sp.own[w*L+l]&^(1<<bit) | (r.a>>uint(l)&1)<<bit
		}
	}
	return tot
}

// scanDirty scans the rows marked in dirty (bit i of word i/64) over the
// process's cells, for their wanted codes and their counts, in parallel
// over blocks of 64 rows, and clears the marks.
func (s *Sampler) scanDirty(sp *stepSpec, rows []rowState, dirty []uint64) {
	words := len(dirty)
	w := max(1, min(s.workers, words))
	var wg sync.WaitGroup
	for k := range w {
		lo, hi := k*words/w, (k+1)*words/w
		buf := s.scratchFor(k)
		wg.Go(func() {
			for wd := lo; wd < hi; wd++ {
				for g := 0; g < 64/rowGroup; g++ {
					i0 := wd*64 + g*rowGroup
					if i0 >= len(rows) {
						break
					}
					pending := dirty[wd] >> uint(g*rowGroup) & (1<<rowGroup - 1)
					if pending != 0 {
						sp.scan(buf, i0, rows[i0:min(i0+rowGroup, len(rows))], pending)
					}
				}
				dirty[wd] = 0
			}
		})
	}
	wg.Wait()
}

// Gather collects the whole fit's cells (Z of every chain and retained
// sample, the levels, Z's posterior counts: MarshalPart's pieces) into
// the first process (the Reducer's member 0), which alone holds the whole
// of Z (Whole); the others send their cells and hold no more than before.
// All processes must call it together.
func (q *PartSampler) Gather() error {
	s, p := q.s, q.s.part
	_, _, mine := s.marshalPart()
	start := time.Now()
	pieces, err := p.Reduce.GatherBytes(0, mine)
	p.calls++
	p.words += int64(len(mine)+7) / 8
	p.spent += time.Since(start)
	if err != nil {
		return fmt.Errorf("%w: gathering Z: %w", errPart, err)
	}
	p.whole = nil
	if pieces != nil {
		w := s.blankWhole()
		for _, b := range pieces {
			if _, _, err := w.unmarshalCells(b); err != nil {
				return fmt.Errorf("%w: gathering Z: %w", errPart, err)
			}
		}
		p.whole = w
	}
	p.gathered = s.sweep
	return nil
}

// blankWhole returns a single process's sampler with the shared state of
// s and every cell's state zero, for Gather to fill: it serves Result and
// MarshalBinary, and runs no sweep.
func (s *Sampler) blankWhole() *Sampler {
	w := *s
	w.part, w.cnw, w.cellOnes, w.cellObs, w.cellStep = nil, s.nw, nil, nil, nil
	// The process's own counts are not the whole data's (a sweep of w
	// would panic rather than use them), and w shares no buffer that the
	// process's sweeps reuse.
	w.hkOnes, w.hkObs, w.gains, w.near = nil, nil, nil, nil
	w.geneWork.genes, w.geneWork.dev, w.geneWork.sorted = nil, nil, nil
	if s.smp != nil {
		w.smp = s.smp.whole()
	}
	w.zCount = make([]uint32, s.n*s.l)
	blank := func(z []uint64, level []uint8) ([]uint64, []uint8) {
		if level != nil {
			level = make([]uint8, s.n)
		}
		return make([]uint64, s.nw*s.l), level
	}
	w.chains = make([]*chain, len(s.chains))
	for i, ch := range s.chains {
		b := *ch
		b.z, b.level = blank(ch.z, ch.level)
		b.liftPlanes, b.liftBlock = nil, nil
		w.chains[i] = &b
	}
	w.kept = make([]keptSample, len(s.kept))
	for i, k := range s.kept {
		w.kept[i] = k
		w.kept[i].z, w.kept[i].level = blank(k.z, k.level)
	}
	return &w
}

// Whole returns the whole fit that Gather collected into the first
// process at the last sweep: a single process's Sampler at that sweep,
// whose Result and MarshalBinary give what a single process's give, and
// which runs no sweep. The other processes, and a process not gathered
// since its last sweep, get an error wrapping errPart.
func (q *PartSampler) Whole() (*Sampler, error) {
	switch p := q.s.part; {
	case p.gathered != q.s.sweep:
		return nil, fmt.Errorf("%w: not gathered since the last sweep: this process holds only its own cells of Z", errPart)
	case p.whole == nil:
		return nil, fmt.Errorf("%w: Gather collects the whole fit into the first process only", errPart)
	}
	return q.s.part.whole, nil
}

// addOwnCounts is addCounts over the process's cells of Z.
func (s *Sampler) addOwnCounts(z []uint64) { addCounts(s.zCount, z, s.l) }

// cellRows returns the observed ones of the given cells (X masked by
// Mask), each as the words of a whole row. A process of a partitioned fit
// reads its own cells and the processes sum the rows, each cell's from the
// process that owns it.
func (s *Sampler) cellRows(cells []int) [][]uint64 {
	flat := make([]uint64, len(cells)*s.dw)
	rows := make([][]uint64, len(cells))
	for i, n := range cells {
		row := flat[i*s.dw : (i+1)*s.dw]
		rows[i] = row
		if s.part != nil && (n < s.part.Lo || n >= s.part.Hi) {
			continue
		}
		s.readCellRow(n, row)
	}
	sumAcross(s.part, flat)
	return rows
}

// readCellMask writes the observed entries of cell n, one this process
// holds, into row (s.dw words): all of them without a mask.
func (s *Sampler) readCellMask(n int, row []uint64) {
	if s.data.Mask == nil {
		for k := range row {
			row[k] = ^uint64(0)
		}
		if r := s.d % 64; r != 0 {
			row[len(row)-1] = 1<<uint(r) - 1
		}
		return
	}
	b := s.data.Mask.Segments()
	for seg := 0; seg+1 < len(b); seg++ {
		copy(row[b[seg]/64:], s.data.Mask.Segment(n, seg))
	}
}

// readCellRow writes the observed ones of cell n, one this process holds,
// into row (s.dw words).
func (s *Sampler) readCellRow(n int, row []uint64) {
	b := s.data.X.Segments()
	for seg := 0; seg+1 < len(b); seg++ {
		x := s.data.X.Segment(n, seg)
		for k, w := range x {
			if s.data.Mask != nil {
				w &= s.data.Mask.Segment(n, seg)[k]
			}
			row[b[seg]/64+k] = w
		}
	}
}

// sumLevelCounts sums each level's counts across the processes of a
// partitioned fit. The counts are integers held in float64, exact below
// 2⁵³, so they travel as int64 and their sums are the single process's.
func (s *Sampler) sumLevelCounts(by []levelCounts) {
	if s.part == nil {
		return
	}
	v := make([]int64, 0, 4*len(by))
	for _, c := range by {
		v = append(v, int64(c.covOnes), int64(c.covZeros), int64(c.uncOnes), int64(c.uncZeros))
	}
	s.part.sum(v)
	for k := range by {
		by[k] = levelCounts{float64(v[4*k]), float64(v[4*k+1]), float64(v[4*k+2]), float64(v[4*k+3])}
	}
}

// orderStats returns the ranks[i]-th smallest (from 0) of the values g of
// the process's cells over every process's, by radix selection on the
// values' order-preserving bits: 8 rounds of a 256-bucket histogram per
// rank asked (one reduction a round across processes, so that no process
// needs the others' values), each counted by the workers side by side.
// Linear in the cells where a sort was not: at 1.3 million cells the two
// sorts a sweep cost more than the levels' other work. Once a rank's
// chosen bits leave a sixteenth of the process's values or fewer, the
// later rounds count those values' keys alone (narrow) rather than every
// value: the histograms, and so the results, are the same.
func (s *Sampler) orderStats(g []float64, ranks []int) []float64 {
	prefix := make([]uint64, len(ranks))
	left := slices.Clone(ranks)
	hist := make([]int64, 256*len(ranks))
	local := make([]int64, len(hist)) // this process's counts of a round
	// near[q] holds the keys sharing rank q's chosen bits once narrowed.
	near, narrowed := make([][]uint64, len(ranks)), make([]bool, len(ranks))
	used := 0 // words of s.near that near holds
	var mu sync.Mutex
	for shift := 56; shift >= 0; shift -= 8 {
		clear(hist)
		high := ^uint64(0) << uint(shift+8) // the bits already chosen
		if shift == 56 {
			high = 0
		}
		for q, keys := range near {
			for _, k := range keys {
				if k&high == prefix[q] {
					hist[256*q+int(k>>uint(shift)&255)]++
				}
			}
		}
		if slices.Contains(narrowed, false) {
			s.forBlocks(len(g), func(lo, hi int) {
				// On the stack for the levels' two ranks: no garbage a round.
				var buf [512]int64
				h := buf[:0]
				if len(hist) > len(buf) {
					h = make([]int64, 0, len(hist))
				}
				h = h[:len(hist)]
				for _, f := range g[lo:hi] {
					// The keys are taken afresh each pass rather than kept:
					// 8 bytes a cell less, for a few instructions.
					k := orderKey(f)
					for q, p := range prefix {
						if !narrowed[q] && k&high == p {
							h[256*q+int(k>>uint(shift)&255)]++
						}
					}
				}
				mu.Lock()
				for i, v := range h {
					hist[i] += v
				}
				mu.Unlock()
			})
		}
		copy(local, hist)
		if s.part != nil {
			s.part.sum(hist)
		}
		for q := range ranks {
			b := 0
			for ; b < 255 && int64(left[q]) >= hist[256*q+b]; b++ {
				left[q] -= int(hist[256*q+b])
			}
			prefix[q] |= uint64(b) << uint(shift)
		}
		if shift > 0 {
			used = s.narrow(g, near, narrowed, prefix, local, shift, used)
		}
	}
	out := make([]float64, len(ranks))
	for q, k := range prefix {
		if k>>63 != 0 {
			k &^= 1 << 63
		} else {
			k = ^k
		}
		out[q] = math.Float64frombits(k)
	}
	return out
}

// narrow sets near[q], for each rank q not yet narrowed whose chosen bits
// (those from shift up of prefix[q]) this process's values share in
// local's count of a sixteenth of them or fewer, to the keys of those
// values, in one pass over g, and returns the words of s.near that near
// holds, used before. Their room is kept from call to call (s.near): the
// ranks narrowed earlier in a call keep its first used words.
func (s *Sampler) narrow(g []float64, near [][]uint64, narrowed []bool, prefix []uint64, local []int64, shift, used int) int {
	var want []int
	room := 0
	for q, p := range prefix {
		if n := int(local[256*q+int(p>>uint(shift)&255)]); !narrowed[q] && n*16 <= len(g) {
			want = append(want, q)
			room += n
		}
	}
	if len(want) == 0 {
		return used
	}
	if need := len(near) * (len(g)/16 + 1); cap(s.near) < need {
		// Room for every rank's keys (each a sixteenth of g or fewer):
		// a call makes it once, when it first narrows (used is 0).
		s.near = make([]uint64, need)
	}
	buf := s.near[used:used]
	for _, q := range want {
		n := int(local[256*q+int(prefix[q]>>uint(shift)&255)])
		near[q], buf, narrowed[q] = buf[:0:n], buf[n:n], true
	}
	mask := ^uint64(0) << uint(shift)
	for _, f := range g {
		k := orderKey(f)
		for _, q := range want {
			if k&mask == prefix[q] {
				near[q] = append(near[q], k)
			}
		}
	}
	return used + room
}

// orderKey maps a float64 to a uint64 of the same order.
func orderKey(f float64) uint64 {
	b := math.Float64bits(f)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}
