package gibbs

import (
	"context"
	"fmt"
	"math/bits"
	"sync"
)

// Holes lists the entries that Data's Mask leaves unobserved, each row's
// in both orientations, with the entry's bit of X. Where they are few, as
// a fit's held-out entries are (1% by default), a Sampler given them
// (Data.Holes) scans X in its steps as if every entry were observed, with
// the kernels' full-data paths and the totals cache (totals.go), and takes
// each listed entry back out of the counts of the scanned row
// (stepSpec.fillHoles). A mask read beside X in every scan doubles the
// words a scan streams; a row's holes cost a few operations each. The
// counts are the same integers either way, so every result is
// bit-identical with and without Holes.
type Holes struct {
	cells, genes holeRows // by the rows of X (cells) and of XT (genes)
}

// holeRows holds row i's unobserved entries in at[start[i]:start[i+1]],
// in column order, each its column shifted left by one above X's bit.
type holeRows struct {
	start []int64
	at    []uint32
}

// Len returns the number of unobserved entries.
func (h *Holes) Len() int64 { return int64(len(h.cells.at)) }

// Bytes returns the memory the lists take.
func (h *Holes) Bytes() int64 {
	return 4*int64(len(h.cells.at)+len(h.genes.at)) + 8*int64(len(h.cells.start)+len(h.genes.start))
}

// NewHoles lists the unobserved entries of data, which must have a Mask,
// reading rows with up to workers goroutines (0: one).
func NewHoles(ctx context.Context, data Data, workers int) (*Holes, error) {
	if data.Mask == nil || data.MaskT == nil || data.X == nil || data.XT == nil {
		return nil, fmt.Errorf("%w: holes need X, XT, Mask and MaskT", errShape)
	}
	if data.X.Cols() >= 1<<31 || data.XT.Cols() >= 1<<31 {
		return nil, fmt.Errorf("%w: holes need fewer than 2³¹ cells and genes", errShape)
	}
	cells, err := listHoles(ctx, data.X, data.Mask, workers)
	if err != nil {
		return nil, err
	}
	genes, err := listHoles(ctx, data.XT, data.MaskT, workers)
	if err != nil {
		return nil, err
	}
	if len(cells.at) != len(genes.at) {
		return nil, fmt.Errorf("%w: Mask leaves %d entries unobserved but MaskT %d", errShape, len(cells.at), len(genes.at))
	}
	return &Holes{cells: cells, genes: genes}, nil
}

