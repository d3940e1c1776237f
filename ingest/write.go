package ingest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"scpipe/shard"
)

// blockBudget bounds the memory of the cell blocks writePass builds in
// memory at once (see blockRows); blocks past it are set in the shard's
// mapped files instead. A variable so that tests can lower it.
var blockBudget = 256 << 20

// writePass reads the spilled entries back and sets the kept bits, on
// workers goroutines when the spill's frames hold disjoint cells. Such a spill is in
// cell order: cell blocks are then built in memory (blockRows) and each is
// written and finished (transposed, checksummed, written back) as soon as all
// its cells are set, while later blocks are being set. Otherwise bits go
// straight into the shard's mapped blocks, which Commit finishes. Progress
// advances from the input's entries to twice them, in proportion to the
// spilled entries read. It returns the bits set and what repeated an entry
// already stored (which the caller must refuse). observed, unless nil, is
// the observed mask of the rows (of samples that lack some kept gene); the
// layout must then be Masked.
func writePass(ctx context.Context, spill *spillWriter, w *shard.Writer, p *filterPlan, c *counts, prog *progress, workers int, observed *sampleMask) (int64, repeats, error) {
	l := w.Layout()
	br := &blockRows{w: w, rows: l.RowsPerBlock, wpr: l.WordsPerRow, cells: l.Cells,
		state: make([]blockState, l.CellBlocks), live: map[int][]uint64{},
		budget: max(blockBudget/(8*l.RowsPerBlock*l.WordsPerRow), 1), observed: observed}
	if !spill.sorted {
		r, err := setSpilled(ctx, spill, p, c, prog, workers, br.setMapped, nil, nil)
		if err == nil && observed != nil {
			for row := range l.Cells {
				w.SetObservedRowWords(row, observed.row(row))
			}
		}
		return r.set, r.repeats, checkSpilled(spill, c, r.read, err)
	}
	parent := ctx
	fin, ctx := errgroup.WithContext(ctx)
	blocks := make(chan int, workers)
	for range cap(blocks) {
		fin.Go(func() error {
			for b := range blocks {
				if err := ctx.Err(); err != nil {
					return err // another finisher failed, or the ingest was cancelled
				}
				if err := br.finish(b); err != nil {
					return fmt.Errorf("ingest: %w", err)
				}
			}
			return nil
		})
	}
	// complete hands the blocks of output rows below done to the
	// finishers; it blocks while they are busy, which holds the decoders
	// back and so bounds the blocks in memory.
	next := 0
	complete := func(done int) {
		for ; next < l.CellBlocks && min((next+1)*l.RowsPerBlock, l.Cells) <= done; next++ {
			select {
			case blocks <- next:
			case <-ctx.Done():
				return
			}
		}
	}
	r, err := setSpilled(ctx, spill, p, c, prog, workers, br.setBuffered, br.rowWords, func(cell int32) {
		done, _ := slices.BinarySearch(p.cells, int(cell)+1) // kept cells up to cell
		complete(done)
	})
	if err == nil {
		complete(l.Cells) // blocks after the last cell with entries
	}
	close(blocks)
	if ferr := fin.Wait(); ferr != nil && (err == nil || errors.Is(err, context.Canceled)) {
		err = ferr
	}
	if err == nil {
		// A cancel after the last frame was read stops complete, not
		// the finishers, which then see no more blocks.
		err = parent.Err()
	}
	return r.set, r.repeats, checkSpilled(spill, c, r.read, err)
}

// checkSpilled returns err, or an error when the n entries read back from
// spill are not those written.
func checkSpilled(spill *spillWriter, c *counts, n int64, err error) error {
	if err == nil && (n != c.ones || n != spill.entries) {
		err = fmt.Errorf("ingest: %s: %w: %d entries read back, %d written", spill.f.Name(), errSpill, n, c.ones)
	}
	return err
}

// setter sets the kept genes of an output row, given as input genes and
// the map to output genes (-1: dropped), and returns how many were kept and
// how many of their bits were not set before (fewer: the input stores an
// entry twice); scratch is its calling worker's to reuse.
type setter func(row int, genes, geneMap []int32, scratch *[]int32) (kept, set int)

// repeats counts the kept entries that repeated a (cell, gene) already
// stored, and names the first output row holding one (-1: none).
type repeats struct {
	n   int64
	row int
}

// spilled is what setSpilled did: the entries read back, the bits set, and
// the repeated entries.
type spilled struct {
	read, set int64
	repeats   repeats
}

