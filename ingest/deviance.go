package ingest

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"
)

// The binomial deviance of gene d (Townes et al., Genome Biology 2019; scry's
// devianceFeatureSelection) compares each cell's count y_nd with the null
// model that the gene takes a fixed share π_d = Y_d / T of every cell's
// total n_c, where Y_d = Σ_c y_cd and T = Σ_c n_c:
//
//	D_d = 2 Σ_c [ y log(y / (π n_c)) + (n_c − y) log((n_c − y) / (n_c (1 − π))) ]
//
// Its zero entries need no visit: D_d/2 = S1_d − Y_d log π_d − (T − Y_d) log(1 − π_d),
// where S1_d = Σ_{y > 0} [ y log(y/n_c) + (n_c − y) log(1 − y/n_c) ] sums a
// term per nonzero entry that needs the entry's cell total. Sources that
// store a cell's entries together (10x HDF5, AnnData CSR, 10x Matrix
// Market) hand a cell's entries over together, so the counting pass adds a
// cell's terms as soon as the cell is complete: at once for a cell inside
// a range of entries, and, for the first and last cell of a range, which
// the range's edges may cut, once the ranges before it are in (see
// devAccum.put). An input in any other order (AnnData CSC, dense genes ×
// cells, unsorted Matrix Market) is read once more, with the cell totals
// of the counting pass (see devAccum.rescan).
//
// Every sum is an integer, so that the result does not depend on the
// number of workers or how the input is cut into ranges: values are taken
// to 1/valueScale (counts exactly), and each term to 1/termScale.
const (
	valueScale = 1 << 16
	termScale  = 1 << 24
	// maxDevValue bounds the values the deviance takes: well above any
	// count, and low enough that the cell totals' integers cannot overflow.
	maxDevValue = 1 << 31
)

// devianceMethod names the selection --select-genes makes in the manifest.
const devianceMethod = "binomial-deviance"

// devAccum gathers the deviance's sums in the counting pass, for genes of
// the kept feature types. Each worker (devPart) adds the terms of the cells
// whose runs lie inside its range of entries; it hands the first and the
// last run of a range, which the range's edges may cut, to put, which
// joins them in input order and adds a cell's terms once the cell ends:
// so at most one cell and the ranges finished ahead of their turn are
// held, whatever the input's size.
type devAccum struct {
	typeKept []bool
	allKept  bool
	// cellTotal is each cell's total of kept-type values × valueScale,
	// added run by run (atomically: ranges share cells at their edges),
	// for rescan and a last check.
	cellTotal []int64
	// unsorted is set as soon as a range shows cells out of order: the
	// terms are then left to rescan, and the parts only total the cells.
	unsorted atomic.Bool
	bufs     sync.Pool // of *[]devEntry, for the runs handed to put

	mu     sync.Mutex
	parts  []*devPart
	next   int              // the range put joins next
	parked map[int]devEdges // ranges finished ahead of their turn
	last   int32            // the cell of the last run joined, -1 before any
	pend   []devEntry       // the entries of cell last, until it ends
	joined *devPart         // the sums of the cells put completes
}

// devEdges is what a range of entries hands to put: its first and last
// cell with a nonzero kept-type value (-1: none), whether its runs' cells
// rose strictly, and the entries of its first and last run (tail nil when
// they are the same run).
type devEdges struct {
	first, last int32
	sorted      bool
	head, tail  *[]devEntry
}

// geneDev holds one gene's sums: S1 × termScale and Y × valueScale.
type geneDev struct {
	s1, y int64
}

// devEntry is a nonzero entry kept aside: its gene and quantised value.
type devEntry struct {
	gene int32
	q    int64
}

func newDevAccum(cells int, typeKept []bool) *devAccum {
	allKept := true
	for _, k := range typeKept {
		allKept = allKept && k
	}
	a := &devAccum{typeKept: typeKept, allKept: allKept, cellTotal: make([]int64, cells),
		parked: map[int]devEdges{}, last: -1}
	a.joined = newDevPart(a)
	return a
}

// newPart returns a worker's share of the sums.
func (a *devAccum) newPart() *devPart {
	d := newDevPart(a)
	a.mu.Lock()
	a.parts = append(a.parts, d)
	a.mu.Unlock()
	return d
}

// newDevPart returns an empty share of a's sums.
func newDevPart(a *devAccum) *devPart {
	return &devPart{acc: a, sums: make([]geneDev, len(a.typeKept)), n: -1, N: -1}
}

