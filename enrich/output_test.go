package enrich

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"scpipe/internal/outlock"

	"scpipe/internal/testkit"
)

// TestOutputCommit checks that enrich writes its output as every command
// does (outlock.CommitDir): refused while another writer holds its lock,
// and the temporary folder a killed writer left removed by the next run.
func TestOutputCommit(t *testing.T) {
	t.Parallel()
	run, lib, dir := fixture(t)
	out := filepath.Join(dir, "out")
	o := DefaultOptions()
	o.Run, o.Out, o.Libraries, o.Ls = run, out, []string{lib}, []int{3}

	lk, err := outlock.Acquire(out, nil)
	must(t, err)
	if _, err := Run(context.Background(), o); !errors.Is(err, outlock.ErrLocked) {
		t.Errorf("enrich into a locked output: %v, want the lock's error", err)
	}
	lk.Release()

	killed, err := outlock.TempDir(out) // what a writer killed mid-write leaves
	must(t, err)
	must(t, os.WriteFile(filepath.Join(killed, IndexFile), []byte("part"), 0o666))
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(killed); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed writer's %s is still there (%v)", killed, err)
	}
	if got := testkit.Names(t, dir); len(got) != 3 { // run, markers.gmt, out
		t.Errorf("beside the output: %v, want run, markers.gmt and out", got)
	}
}
