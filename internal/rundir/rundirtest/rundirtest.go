// Package rundirtest reads a fit's tables back for the tests of several
// packages. It is imported by tests only.
package rundirtest

import (
	"path/filepath"
	"testing"

	"scpipe/internal/rundir"
)

// Tables reads the codes and cells tables of the fit folder dir
// (RUN/Lnn/chainK), failing t when either cannot be read.
func Tables(t testing.TB, dir string) (rundir.Codes, rundir.Cells) {
	t.Helper()
	codes, err := rundir.ReadCodes(filepath.Join(dir, rundir.CodesFile))
	if err != nil {
		t.Fatal(err)
	}
	cells, err := rundir.ReadCells(filepath.Join(dir, rundir.CellsFile))
	if err != nil {
		t.Fatal(err)
	}
	return codes, cells
}