// devPart is one worker's share of devAccum.
type devPart struct {
	acc   *devAccum
	sums  []geneDev
	large bool // a kept-type value ≥ maxDevValue was seen

	// The range being read: what it hands to put (edges), and its last
	// run with entries so far (held), added when a later one comes, or
	// handed on as the tail when none does. A run listed by a batch's
	// runs is held as the batch's slices, one gathered entry by entry as
	// a list (the entries of the run being gathered go to run).
	edges devEdges
	held  struct {
		ok, head  bool
		cell      int32
		n         int64
		val       []float64
		gene      []int32
		list, run []devEntry
	}

	// The cell total the terms are taken for (× valueScale), and, when it
	// is a whole count below xlxMax (N ≥ 0), xlx[N]; xlx[x] = x log x,
	// grown as larger totals come.
	n, N int64
	xlxN float64
	xlx  []float64
}

// quant returns v × valueScale rounded: a count's exact integer.
func quant(v float64) int64 { return int64(v*valueScale + 0.5) }

// devTerm returns the term of S1 of a count of q in a cell of total n (both
// × valueScale, 0 < q ≤ n) × termScale, rounded: y log(y/n) + (n−y)
// log(1 − y/n), 0 when the count is the cell's whole total.
func devTerm(q, n int64) int64 {
	if q >= n {
		return 0
	}
	y, t := float64(q), float64(n)
	r := y / t
	return fixTerm((y*math.Log(r) + (t-y)*math.Log1p(-r)) / valueScale)
}

// fixTerm returns a term f ≤ 0 × termScale, rounded half away from zero
// (a hair above 0, from rounding, gives 0).
func fixTerm(f float64) int64 { return int64(f*termScale - 0.5) }

// xlxMax bounds the whole cell totals whose terms come from the table of
// x log x (8 MiB at most, a worker).
const xlxMax = 1 << 20

// total sets the cell total n (× valueScale) the terms are taken for: for
// a whole count below xlxMax, the term of a whole count k is then
// k log k + (N−k) log(N−k) − N log N, three lookups (the cancellation
// costs about 1e-16 N log N, far below termScale's resolution); any
// other goes to devTerm.
func (d *devPart) total(n int64) {
	if n == d.n {
		return
	}
	d.n, d.N = n, -1
	if n%valueScale != 0 || n/valueScale >= xlxMax {
		return
	}
	d.N = n / valueScale
	for x := int64(len(d.xlx)); x <= d.N; x++ {
		v := 0.0
		if x > 0 {
			v = float64(x) * math.Log(float64(x))
		}
		d.xlx = append(d.xlx, v)
	}
	d.xlxN = d.xlx[d.N]
}

// term is devTerm(q, d.n), from the table where it can be.
func (d *devPart) term(q int64) int64 {
	if d.N >= 0 && q&(valueScale-1) == 0 {
		k := q / valueScale
		return fixTerm(d.xlx[k] + d.xlx[d.N-k] - d.xlxN)
	}
	return devTerm(q, d.n)
}

// addValues adds the terms of the nonzero values val of kept-type genes
// gene, for cells of total d.n: the loop of most entries, so term's
// lookup is written out.
func (d *devPart) addValues(val []float64, gene []int32) {
	sums, allKept, typeKept := d.sums, d.acc.allKept, d.acc.typeKept
	gene = gene[:len(val)]
	N, xlx, xlxN := d.N, d.xlx, d.xlxN
	for i, v := range val {
		g := gene[i]
		q := quant(v)
		if q == 0 || !(allKept || typeKept[g]) {
			continue
		}
		var t int64
		if k := q / valueScale; N >= 0 && q&(valueScale-1) == 0 {
			t = fixTerm(xlx[k] + xlx[N-k] - xlxN)
		} else {
			t = devTerm(q, d.n)
		}
		s := &sums[g]
		s.y += q
		s.s1 += t
	}
}

// addList adds the terms of entries es of one cell, of total n.
func (d *devPart) addList(es []devEntry, n int64) {
	d.total(n)
	for _, e := range es {
		s := &d.sums[e.gene]
		s.y += e.q
		s.s1 += d.term(e.q)
	}
}

// tooLarge reports whether the bits of quantised values or'ed together
// show one that is not below maxDevValue: beyond it, or beyond int64
// (whose conversion gives a negative number).
func tooLarge(or int64) bool { return or < 0 || or >= maxDevValue*valueScale }

// beginSpan starts a range of entries.
func (d *devPart) beginSpan() {
	d.edges = devEdges{first: -1, last: -1, sorted: true}
	d.held.ok = false
}

// endSpan ends the range: the run held is its tail, unless it is its head.
func (d *devPart) endSpan() {
	if d.held.ok && !d.held.head {
		d.edges.tail = d.heldEntries()
	}
	d.held.ok = false
}

