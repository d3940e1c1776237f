//go:build mpi

package mpi

/*
#cgo pkg-config: ompi-c
#include <mpi.h>

// Open MPI's handles are addresses of library objects, which cgo cannot
// name; these wrappers take plain C types.
static int scp_init(int *provided) {
	int done = 0;
	MPI_Initialized(&done);
	if (done) {
		MPI_Query_thread(provided);
		return MPI_SUCCESS;
	}
	return MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, provided);
}
static int scp_rank(int *r) { return MPI_Comm_rank(MPI_COMM_WORLD, r); }
static int scp_size(int *n) { return MPI_Comm_size(MPI_COMM_WORLD, n); }
static int scp_sum_int64(long long *v, int n) {
	return MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
}
static int scp_sum_float64(double *v, int n) {
	return MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
static int scp_allgather_len(long long n, long long *all) {
	return MPI_Allgather(&n, 1, MPI_INT64_T, all, 1, MPI_INT64_T, MPI_COMM_WORLD);
}
static int scp_gatherv(void *b, int n, void *recv, int *counts, int *displs, int root) {
	return MPI_Gatherv(b, n, MPI_BYTE, recv, counts, displs, MPI_BYTE, root, MPI_COMM_WORLD);
}
static int scp_bcast(void *b, int n, int root) { return MPI_Bcast(b, n, MPI_BYTE, root, MPI_COMM_WORLD); }
static int scp_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }
static int scp_finalize(void) { return MPI_Finalize(); }
static int scp_errstr(int code, char *buf, int *n) { return MPI_Error_string(code, buf, n); }
*/
import "C"

import (
	"context"
	"fmt"
	"unsafe"
)

// maxChunk bounds the elements of one MPI call, whose counts are C ints.
const maxChunk = 1 << 28

// world is MPI_COMM_WORLD.
type world struct {
	rank, size int
	closed     bool
}

// World initialises MPI (MPI_Init_thread, calls serialised: a Go program
// may make them from any thread, one at a time) and returns
// MPI_COMM_WORLD. Calls to the returned Comm must not overlap. Close calls
// MPI_Finalize.
func World() (Comm, error) {
	var provided C.int
	if rc := C.scp_init(&provided); rc != C.MPI_SUCCESS {
		return nil, mpiError("MPI_Init_thread", rc)
	}
	if provided < C.MPI_THREAD_SERIALIZED {
		return nil, fmt.Errorf("%w: the MPI library gives thread level %d, below MPI_THREAD_SERIALIZED", errMPI, int(provided))
	}
	var r, n C.int
	if rc := C.scp_rank(&r); rc != C.MPI_SUCCESS {
		return nil, mpiError("MPI_Comm_rank", rc)
	}
	if rc := C.scp_size(&n); rc != C.MPI_SUCCESS {
		return nil, mpiError("MPI_Comm_size", rc)
	}
	return &world{rank: int(r), size: int(n)}, nil
}

func mpiError(call string, rc C.int) error {
	buf := make([]byte, C.MPI_MAX_ERROR_STRING)
	var n C.int
	C.scp_errstr(rc, (*C.char)(unsafe.Pointer(&buf[0])), &n)
	return fmt.Errorf("%w: %s: %s", errMPI, call, buf[:n])
}

func (w *world) Rank() int { return w.rank }
func (w *world) Size() int { return w.size }

// chunks calls f on successive ranges of at most maxChunk of n elements.
func chunks(n int, f func(lo, hi int) C.int) C.int {
	for lo := 0; lo < n; lo += maxChunk {
		if rc := f(lo, min(lo+maxChunk, n)); rc != C.MPI_SUCCESS {
			return rc
		}
	}
	return C.MPI_SUCCESS
}

// SumInt64 implements Comm with MPI_Allreduce (MPI_INT64_T, MPI_SUM).
func (w *world) SumInt64(ctx context.Context, v []int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	rc := chunks(len(v), func(lo, hi int) C.int {
		return C.scp_sum_int64((*C.longlong)(unsafe.Pointer(&v[lo])), C.int(hi-lo))
	})
	if rc != C.MPI_SUCCESS {
		return mpiError("MPI_Allreduce", rc)
	}
	return nil
}

