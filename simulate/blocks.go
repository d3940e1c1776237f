package simulate

import (
	"context"
	"math/rand/v2"
	"runtime"

	"golang.org/x/sync/errgroup"
)

// blockCells is the number of cells a worker draws at a time: enough to
// amortise the hand-over, few enough that the blocks in flight stay small.
const blockCells = 256

// rowBuf is one worker's scratch for drawing rows.
type rowBuf struct {
	row, clean []uint64
	counts     []uint32
	pcg        *rand.PCG
	r          *rand.Rand
}

func (t *Truth) newRowBuf() *rowBuf {
	pcg := rand.NewPCG(0, 0)
	return &rowBuf{
		row: make([]uint64, t.words), clean: make([]uint64, t.words),
		counts: make([]uint32, t.Genes),
		pcg:    pcg, r: rand.New(pcg),
	}
}

// draw fills b with cell n's observed and noise-free rows and the counts of
// its observed ones, exactly as RowCounts does but without allocating.
func (t *Truth) draw(n int, b *rowBuf) {
	if t.Kind == SingleCell {
		b.pcg.Seed(t.Seed^singleCellStream, uint64(n)+1)
		t.singleCellRow(n, b.row, b.clean, b.counts, b.r)
		return
	}
	t.RowCounts(n, b.row, b.clean, b.counts)
}

func (t *Truth) workers() int {
	if t.Workers > 0 {
		return t.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// eachBlock draws all cells in blocks of blockCells on t.Workers
// goroutines: work turns the block of cells [lo, hi) into a value, using its
// worker's scratch, and use receives the values in cell order. Every row
// comes from its own stream, so the result does not depend on the number of
// workers. At most two blocks per worker are held at once.
func eachBlock[R any](ctx context.Context, t *Truth, work func(b *rowBuf, lo, hi int) R, use func(R) error) error {
	return eachBlockIn(ctx, t, 0, t.Cells, work, use)
}

// eachBlockIn is eachBlock for the cells [first, end).
func eachBlockIn[R any](ctx context.Context, t *Truth, first, end int, work func(b *rowBuf, lo, hi int) R, use func(R) error) error {
	W := t.workers()
	blocks := (end - first + blockCells - 1) / blockCells
	W = max(1, min(W, blocks))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	outs := make([]chan R, W)
	for w := range outs {
		outs[w] = make(chan R, 1)
		g.Go(func() error {
			defer close(outs[w])
			buf := t.newRowBuf()
			for b := w; b < blocks; b += W {
				if err := gctx.Err(); err != nil {
					return err
				}
				v := work(buf, first+b*blockCells, min(first+(b+1)*blockCells, end))
				select {
				case outs[w] <- v:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
			return nil
		})
	}
	var useErr error
	for b := range blocks {
		v, ok := <-outs[b%W]
		if !ok {
			break // a worker stopped: g.Wait says why
		}
		if useErr = use(v); useErr != nil {
			break
		}
	}
	cancel()
	err := g.Wait()
	if useErr != nil {
		return useErr
	}
	return err
}