// heldEntries returns a copy of the held run's nonzero kept-type entries.
func (d *devPart) heldEntries() *[]devEntry {
	a := d.acc
	p, _ := a.bufs.Get().(*[]devEntry)
	if p == nil {
		p = new([]devEntry)
	}
	h := &d.held
	es := (*p)[:0]
	if h.val == nil {
		es = append(es, h.list...)
	}
	for i, v := range h.val {
		if g := h.gene[i]; a.allKept || a.typeKept[g] {
			if q := quant(v); q > 0 {
				es = append(es, devEntry{g, q})
			}
		}
	}
	*p = es
	return p
}

// hold takes a run of cell, of total n > 0, with its entries as val and
// gene or as list; the run held before it ended inside the range, so its
// terms are added, unless it was the range's first, handed on already.
func (d *devPart) hold(cell int32, n int64, val []float64, gene []int32, list []devEntry) {
	a := d.acc
	e, h := &d.edges, &d.held
	atomic.AddInt64(&a.cellTotal[cell], n)
	if e.last >= 0 && cell <= e.last {
		e.sorted = false
		a.unsorted.Store(true)
	}
	if a.unsorted.Load() {
		e.last, h.ok = cell, false
		return
	}
	if h.ok && !h.head {
		d.total(h.n)
		if h.val != nil {
			d.addValues(h.val, h.gene)
		} else {
			d.addList(h.list, h.n)
		}
	}
	h.ok, h.cell, h.n, h.val, h.gene = true, cell, n, val, gene
	if list != nil {
		// The list is the gathering buffer: keep it, gather into the
		// other.
		h.list, h.run = list, h.list[:0]
	}
	h.head = e.first < 0
	if h.head {
		e.first = cell
		e.head = d.heldEntries()
	}
	e.last = cell
}

// addRun adds a run of cell, entries val and gene.
func (d *devPart) addRun(cell int32, val []float64, gene []int32) {
	a := d.acc
	gene = gene[:len(val)]
	var n, or int64
	if a.allKept {
		for _, v := range val {
			q := quant(v)
			n += q
			or |= q
		}
	} else {
		for i, v := range val {
			if a.typeKept[gene[i]] {
				q := quant(v)
				n += q
				or |= q
			}
		}
	}
	if tooLarge(or) {
		d.large = true
		return
	}
	if n > 0 && !d.large {
		d.hold(cell, n, val, gene, nil)
	}
}

// addEntries adds entries [lo, hi) of a batch that lists a cell per entry:
// the kept-type nonzero entries of each run of one cell are gathered and
// held as a run of a batch's runs is.
func (d *devPart) addEntries(b *batch, lo, hi int) {
	a := d.acc
	h := &d.held
	cur := int32(-1)
	var n, or int64
	run := h.run[:0]
	for k := lo; k < hi && !d.large; k++ {
		g, v := b.gene[k], b.val[k]
		if !(a.allKept || a.typeKept[g]) {
			continue
		}
		q := quant(v)
		or |= q
		if q == 0 {
			continue
		}
		if tooLarge(or) {
			d.large = true
			return
		}
		if c := b.cell[k]; c != cur {
			if n > 0 {
				d.hold(cur, n, nil, nil, run)
				run = h.run[:0]
			}
			cur, n = c, 0
		}
		n += q
		run = append(run, devEntry{g, q})
	}
	if n > 0 {
		d.hold(cur, n, nil, nil, run)
	} else {
		h.run = run
	}
}

// put joins range r's edges, once the ranges before it are in: a cell's
// runs at the edges of ranges in order, with its total, and checks that
// each cell's entries came together (the runs of every range rose, and
// each range began at or after the cell the one before it ended with).
func (a *devAccum) put(r int, e devEdges) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r != a.next {
		a.parked[r] = e
		return
	}
	for {
		a.join(e)
		a.next++
		var ok bool
		if e, ok = a.parked[a.next]; !ok {
			return
		}
		delete(a.parked, a.next)
	}
}

// join joins a range's edges (see put).
func (a *devAccum) join(e devEdges) {
	defer a.free(e.head)
	defer a.free(e.tail)
	switch {
	case a.unsorted.Load():
		return
	case !e.sorted || (e.first >= 0 && e.first < a.last):
		a.unsorted.Store(true)
		return
	case e.first < 0:
		return
	}
	if e.first != a.last {
		a.complete()
	}
	a.pend = append(a.pend, *e.head...)
	if e.last != e.first {
		a.complete()
		a.pend = append(a.pend, *e.tail...)
	}
	a.last = e.last
}

// complete adds the terms of the pending cell, which has ended.
func (a *devAccum) complete() {
	var n int64
	for _, e := range a.pend {
		n += e.q
	}
	a.joined.addList(a.pend, n)
	a.pend = a.pend[:0]
}

func (a *devAccum) free(p *[]devEntry) {
	if p != nil {
		*p = (*p)[:0]
		a.bufs.Put(p)
	}
}

