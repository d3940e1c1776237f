package ingest

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"scpipe/internal/directio"
)

// TestSpillCached: a spill created cached never has O_DIRECT set on its
// file, and one created otherwise has it wherever the file system takes it.
func TestSpillCached(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	probe, err := os.Create(filepath.Join(dir, "probe"))
	if err != nil {
		t.Fatal(err)
	}
	canDirect := directio.Set(probe, true)
	probe.Close()
	for _, cached := range []bool{false, true} {
		s, err := createSpill(filepath.Join(dir, "out"), 0, cached)
		if err != nil {
			t.Fatal(err)
		}
		flags, err := unix.FcntlInt(s.f.Fd(), unix.F_GETFL, 0)
		s.remove()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := flags&unix.O_DIRECT != 0, canDirect && !cached; got != want {
			t.Errorf("cached %v: O_DIRECT set %v, want %v (the file system takes it: %v)", cached, got, want, canDirect)
		}
	}
}