// setSpilled reads the spill back, setting each run's genes in its output
// row: straight from their encoding in the row's words when rows gives
// them and the genes rise (see setRising), and otherwise through set.
// workers and written are passed on to readSpill.
func setSpilled(ctx context.Context, spill *spillWriter, p *filterPlan, c *counts, prog *progress, workers int, set setter, rows func(row int) []uint64, written func(int32)) (spilled, error) {
	var mu sync.Mutex // guards prog, read and rep
	var ones atomic.Int64
	var read int64
	rep := repeats{row: -1}
	scale := float64(c.entries) / float64(max(c.ones, 1))
	base := prog.done
	n, err := readSpill(ctx, spill, len(p.cellMap), len(p.geneMap), workers, func(d *spillDecoder) runFunc {
		var seen int64 // genes read since this worker last reported progress
		scratch := make([]int32, 0, 1024)
		rise := risingRow{cell: -1}
		return func(cell int32, enc []byte, k int) (int, error) {
			seen += int64(k)
			row := p.cellMap[cell]
			used, done, from := 0, 0, int32(0)
			if row >= 0 && rows != nil {
				if words := rows(int(row)); words != nil {
					var kept int
					used, done, kept, from = rise.set(cell, enc, k, words, p.geneMap)
					ones.Add(int64(kept))
				}
			}
			if done < k {
				rise.taint(cell)
				genes, n, err := d.list(enc[used:], k-done, from)
				if err != nil {
					return used + n, err
				}
				used += n
				if row >= 0 {
					kept, n := set(int(row), genes, p.geneMap, &scratch)
					ones.Add(int64(n))
					if kept != n {
						mu.Lock()
						rep.n += int64(kept - n)
						if rep.row < 0 || int(row) < rep.row {
							rep.row = int(row)
						}
						mu.Unlock()
					}
				}
			}
			if seen >= progressStep {
				mu.Lock()
				read += seen
				prog.add(int(base + int64(float64(read)*scale) - prog.done))
				mu.Unlock()
				seen = 0
			}
			return used, nil
		}
	}, written)
	if err != nil {
		return spilled{}, err
	}
	prog.add(int(base + c.entries - prog.done))
	return spilled{read: n, set: ones.Load(), repeats: rep}, nil
}

// risingRow follows, for one decoding worker, the cell whose runs have been
// set by setRising: the last gene set and the output word of the last kept
// one. A sorted spill's runs of one cell follow each other in one frame.
type risingRow struct {
	cell  int32 // -1: none
	after int32 // genes set in cell's row are at most this; MaxInt32 once a run did not rise
	word  int32 // -1: none kept
}

// set sets the run of cell's k genes at enc in words while they rise (see
// setRising) and returns the bytes and genes read, the genes kept and the
// last gene read (0 if none), from which the rest of the run's gaps count.
func (r *risingRow) set(cell int32, enc []byte, k int, words []uint64, geneMap []int32) (used, done, kept int, last int32) {
	if cell != r.cell {
		r.cell, r.after, r.word = cell, -1, -1
	}
	used, done, kept, last, r.word = setRising(enc, k, r.after, r.word, words, geneMap)
	if done == k {
		r.after = last
	}
	return used, done, kept, last
}

// taint marks cell's row as set otherwise than by setRising: its next runs
// are too.
func (r *risingRow) taint(cell int32) { r.cell, r.after = cell, math.MaxInt32 }

// setRising sets the genes of the run of k encoded at enc (see spillWriter)
// in words, mapped through geneMap, while they rise above after, the
// highest gene set in this row before: none of them can then repeat one
// already set, and every word past word (that of the last kept gene set
// before, -1 if none) is still zero, so a word's bits gather in a register
// and are stored, never loaded. It returns the bytes and genes read, the
// genes kept, the last gene read (0 if none) and its word; done < k means
// gene done does not rise or is no gene, and the caller goes on from there
// (counting repeats, reporting a corrupt spill). Where the build has
// riseBytes, it sets the gaps of one and two bytes after the first gene,
// and this loop the rest.
func setRising(enc []byte, k int, after, word int32, words []uint64, geneMap []int32) (used, done, kept int, last, lastWord int32) {
	var acc uint64
	if word >= 0 {
		acc = words[word]
	}
	for done < k && used < len(enc) {
		if useRiseBytes && done > 0 {
			// After the first gene, gene > after follows from a positive gap.
			s := riseState{last: last, word: word, acc: acc}
			n := riseBytes(enc[used:min(len(enc), used+k-done)], &s, words, geneMap)
			if n < 0 {
				panic("ingest: gene map past the row's words")
			}
			if n > 0 {
				used, done, kept = used+n, done+n-s.long, kept+n-s.long-s.dropped
				last, after, word, acc = s.last, s.last, s.word, s.acc
				continue
			}
		}
		// Gaps of one or two bytes inline; a longer one (more than 8255
		// genes) goes the general way.
		c, q := uint32(enc[used]), used+1
		if c >= 0x80 {
			if q >= len(enc) || enc[q] >= 0x80 {
				break
			}
			c, q = c&0x7f|uint32(enc[q])<<7, q+1
		}
		gene := last + gapOf(c)
		if gene <= after || uint32(gene) >= uint32(len(geneMap)) {
			break
		}
		last, after, used = gene, gene, q
		done++
		o := geneMap[gene]
		if o < 0 {
			continue
		}
		w := o >> 6
		same := uint64(0)
		if w == word {
			same = ^uint64(0)
		}
		acc = acc&same | 1<<(o&63)
		words[w] = acc
		word = w
		kept++
	}
	return used, done, kept, last, word
}

