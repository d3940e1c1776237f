package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"

	"scpipe/internal/mpi"
)

// TestRankCost runs the per-rank measurement on a Local group of 3: the
// wrapped sums stay the group's, and rank 0 logs one line per rank with
// that rank's cells and sweeps (and, on Linux, a positive memory and CPU
// time).
func TestRankCost(t *testing.T) {
	t.Parallel()
	const ranks, sweeps = 3, 2
	comms := mpi.Local(ranks)
	var out bytes.Buffer
	errs := make([]error, ranks)
	var wg sync.WaitGroup
	for r, comm := range comms {
		wg.Go(func() {
			lg := slog.New(slog.DiscardHandler)
			if r == 0 {
				lg = slog.New(slog.NewTextHandler(&out, nil))
			}
			c := newRankCost(comm, 100*(r+1))
			for range sweeps {
				c.startSweep()
				v := []int64{int64(r), 1}
				if err := c.SumInt64(v); err != nil {
					errs[r] = err
					return
				}
				if v[0] != ranks*(ranks-1)/2 || v[1] != ranks {
					errs[r] = fmt.Errorf("rank %d: sums %v", r, v)
					return
				}
				c.endSweep()
			}
			errs[r] = c.log(context.Background(), lg.With("L", 4, "chain", 1))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != ranks {
		t.Fatalf("rank 0 logged %d lines, want %d:\n%s", len(lines), ranks, out.String())
	}
	for q, line := range lines {
		for _, want := range []string{fmt.Sprintf(" rank=%d ", q), fmt.Sprintf(" cells=%d ", 100*(q+1)), fmt.Sprintf(" sweeps=%d ", sweeps)} {
			if !strings.Contains(line, want) {
				t.Errorf("line %d lacks %q: %s", q, want, line)
			}
		}
		if runtime.GOOS == "linux" && (strings.Contains(line, "peak_rss_anon_MiB=0 ") || strings.Contains(line, "peak_rss_anon_MiB=-")) {
			t.Errorf("line %d: no anonymous memory measured: %s", q, line)
		}
	}
}
