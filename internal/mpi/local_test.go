package mpi

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// checkMember runs every collective once in member c, whose group's other
// members run it at the same time, and checks what each returns.
func checkMember(t *testing.T, c Comm) error {
	ctx := context.Background()
	r, n := c.Rank(), c.Size()
	fail := func(format string, a ...any) {
		t.Errorf("rank %d of %d: "+format, append([]any{r, n}, a...)...)
	}
	v := []int64{int64(r + 1), -1, 1 << 40}
	if err := c.SumInt64(ctx, v); err != nil {
		return err
	}
	if want := []int64{int64(n * (n + 1) / 2), int64(-n), int64(n) << 40}; v[0] != want[0] || v[1] != want[1] || v[2] != want[2] {
		fail("SumInt64 %v, want %v", v, want)
	}
	f := []float64{0.5 * float64(r)}
	if err := c.SumFloat64(ctx, f); err != nil {
		return err
	}
	if want := 0.25 * float64(n*(n-1)); f[0] != want {
		fail("SumFloat64 %v, want %v", f[0], want)
	}
	mine := make([]byte, 3*r) // rank 0 gives nothing
	for i := range mine {
		mine[i] = byte(r*16 + i)
	}
	for _, root := range []int{0, n - 1} {
		got, err := c.GatherBytes(ctx, root, mine)
		if err != nil {
			return err
		}
		if r != root {
			if got != nil {
				fail("GatherBytes to %d gave a non-root %d pieces", root, len(got))
			}
			continue
		}
		if len(got) != n {
			fail("GatherBytes to %d gave root %d pieces", root, len(got))
			continue
		}
		for k, piece := range got {
			if len(piece) != 3*k {
				fail("GatherBytes: rank %d's piece has %d bytes, want %d", k, len(piece), 3*k)
				continue
			}
			for i, x := range piece {
				if x != byte(k*16+i) {
					fail("GatherBytes: byte %d of rank %d's piece is %d, want %d", i, k, x, k*16+i)
				}
			}
		}
	}
	b := []byte{byte(r), byte(r)}
	if err := c.Broadcast(ctx, n-1, b); err != nil {
		return err
	}
	if b[0] != byte(n-1) || b[1] != byte(n-1) {
		fail("Broadcast from %d gave %v", n-1, b)
	}
	return c.Barrier(ctx)
}

func TestLocalCollectives(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 3, 8} {
		comms := Local(n)
		if comms[0].Size() != n {
			t.Fatalf("Local(%d) has size %d", n, comms[0].Size())
		}
		errs := make([]error, n)
		var wg sync.WaitGroup
		for r, c := range comms {
			wg.Go(func() { errs[r] = checkMember(t, c) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Errorf("Local(%d): %v", n, err)
		}
	}
}

// TestLocalMismatch checks that vectors of different lengths fail every
// member instead of summing garbage, and that a member that has left
// cannot take part.
func TestLocalMismatch(t *testing.T) {
	t.Parallel()
	comms := Local(2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Go(func() { errs[r] = c.SumInt64(context.Background(), make([]int64, r+1)) })
	}
	wg.Wait()
	for r, err := range errs {
		if !errors.Is(err, errMPI) {
			t.Errorf("rank %d: got %v, want an error wrapping errMPI", r, err)
		}
	}
	comms[0].Close()
	if err := comms[0].Barrier(context.Background()); !errors.Is(err, errMPI) {
		t.Errorf("Barrier after Close: got %v, want an error wrapping errMPI", err)
	}
}
