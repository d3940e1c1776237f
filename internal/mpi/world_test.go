//go:build mpi

package mpi

import (
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
}
