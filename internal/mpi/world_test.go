//go:build mpi

package mpi

import (
	"context"
	"os"
	"strconv"
	"testing"
)

// TestWorld runs the collectives over MPI_COMM_WORLD: under mpirun
// (scripts/test-mpi.sh runs this test with -np 1, 2 and 3) on every rank,
// else as a singleton MPI process of one rank.
func TestWorld(t *testing.T) {
	c, err := World()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if s := os.Getenv("OMPI_COMM_WORLD_SIZE"); s != "" && s != strconv.Itoa(c.Size()) {
		t.Fatalf("Size %d, but mpirun started %s ranks", c.Size(), s)
	}
	if err := checkMember(t, c); err != nil {
		t.Fatal(err)
	}
	// GatherBytes again, a byte of every rank a round.
	defer func(r int) { gatherRound = r }(gatherRound)
	gatherRound = 1
	if err := checkMember(t, c); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkWorldSumInt64 times one MPI_Allreduce of n int64 sums. Every
// rank must run the same number of iterations: run it under mpirun with a
// fixed -test.benchtime such as 200x.
func BenchmarkWorldSumInt64(b *testing.B) {
	c, err := World()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{4, 1 << 10, 20000, 1 << 17} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			v := make([]int64, n)
			b.SetBytes(int64(8 * n))
			for b.Loop() {
				if err := c.SumInt64(context.Background(), v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