// listHoles lists the unobserved entries of each row of x, in blocks of
// rows read in parallel.
func listHoles(ctx context.Context, x, mask BitMatrix, workers int) (holeRows, error) {
	rows := x.Rows()
	w := max(1, min(workers, rows))
	parts := make([][]uint32, w)
	counts := make([]int64, rows+1)
	var wg sync.WaitGroup
	for k := range w {
		lo, hi := k*rows/w, (k+1)*rows/w
		wg.Go(func() {
			var at []uint32
			for i := lo; i < hi; i++ {
				if (i-lo)%4096 == 0 && ctx.Err() != nil {
					return
				}
				n := len(at)
				at = appendHoles(at, x, mask, i)
				counts[i+1] = int64(len(at) - n)
			}
			parts[k] = at
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return holeRows{}, err
	}
	h := holeRows{start: counts}
	for i := range rows {
		h.start[i+1] += h.start[i]
	}
	h.at = make([]uint32, 0, h.start[rows])
	for _, p := range parts {
		h.at = append(h.at, p...)
	}
	return h, nil
}

// appendHoles appends row i's unobserved entries to at.
func appendHoles(at []uint32, x, mask BitMatrix, i int) []uint32 {
	b := x.Segments()
	for seg := 0; seg+1 < len(b); seg++ {
		xs, ms := x.Segment(i, seg), mask.Segment(i, seg)
		for k, obs := range ms {
			j0 := b[seg] + 64*k
			m := ^obs
			if r := b[seg+1] - j0; r < 64 {
				m &= 1<<uint(r) - 1
			}
			for ; m != 0; m &= m - 1 {
				j := bits.TrailingZeros64(m)
				at = append(at, uint32(j0+j)<<1|uint32(xs[k]>>uint(j)&1))
			}
		}
	}
	return at
}

// setHoles lets step sp scan its rows as fully observed and fill in their
// holes, where the data list them. A partitioned fit's process, and a U
// step that sums its rows' ones by sample (scanBySample), read the mask.
func (s *Sampler) setHoles(sp *stepSpec) {
	sp.holes = nil
	h := s.data.Holes
	if h == nil || s.part != nil || sp.smp != nil && !sp.cells {
		return
	}
	sp.mask, sp.holes = nil, &h.genes
	if sp.cells {
		sp.holes = &h.cells
	}
	s.colCodes = columnCodes(s.colCodes, sp.other, sp.L)
	sp.colCodes = s.colCodes
}

// columnCodes returns, in buf when it is large enough, the codes (bit l)
// whose bitset in the interleaved codes has column j, for every column.
func columnCodes(buf, codes []uint64, L int) []uint64 {
	words := len(codes) / L
	if cap(buf) < 64*words {
		buf = make([]uint64, 64*words)
	}
	buf = buf[:64*words]
	clear(buf)
	for w := range words {
		for l, c := range codes[w*L : w*L+L] {
			for ; c != 0; c &= c - 1 {
				buf[64*w+bits.TrailingZeros64(c)] |= 1 << uint(l)
			}
		}
	}
	return buf
}

// fillHoles takes row i's holes back out of the counts of a scan that
// read them as observed, with the codes active active (the kernel's,
// foldHousekeeping's). A hole at column j is in code l's sum when l alone
// would decide it: l has j and no other active code does. It is in the
// row's covered entries when an active code has j, and mispredicted when
// X's bit there differs from that.
func (sp *stepSpec) fillHoles(r *rowState, i int, active uint64) {
	var lift [][]uint64
	if r.lifted {
		lift, _ = sp.rowLift(i)
	}
	h := sp.holes
	var miss, covered int64
	for _, e := range h.at[h.start[i]:h.start[i+1]] {
		j, x := int(e>>1), int64(e&1)
		codes := sp.colCodes[j]
		on := codes & active
		cov := int64(boolBit(on != 0))
		miss, covered = miss+(x^cov), covered+cov
		// l alone decides j: j is l's and no active code's, or l's,
		// active, and no other active code's.
		sums := codes & r.sums
		if on != 0 {
			sums &= on
			if on&(on-1) != 0 {
				sums = 0
			}
		}
		for ; sums != 0; sums &= sums - 1 {
			l := bits.TrailingZeros64(sums)
			r.acc[l] -= packCounts(x, 1)
			if x != 0 && lift != nil {
				r.lev[l] -= columnLevel(lift, j)
			}
		}
	}
	r.counts -= packCounts(miss, covered)
}

// columnLevel returns the level of column j over the bit planes lift.
func columnLevel(lift [][]uint64, j int) uint64 {
	var k uint64
	for b, p := range lift {
		k |= (p[j/64] >> uint(j%64) & 1) << uint(b)
	}
	return k
}

// checkHoles checks that the data's holes are as many as the entries its
// mask leaves out (in a partitioned fit, counted over the process's cells
// alone, their rows in number).
func (s *Sampler) checkHoles(c *dataCounts, p *Part) error {
	h := s.data.Holes
	if h == nil {
		return nil
	}
	if s.data.Mask == nil {
		return fmt.Errorf("%w: Holes without a Mask", errShape)
	}
	if len(h.cells.start) != s.n+1 || len(h.genes.start) != s.d+1 {
		return fmt.Errorf("%w: Holes of %d cells and %d genes, data of %d and %d", errShape, len(h.cells.start)-1, len(h.genes.start)-1, s.n, s.d)
	}
	if p == nil && int64(s.n)*int64(s.d)-c.observed != h.Len() {
		return fmt.Errorf("%w: Holes list %d entries, Mask leaves out %d", errShape, h.Len(), int64(s.n)*int64(s.d)-c.observed)
	}
	return nil
}
