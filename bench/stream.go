package bench

import (
	"context"
	"math/bits"
	"sync"
	"sync/atomic"

	"scpipe/gibbs"
)

// streamChunkWords is the work unit of Stream: about 4 MiB of words, large
// enough that scheduling costs nothing, small enough to balance two to
// dozens of workers.
const streamChunkWords = 1 << 19

// StreamResult is what one pass of Stream read.
type StreamResult struct {
	Bytes int64 // bytes of words read
	Ones  int64 // ones counted, per matrix
}

// streamTask is a run of rows of one segment of one matrix, or of all its
// segments (seg < 0).
type streamTask struct {
	m      gibbs.BitMatrix
	seg    int
	lo, hi int
}

// Order is the order in which Stream visits the words of a matrix.
type Order uint8

const (
	// FileOrder reads each segment's rows in turn: every shard file from
	// start to end, the fastest order and so the floor.
	FileOrder Order = iota
	// RowOrder reads each row across all its segments before the next, as
	// the sampler does: a row of Xᵀ (a gene) visits one short run of words
	// in every cell block's file.
	RowOrder
)

// String returns "file" or "row".
func (o Order) String() string {
	if o == RowOrder {
		return "row"
	}
	return "file"
}

// Stream reads every word of every Segment of the given matrices once, with
// workers goroutines, and counts the ones of each matrix: in FileOrder the
// least work any sweep over the same bit-packed data can do, and so the
// floor that sweep times are compared with. The matrices are cut into runs
// of rows (of one segment in FileOrder: whole files of the shards, read in
// order), shared out dynamically. It returns ctx's error if ctx is
// cancelled.
func Stream(ctx context.Context, workers int, order Order, ms ...gibbs.BitMatrix) ([]StreamResult, error) {
	var tasks []streamTask
	for _, m := range ms {
		b := m.Segments()
		if order == RowOrder {
			step := max(1, streamChunkWords/max(1, (m.Cols()+63)/64))
			for lo := 0; lo < m.Rows(); lo += step {
				tasks = append(tasks, streamTask{m: m, seg: -1, lo: lo, hi: min(lo+step, m.Rows())})
			}
			continue
		}
		for s := 0; s+1 < len(b); s++ {
			words := max(1, (b[s+1]-b[s]+63)/64)
			step := max(1, streamChunkWords/words)
			for lo := 0; lo < m.Rows(); lo += step {
				tasks = append(tasks, streamTask{m: m, seg: s, lo: lo, hi: min(lo+step, m.Rows())})
			}
		}
	}
	index := make(map[gibbs.BitMatrix]int, len(ms))
	for i, m := range ms {
		index[m] = i
	}
	ones := make([]atomic.Int64, len(ms))
	byts := make([]atomic.Int64, len(ms))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, workers) {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= len(tasks) || ctx.Err() != nil {
					return
				}
				t := tasks[k]
				var n, w int64
				segs := len(t.m.Segments()) - 1
				for i := t.lo; i < t.hi; i++ {
					if t.seg >= 0 {
						row := t.m.Segment(i, t.seg)
						n += popcount(row)
						w += int64(len(row))
						continue
					}
					for s := range segs {
						row := t.m.Segment(i, s)
						n += popcount(row)
						w += int64(len(row))
					}
				}
				ones[index[t.m]].Add(n)
				byts[index[t.m]].Add(8 * w)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]StreamResult, len(ms))
	for i := range out {
		out[i] = StreamResult{Bytes: byts[i].Load(), Ones: ones[i].Load()}
	}
	return out, nil
}

// popcount returns the ones of ws, four independent sums at a time so that
// the popcounts overlap.
func popcount(ws []uint64) int64 {
	var a, b, c, d int
	i := 0
	for ; i+4 <= len(ws); i += 4 {
		a += bits.OnesCount64(ws[i])
		b += bits.OnesCount64(ws[i+1])
		c += bits.OnesCount64(ws[i+2])
		d += bits.OnesCount64(ws[i+3])
	}
	for ; i < len(ws); i++ {
		a += bits.OnesCount64(ws[i])
	}
	return int64(a + b + c + d)
}
