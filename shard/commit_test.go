package shard

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"scpipe/internal/testkit"
)

// countdown is a context whose Err reports cancellation after n calls
// that did not: Ctrl-C arriving at a chosen check. Its Done is nil.
type countdown struct {
	context.Context
	n atomic.Int64
}

func (c *countdown) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestCommitStops: Commit stops at each of its checks of the context
// (before each block is finished, before and after the files are synced)
// with an error that wraps context.Canceled, leaving no shard and no
// temporary; ingest and simulate installed a shard after Ctrl-C when the
// signal came during the commit.
func TestCommitStops(t *testing.T) {
	t.Parallel()
	for k := int64(0); ; k++ {
		if k > 100 {
			t.Fatal("Commit never finished")
		}
		parent := t.TempDir()
		dst := filepath.Join(parent, "s")
		w, err := Create(dst, Layout{Cells: 3 * 64, Genes: 70, RowsPerBlock: 64}, CreateOptions{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		w.Set(1, 2)
		w.Set(2*64+5, 69)
		ctx := &countdown{Context: context.Background()}
		ctx.n.Store(k)
		err = w.Commit(ctx, Manifest{})
		if err == nil {
			if k < 5 { // three blocks, and the two looks around the sync
				t.Errorf("Commit finished after %d checks of the context", k)
			}
			return
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("stopped at check %d: %v, want context.Canceled", k, err)
		}
		if got := testkit.Names(t, parent); len(got) > 0 {
			t.Errorf("stopped at check %d: left %q", k, got)
		}
	}
}
