package ingest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// ranger is implemented by sources that can read their entries as numbered
// ranges, on several goroutines at once.
type ranger interface {
	// ranges returns the number of ranges, in input order, and a function
	// that opens a reader of them for one goroutine (open itself is not
	// safe for concurrent use); n = 0 when the source cannot be read this
	// way. The ranges are the source's, whatever the number of readers.
	ranges() (n int, open func() (rangeReader, error))
}

// rangeReader fills b with range r's entries, oriented and checked. It
// reports the range's first bad entry. r = releaseRanges (b nil) releases
// the reader's buffers, for a reader that is not used again.
type rangeReader func(r int, b *batch) error

// releaseRanges is the range a rangeReader is called with to release its
// buffers.
const releaseRanges = -1

// countRanges is countPass for a source read in ranges. Each worker reads a
// range, checks and counts it, and hands its spill segment on, so no stage
// waits for another and a core idles only at the very end; segments join
// the spill in range order, so the spill, the counts and the sums (block
// by block from each range's start, ranges in order) are the same for any
// number of workers.
func countRanges(ctx context.Context, n int, open func() (rangeReader, error), cells, genes int, typeKept []bool, thr binariser, spill *spillWriter, prog *progress, split passSplit, dev *devAccum) (*counts, error) {
	c := &counts{cellsPerGene: make([]int32, genes), genesPerCell: make([]int32, cells)}
	workers := max(min(split.workers, n), 1)
	parts := make([]countPart, workers)
	sums := make([][]float64, n) // per range, its blocks' sums
	q := segmentQueue{spill: spill, prog: prog, parked: map[int]spillSegment{}, failed: -1}
	readers := make([]rangeReader, workers)
	for w := range readers {
		var err error
		if readers[w], err = open(); err != nil {
			return nil, err
		}
	}
	var next atomic.Int64
	g, ctx := errgroup.WithContext(ctx)
	for w, read := range readers {
		p := &parts[w]
		*p = newCountPart(genes, typeKept, dev, thr.ambient)
		g.Go(func() error {
			var b batch
			for r := int(next.Add(1) - 1); r < n && q.wanted(r); r = int(next.Add(1) - 1) {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := read(r, &b); err != nil {
					q.fail(r, err)
					return nil
				}
				m := len(b.val)
				sums[r] = make([]float64, (m+split.block-1)/split.block)
				p.count(&b, 0, m, split.block, typeKept, thr.value, c.genesPerCell, sums[r])
				if dev != nil {
					dev.put(r, p.dev.edges)
				}
				if err := q.put(r, &p.seg, m); err != nil {
					return err
				}
			}
			return nil
		})
	}
	err := g.Wait()
	if q.err != nil {
		err = q.err // the input's first bad entry
	}
	c.addParts(parts)
	// Block by block in input order, as countPass adds them.
	for _, s := range sums {
		for _, x := range s {
			c.sum += x
		}
	}
	c.entries = q.entries
	return c, err
}

// segmentQueue appends the spill segments of numbered ranges in range
// order, parking those that arrive early, and reports progress.
type segmentQueue struct {
	mu      sync.Mutex
	spill   *spillWriter
	prog    *progress
	next    int                  // the range whose segment goes in next
	parked  map[int]spillSegment // segments of ranges after next
	spare   [][]byte             // buffers of appended parked segments
	entries int64                // entries of the ranges put

	// failed is the lowest range that failed to read (-1: none), and err
	// its error: ranges after it are not wanted, and those before it,
	// already taken, are still read, in case one holds an earlier error.
	failed int
	err    error
}

// put appends range r's segment g, of m entries, or parks it until the
// ranges before r are in, giving g a spare buffer.
func (q *segmentQueue) put(r int, g *spillSegment, m int) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.entries += int64(m)
	q.prog.add(m)
	if r != q.next {
		q.parked[r] = *g
		g.buf = nil
		if k := len(q.spare); k > 0 {
			g.buf, q.spare = q.spare[k-1], q.spare[:k-1]
		}
		return nil
	}
	if err := q.spill.addSegment(g); err != nil {
		return err
	}
	for q.next++; ; q.next++ {
		p, ok := q.parked[q.next]
		if !ok {
			return nil
		}
		delete(q.parked, q.next)
		if err := q.spill.addSegment(&p); err != nil {
			return err
		}
		q.spare = append(q.spare, p.buf[:0])
	}
}

// fail records that range r failed to read with err.
func (q *segmentQueue) fail(r int, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.failed < 0 || r < q.failed {
		q.failed, q.err = r, err
	}
}

// wanted reports whether range r is still to be read: not after a range
// that failed.
func (q *segmentQueue) wanted(r int) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.failed < 0 || r < q.failed
}

// ranges reads the matrix in ranges of whole chunks of both arrays where
// their chunk lengths allow (see rangeLen), through views of the datasets
// (h5.Dataset.View), one per reader.
func (c *compressed) ranges() (int, func() (rangeReader, error)) {
	size := rangeLen(c.indices.ChunkLen(), c.data.ChunkLen())
	nnz := c.entries()
	n := int((nnz + size - 1) / size)
	return n, func() (rangeReader, error) {
		indices, err := c.indices.View()
		if err != nil {
			return nil, fmt.Errorf("ingest: %w", err)
		}
		data, err := c.data.View()
		if err != nil {
			return nil, fmt.Errorf("ingest: %w", err)
		}
		return func(r int, b *batch) error {
			if r == releaseRanges {
				indices.Release()
				data.Release()
				return nil
			}
			start := int64(r) * size
			m := int(min(size, nnz-start))
			b.gene, b.val = slices.Grow(b.gene[:0], m)[:m], slices.Grow(b.val[:0], m)[:m]
			minor := b.gene
			if !c.majorIsCell {
				// The cells are the minor axis; orient fills the genes.
				b.cell = slices.Grow(b.cell[:0], m)[:m]
				minor = b.cell
			}
			if err := indices.ReadInt32(start, minor); err != nil {
				return fmt.Errorf("ingest: %w", err)
			}
			if err := data.ReadFloat64(start, b.val); err != nil {
				return fmt.Errorf("ingest: %w", err)
			}
			runs := b.runs[:0]
			b.runs = nil
			if c.majorIsCell {
				b.runs = c.cellRuns(runs, start, m)
			}
			return c.orient(b, start)
		}, nil
	}
}

// Bounds of a range's entries (see rangeLen): enough that a range's setup
// is noise, few enough that every worker's batch (16 bytes an entry) and
// the ranges parked out of order stay small.
var (
	minRange int64 = 1 << 16
	maxRange int64 = 1 << 18
)

// rangeLen returns the entries of a range of arrays chunked in ci and cd
// elements (0: not chunked): a multiple of both, so that no chunk is
// decoded twice, where that takes at most maxRange entries (CellRanger's
// chunks are 80 000 elements, PyTables' 8 192 or 16 384), and at least
// minRange.
func rangeLen(ci, cd int64) int64 {
	size := int64(1)
	for _, k := range []int64{ci, cd} {
		if k > 0 {
			size = lcm(size, k)
		}
	}
	if size > maxRange {
		// Chunk lengths with no small common multiple: ranges of the
		// longer chunk, whose edges cut some of the other array's chunks.
		size = max(ci, cd)
	}
	for size < minRange {
		size *= 2
	}
	return size
}

func lcm(a, b int64) int64 {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}
