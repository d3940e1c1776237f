//go:build !mpi

package mpi

import "fmt"

// World returns an error: this build has no MPI binding. Build with
// -tags mpi (and the system's MPI development files, libopenmpi-dev).
func World() (Comm, error) {
	return nil, fmt.Errorf("%w: this scpipe is built without MPI: build it with -tags mpi (needs libopenmpi-dev)", errMPI)
}
