// Package mpi holds the collectives a fit spread over processes needs —
// rank, size, element-wise sums, a gather to one member, broadcast, barrier — behind one interface,
// Comm, with two implementations: World, a thin cgo binding to the
// system's MPI library (Open MPI on Debian: libopenmpi-dev), compiled only
// with the build tag mpi, so that the default build needs neither cgo nor
// MPI; and Local, a group of goroutines in one process with the same
// collectives and the same results, for tests and for machines without MPI.
//
// Every member of a group must call the collectives in the same order with
// arguments of the same length; a member that skips one blocks the others
// (in MPI as in Local).
//
//	comm, err := mpi.World() // -tags mpi; after MPI_Init
//	defer comm.Close()
//	v := []int64{localCount}
//	err = comm.SumInt64(ctx, v) // v[0] is now the sum over the ranks
package mpi

import (
	"context"
	"errors"
)

// Comm is a group of processes (MPI ranks) that call collectives together.
type Comm interface {
	// Rank is this member's index, 0 ≤ Rank < Size.
	Rank() int
	// Size is the number of members.
	Size() int
	// SumInt64 replaces v, in every member, by the element-wise sum of
	// every member's v (MPI_Allreduce with MPI_SUM). Integer sums do not
	// depend on the order of the additions.
	SumInt64(ctx context.Context, v []int64) error
	// SumFloat64 is SumInt64 for float64. Its rounding may depend on the
	// order of the additions, which MPI leaves to the library.
	SumFloat64(ctx context.Context, v []float64) error
	// GatherBytes collects every member's b, which may differ in length,
	// into root (MPI_Gather of the lengths, then MPI_Gatherv): root gets
	// them in rank order, copied, and the others nil. Only root holds more
	// than its own b.
	GatherBytes(ctx context.Context, root int, b []byte) ([][]byte, error)
	// Broadcast copies root's b into every member's b (MPI_Bcast).
	Broadcast(ctx context.Context, root int, b []byte) error
	// Barrier returns when every member has called it.
	Barrier(ctx context.Context) error
	// Close leaves the group (MPI_Finalize for World); the Comm must not be
	// used afterwards.
	Close() error
}

// errMPI is wrapped by the errors of this package.
var errMPI = errors.New("mpi")
