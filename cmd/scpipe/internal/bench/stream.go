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
	Bytes int64  // bytes of words read
	Ones  int64  // ones counted, per matrix (countOnes)
	Fold  uint64 // XOR of all the words read (readOnly)
}

// Work is what Stream does with each word.
type Work uint8

const (
	// countOnes counts the ones of each matrix, which checks that every
	// word was read.
	countOnes Work = iota
	// readOnly only reads the words, XOR-folding them so that the reads
	// cannot be optimised away: the floor of a pass over the data, whatever
	// the build's popcount speed (a GOAMD64=v1 build checks the CPU at every
	// bits.OnesCount64 and counts at about half the speed of memory here).
	readOnly
)

// streamTask is a run of rows of one segment of matrix m (number mi of
// Stream's), or of all its segments (seg < 0), and what reading it found.
type streamTask struct {
	m      gibbs.BitMatrix
	mi     int
	seg    int
	lo, hi int
	res    StreamResult
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
// workers goroutines, and counts the ones of each matrix or, with readOnly,
// only reads them: in FileOrder the least work any sweep over the same
// bit-packed data can do, and so the floor that sweep times are compared
// with. The matrices are cut into runs
// of rows (of one segment in FileOrder: whole files of the shards, read in
// order), shared out dynamically. It returns ctx's error if ctx is
// cancelled.
func Stream(ctx context.Context, workers int, order Order, work Work, ms ...gibbs.BitMatrix) ([]StreamResult, error) {
	var tasks []streamTask
	for mi, m := range ms {
		b := m.Segments()
		if order == RowOrder {
			step := max(1, streamChunkWords/max(1, (m.Cols()+63)/64))
			for lo := 0; lo < m.Rows(); lo += step {
				tasks = append(tasks, streamTask{m: m, mi: mi, seg: -1, lo: lo, hi: min(lo+step, m.Rows())})
			}
			continue
		}
		for s := 0; s+1 < len(b); s++ {
			words := max(1, (b[s+1]-b[s]+63)/64)
			step := max(1, streamChunkWords/words)
			for lo := 0; lo < m.Rows(); lo += step {
				tasks = append(tasks, streamTask{m: m, mi: mi, seg: s, lo: lo, hi: min(lo+step, m.Rows())})
			}
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, workers) {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= len(tasks) || ctx.Err() != nil {
					return
				}
				tasks[k].read(work)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]StreamResult, len(ms))
	for _, t := range tasks {
		r := &out[t.mi]
		r.Bytes += t.res.Bytes
		r.Ones += t.res.Ones
		r.Fold ^= t.res.Fold
	}
	return out, nil
}

// read reads the task's rows, counting their ones or folding them.
func (t *streamTask) read(work Work) {
	s0, s1 := 0, len(t.m.Segments())-1
	if t.seg >= 0 {
		s0, s1 = t.seg, t.seg+1
	}
	var r StreamResult // in registers: neighbouring tasks share cache lines
	for i := t.lo; i < t.hi; i++ {
		for s := s0; s < s1; s++ {
			row := t.m.Segment(i, s)
			if work == readOnly {
				r.Fold ^= fold(row)
			} else {
				r.Ones += popcount(row)
			}
			r.Bytes += 8 * int64(len(row))
		}
	}
	t.res = r
}

// fold returns the XOR of the words of ws, four independent folds at a time
// so that the loads overlap.
func fold(ws []uint64) uint64 {
	var a, b, c, d uint64
	i := 0
	for ; i+4 <= len(ws); i += 4 {
		a ^= ws[i]
		b ^= ws[i+1]
		c ^= ws[i+2]
		d ^= ws[i+3]
	}
	for ; i < len(ws); i++ {
		a ^= ws[i]
	}
	return a ^ b ^ c ^ d
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
