package export_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"scpipe/export"
)

// countdown is a context whose Err reports cancellation after n calls
// that did not: Ctrl-C arriving at a chosen check of the work. Its Done
// is nil, so contexts derived from it never see it.
type countdown struct {
	context.Context
	n atomic.Int64
}

func newCountdown(n int64) *countdown {
	c := &countdown{Context: context.Background()}
	c.n.Store(n)
	return c
}

func (c *countdown) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestExportStops: Export and WriteCNMF stop once their context is done,
// before they begin (the shards' checksums among what is not verified)
// and at every later check, with an error wrapping context.Canceled, and
// leave nothing: no output, no temporary. A SIGINT 0.4 s into exporting
// 400 000 cells once gave exit status 0 and installed the file.
func TestExportStops(t *testing.T) {
	t.Parallel()
	r := copyRun(t, run(t))
	f, err := export.ReadFit(r, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	user := filepath.Join(t.TempDir(), "user.h5ad")
	userFile(t, r, user, f.Cells.Barcodes)
	for _, tc := range []struct {
		name  string
		write func(ctx context.Context, o export.Options, out string) error
	}{
		{"h5ad", func(ctx context.Context, o export.Options, out string) error {
			o.Out = out
			_, err := export.Export(ctx, o)
			return err
		}},
		{"h5ad into the user's", func(ctx context.Context, o export.Options, out string) error {
			o.Out, o.Into = out, user
			_, err := export.Export(ctx, o)
			return err
		}},
		{"cNMF", func(ctx context.Context, o export.Options, out string) error {
			_, err := export.WriteCNMF(ctx, o, out)
			return err
		}},
	} {
		o := export.DefaultOptions()
		o.Run, o.L = r, 2
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		ctxs := []context.Context{cancelled}
		for k := range int64(1000) {
			ctxs = append(ctxs, newCountdown(k))
		}
		checks := 0
		for i, ctx := range ctxs {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			err := tc.write(ctx, o, out)
			if i > 0 && err == nil {
				checks = i - 1
				if _, err := os.Stat(out); err != nil {
					t.Errorf("%s: not stopped, yet %v", tc.name, err)
				}
				break
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("%s, stopped at check %d: %v, want it to wrap context.Canceled", tc.name, i-1, err)
			}
			if left, _ := os.ReadDir(dir); len(left) > 0 {
				t.Errorf("%s, stopped at check %d: left %s", tc.name, i-1, left[0].Name())
			}
		}
		t.Logf("%s: %d checks", tc.name, checks)
		if checks < 2 || checks == len(ctxs)-1 {
			t.Errorf("%s: %d checks of the context", tc.name, checks)
		}
	}
	if ok, _ := filepath.Glob(filepath.Join(filepath.Dir(user), "*")); !slices.Equal(ok, []string{user}) {
		t.Errorf("beside the user's file: %v", ok)
	}
}