// riseState is what riseBytes carries from one gap to the next: the last
// gene, the word of the last kept one (−1: none in this row yet) and its
// bits; and what it counts: the genes dropped and the gaps of two bytes.
type riseState struct {
	last, word int32
	acc        uint64
	dropped    int
	long       int // gaps of two bytes
}

// blockRows builds cell blocks of X in memory, for rows that arrive in
// order: the bits of a block are set in a reused buffer, which is written
// whole when the block is complete (shard.Writer.WriteBlock), sparing the
// page fault per 4 KiB that setting bits in the shard's mapped files takes.
// At most budget buffers exist;
// a block first touched when none is free is set through the mapping, so
// memory stays bounded however far ahead of the oldest incomplete block the
// decoders run.
type blockRows struct {
	w                *shard.Writer
	rows, wpr, cells int // rows per block, words per row, rows in all

	mu     sync.Mutex
	state  []blockState
	live   map[int][]uint64 // buffers of the blockBuffered blocks
	free   [][]uint64       // cleared buffers of full-block size
	budget int              // buffers that may still be allocated

	observed *sampleMask // the rows' observed mask; nil: not masked
}

type blockState uint8

const (
	blockUntouched blockState = iota
	blockBuffered
	blockMapped
)

// buffer returns block b's buffer, giving it one at its first row if the
// budget allows, or nil when b is set through the mapping.
func (br *blockRows) buffer(b int) []uint64 {
	br.mu.Lock()
	defer br.mu.Unlock()
	switch br.state[b] {
	case blockBuffered:
		return br.live[b]
	case blockMapped:
		return nil
	}
	var buf []uint64
	switch n := len(br.free); {
	case n > 0:
		buf, br.free = br.free[n-1], br.free[:n-1]
	case br.budget > 0:
		br.budget--
		buf = make([]uint64, br.rows*br.wpr)
	default:
		br.state[b] = blockMapped
		return nil
	}
	br.state[b], br.live[b] = blockBuffered, buf
	return buf
}

// rowWords returns the words of row in its block's buffer, or nil when
// the block is set through the mapping.
func (br *blockRows) rowWords(row int) []uint64 {
	b := row / br.rows
	buf := br.buffer(b)
	if buf == nil {
		return nil
	}
	return buf[(row-b*br.rows)*br.wpr:][:br.wpr]
}

// setBuffered is a setter: it sets the kept genes of row, mapped through
// geneMap. Rows of one block may be set concurrently: they share no word.
func (br *blockRows) setBuffered(row int, genes, geneMap []int32, scratch *[]int32) (kept, set int) {
	words := br.rowWords(row)
	if words == nil {
		return br.setMapped(row, genes, geneMap, scratch)
	}
	for _, g := range genes {
		if g := geneMap[g]; g >= 0 {
			old := words[g>>6]
			words[g>>6] = old | 1<<(g&63)
			set += int(^old >> (g & 63) & 1)
			kept++
		}
	}
	return kept, set
}

// setMapped is a setter that sets the kept genes of row through the
// shard's mapping.
func (br *blockRows) setMapped(row int, genes, geneMap []int32, scratch *[]int32) (kept, set int) {
	list := (*scratch)[:0]
	for _, g := range genes {
		if g := geneMap[g]; g >= 0 {
			list = append(list, g)
		}
	}
	if len(list) > 0 {
		set = br.w.SetRow(row, list)
	}
	*scratch = list
	return len(list), set
}

// finish writes and finishes complete block b and recycles its buffer.
func (br *blockRows) finish(b int) error {
	br.mu.Lock()
	buf, buffered := br.live[b]
	delete(br.live, b)
	br.mu.Unlock()
	lo, hi := b*br.rows, min((b+1)*br.rows, br.cells)
	if !buffered {
		if br.observed != nil {
			for row := lo; row < hi; row++ {
				br.w.SetObservedRowWords(row, br.observed.row(row))
			}
		}
		return br.w.FinishBlock(b)
	}
	n := (hi - lo) * br.wpr
	var mask []uint64
	if br.observed != nil {
		mask = make([]uint64, 0, n)
		for row := lo; row < hi; row++ {
			mask = append(mask, br.observed.row(row)...)
		}
	}
	err := br.w.WriteBlock(b, buf[:n], mask)
	clear(buf)
	br.mu.Lock()
	br.free = append(br.free, buf)
	br.mu.Unlock()
	return err
}
