package mpi

import (
	"context"
	"fmt"
	"sync"
)

// Local returns a group of n members in this process, one Comm per member,
// each to be used by its own goroutine. Collectives rendezvous on the
// group: each member's call returns once all n have made the same call.
// Sums are added in rank order, as one process would add them.
func Local(n int) []Comm {
	g := &group{n: n}
	g.cond = sync.NewCond(&g.mu)
	out := make([]Comm, n)
	for r := range out {
		out[r] = &member{g: g, rank: r}
	}
	return out
}

// group is the state the members of a Local group share: the call being
// gathered (each member's argument) and a generation counter that tells a
// member its call has completed.
type group struct {
	mu      sync.Mutex
	cond    *sync.Cond
	n       int
	args    []any
	arrived int
	gen     uint64
	result  any
	err     error
}

type member struct {
	g      *group
	rank   int
	closed bool
}

func (m *member) Rank() int { return m.rank }
func (m *member) Size() int { return m.g.n }

// collect waits until every member has passed its argument, then lets the
// last one combine them (done, under the lock) and returns the result.
func (m *member) collect(ctx context.Context, arg any, done func(args []any) (any, error)) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g := m.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if m.closed {
		return nil, fmt.Errorf("%w: collective by a member that has left the group", errMPI)
	}
	if g.args == nil {
		g.args = make([]any, g.n)
	}
	g.args[m.rank] = arg
	g.arrived++
	gen := g.gen
	if g.arrived == g.n {
		g.result, g.err = done(g.args)
		g.args, g.arrived = nil, 0
		g.gen++
		g.cond.Broadcast()
		return g.result, g.err
	}
	for g.gen == gen {
		g.cond.Wait()
	}
	return g.result, g.err
}

func sameLengths[T any](args []any) error {
	for _, a := range args {
		if len(a.([]T)) != len(args[0].([]T)) {
			return fmt.Errorf("%w: members passed vectors of different lengths to a collective", errMPI)
		}
	}
	return nil
}

// SumInt64 implements Comm.
func (m *member) SumInt64(ctx context.Context, v []int64) error {
	sum, err := m.collect(ctx, v, func(args []any) (any, error) {
		if err := sameLengths[int64](args); err != nil {
			return nil, err
		}
		s := make([]int64, len(v))
		for _, a := range args {
			for i, x := range a.([]int64) {
				s[i] += x
			}
		}
		return s, nil
	})
	if err == nil {
		copy(v, sum.([]int64))
	}
	return err
}

// SumFloat64 implements Comm.
func (m *member) SumFloat64(ctx context.Context, v []float64) error {
	sum, err := m.collect(ctx, v, func(args []any) (any, error) {
		if err := sameLengths[float64](args); err != nil {
			return nil, err
		}
		s := make([]float64, len(v))
		for _, a := range args {
			for i, x := range a.([]float64) {
				s[i] += x
			}
		}
		return s, nil
	})
	if err == nil {
		copy(v, sum.([]float64))
	}
	return err
}

// GatherBytes implements Comm.
func (m *member) GatherBytes(ctx context.Context, root int, b []byte) ([][]byte, error) {
	if root < 0 || root >= m.g.n {
		return nil, fmt.Errorf("%w: gather to rank %d of %d", errMPI, root, m.g.n)
	}
	got, err := m.collect(ctx, b, func(args []any) (any, error) {
		out := make([][]byte, len(args))
		for r, a := range args {
			out[r] = append([]byte{}, a.([]byte)...)
		}
		return out, nil
	})
	if err != nil || m.rank != root {
		return nil, err
	}
	return got.([][]byte), nil
}

// Broadcast implements Comm.
func (m *member) Broadcast(ctx context.Context, root int, b []byte) error {
	if root < 0 || root >= m.g.n {
		return fmt.Errorf("%w: broadcast from rank %d of %d", errMPI, root, m.g.n)
	}
	got, err := m.collect(ctx, b, func(args []any) (any, error) {
		if err := sameLengths[byte](args); err != nil {
			return nil, err
		}
		return append([]byte(nil), args[root].([]byte)...), nil
	})
	if err == nil {
		copy(b, got.([]byte))
	}
	return err
}

// Barrier implements Comm.
func (m *member) Barrier(ctx context.Context) error {
	_, err := m.collect(ctx, nil, func([]any) (any, error) { return nil, nil })
	return err
}

// Close implements Comm.
func (m *member) Close() error {
	m.g.mu.Lock()
	defer m.g.mu.Unlock()
	if !m.closed {
		m.closed = true
	}
	return nil
}