// SumFloat64 implements Comm with MPI_Allreduce (MPI_DOUBLE, MPI_SUM).
func (w *world) SumFloat64(ctx context.Context, v []float64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	rc := chunks(len(v), func(lo, hi int) C.int {
		return C.scp_sum_float64((*C.double)(unsafe.Pointer(&v[lo])), C.int(hi-lo))
	})
	if rc != C.MPI_SUCCESS {
		return mpiError("MPI_Allreduce", rc)
	}
	return nil
}

// gatherRound bounds the bytes root receives in one MPI_Gatherv, whose
// counts and displacements are C ints, and so its staging buffer; a
// variable so that TestWorld can take many rounds.
var gatherRound = 1 << 28

// GatherBytes implements Comm: MPI_Allgather of the lengths, so that every
// rank knows how many rounds to take, then rounds of MPI_Gatherv, each of
// at most gatherRound/size bytes from every rank, staged in root and
// copied into its pieces.
func (w *world) GatherBytes(ctx context.Context, root int, b []byte) ([][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if root < 0 || root >= w.size {
		return nil, fmt.Errorf("%w: gather to rank %d of %d", errMPI, root, w.size)
	}
	lens := make([]C.longlong, w.size)
	if rc := C.scp_allgather_len(C.longlong(len(b)), &lens[0]); rc != C.MPI_SUCCESS {
		return nil, mpiError("MPI_Allgather", rc)
	}
	per := max(gatherRound/w.size, 1)
	longest := 0
	for _, n := range lens {
		longest = max(longest, int(n))
	}
	var out [][]byte
	if w.rank == root {
		out = make([][]byte, w.size)
		for r, n := range lens {
			out[r] = make([]byte, n)
		}
	}
	counts, displs := make([]C.int, w.size), make([]C.int, w.size)
	var stage []byte
	for at := 0; at < longest; at += per {
		total := 0
		for r, n := range lens {
			counts[r] = C.int(min(max(int(n)-at, 0), per))
			displs[r] = C.int(total)
			total += int(counts[r])
		}
		if w.rank == root && len(stage) < total {
			stage = make([]byte, total)
		}
		mine := b[min(at, len(b)):min(at+per, len(b))]
		rc := C.scp_gatherv(bytesPtr(mine), C.int(len(mine)), bytesPtr(stage), &counts[0], &displs[0], C.int(root))
		if rc != C.MPI_SUCCESS {
			return nil, mpiError("MPI_Gatherv", rc)
		}
		for r := range out {
			if counts[r] > 0 { // out[r] may be shorter than at
				copy(out[r][at:], stage[displs[r]:int(displs[r])+int(counts[r])])
			}
		}
	}
	return out, nil
}

// bytesPtr returns the address of b's first byte, nil when it is empty.
func bytesPtr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// Broadcast implements Comm with MPI_Bcast.
func (w *world) Broadcast(ctx context.Context, root int, b []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if root < 0 || root >= w.size {
		return fmt.Errorf("%w: broadcast from rank %d of %d", errMPI, root, w.size)
	}
	rc := chunks(len(b), func(lo, hi int) C.int {
		return C.scp_bcast(unsafe.Pointer(&b[lo]), C.int(hi-lo), C.int(root))
	})
	if rc != C.MPI_SUCCESS {
		return mpiError("MPI_Bcast", rc)
	}
	return nil
}

// Barrier implements Comm with MPI_Barrier.
func (w *world) Barrier(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if rc := C.scp_barrier(); rc != C.MPI_SUCCESS {
		return mpiError("MPI_Barrier", rc)
	}
	return nil
}

// Close implements Comm with MPI_Finalize.
func (w *world) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if rc := C.scp_finalize(); rc != C.MPI_SUCCESS {
		return mpiError("MPI_Finalize", rc)
	}
	return nil
}