// finish completes the sums after the counting pass and returns each
// gene's deviance (0 for genes of other types): the runs kept aside are
// added with their cells' totals when every cell's entries were
// contiguous; otherwise scan reads the input again (see rescan).
func (a *devAccum) finish(ctx context.Context, name string, scan func(context.Context, func(*batch) error) error, split passSplit) ([]float64, error) {
	for _, d := range a.parts {
		if d.large {
			return nil, fmt.Errorf("ingest: %s: --select-genes: a value of %d or more is too large to be a count", name, maxDevValue)
		}
	}
	var total int64
	for _, n := range a.cellTotal {
		if n < 0 || total > math.MaxInt64-n {
			return nil, fmt.Errorf("ingest: %s: --select-genes: the counts' total overflows", name)
		}
		total += n
	}
	parts, rescanned := append(a.parts, a.joined), a.unsorted.Load()
	if rescanned {
		var err error
		if parts, err = a.rescan(ctx, scan, split); err != nil {
			return nil, err
		}
	} else {
		a.complete()
	}
	sums, err := mergeDev(parts, len(a.typeKept))
	if err != nil {
		return nil, fmt.Errorf("ingest: %s: --select-genes: %w", name, err)
	}
	var y int64
	for _, s := range sums {
		y += s.y
	}
	if y != total {
		why := "internal error"
		if rescanned {
			why = "file modified while reading?"
		}
		return nil, fmt.Errorf("ingest: %s: --select-genes: the genes' counts add up to %v, the cells' to %v (%s)", name, float64(y)/valueScale, float64(total)/valueScale, why)
	}
	dev := make([]float64, len(sums))
	for g, s := range sums {
		dev[g] = deviance(s, total)
	}
	return dev, nil
}

// rescan reads the input again and adds every nonzero entry's term with
// its cell's total from the counting pass, the batches split as the
// counting pass splits them; it returns the parts holding the sums.
func (a *devAccum) rescan(ctx context.Context, scan func(context.Context, func(*batch) error) error, split passSplit) ([]*devPart, error) {
	parts := make([]*devPart, max(split.workers, 1))
	for i := range parts {
		parts[i] = newDevPart(a)
	}
	err := scan(ctx, func(b *batch) error {
		split.run(len(b.val), func(r, lo, hi int) {
			d := parts[r]
			if b.runs == nil {
				d.rescanEntries(b.cell[lo:hi], b.gene[lo:hi], b.val[lo:hi])
				return
			}
			k := lo
			ri := sort.Search(len(b.runs), func(i int) bool { return int(b.runs[i].end) > lo })
			for ; k < hi; ri++ {
				end := min(int(b.runs[ri].end), hi)
				d.rescanRun(b.runs[ri].cell, b.gene[k:end], b.val[k:end])
				k = end
			}
		})
		return nil
	})
	return parts, err
}

// rescanRun adds the terms of a run of cell.
func (d *devPart) rescanRun(cell int32, gene []int32, val []float64) {
	d.total(d.acc.cellTotal[cell])
	d.addValues(val, gene)
}

// rescanEntries adds the terms of entries listed cell by cell.
func (d *devPart) rescanEntries(cells, gene []int32, val []float64) {
	a := d.acc
	cells, gene = cells[:len(val)], gene[:len(val)]
	for i, v := range val {
		g := gene[i]
		if !(a.allKept || a.typeKept[g]) {
			continue
		}
		if q := quant(v); q > 0 {
			d.total(a.cellTotal[cells[i]])
			s := &d.sums[g]
			s.y += q
			s.s1 += d.term(q)
		}
	}
}

// mergeDev adds the parts' sums gene by gene. Every term is ≤ 0, so a
// sum that wrapped shows as positive.
func mergeDev(parts []*devPart, genes int) ([]geneDev, error) {
	sums := make([]geneDev, genes)
	for _, d := range parts {
		for g, s := range d.sums {
			t := &sums[g]
			if s.s1 > 0 || s.y < 0 || t.s1 < math.MinInt64-s.s1 || t.y > math.MaxInt64-s.y {
				return nil, fmt.Errorf("gene %d: deviance out of range", g+1)
			}
			t.s1 += s.s1
			t.y += s.y
		}
	}
	return sums, nil
}

// deviance returns 2 (S1 − Y log π − (T − Y) log(1 − π)) for a gene's
// sums and the total T (× valueScale), π = Y/T; 0 for a gene never
// detected, and never below 0 (the saturated model fits at least as well
// as the null; rounding could say otherwise by a hair).
func deviance(s geneDev, total int64) float64 {
	if s.y == 0 || s.y >= total {
		return 0
	}
	y, t := float64(s.y)/valueScale, float64(total)/valueScale
	p := y / t
	d := float64(s.s1)/termScale - y*math.Log(p) - (t-y)*math.Log1p(-p)
	return max(2*d, 0)
}
