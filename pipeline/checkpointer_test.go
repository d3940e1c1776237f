package pipeline

import (
	"bytes"
	"path/filepath"
	"testing"

	"scpipe/internal/rundir"
)

// TestCheckpointerOrderAndErrors checks that background checkpoint writes
// leave the last one on disk, in order, and that a failed write is reported
// by the next write (which then writes nothing) or by wait, once.
func TestCheckpointerOrderAndErrors(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), rundir.CheckpointFile)
	c := &checkpointer{path: path}
	for sweep := range int64(6) {
		payload := bytes.Repeat([]byte{byte(sweep)}, 1<<20)
		if err := c.write(rundir.CheckpointMeta{L: 3, Chain: 1, Sweep: sweep}, payload); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.wait(); err != nil {
		t.Fatal(err)
	}
	meta, payload, err := rundir.ReadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Sweep != 5 || len(payload) != 1<<20 || payload[0] != 5 || payload[len(payload)-1] != 5 {
		t.Errorf("on disk: sweep %d, %d bytes of %d, want the last write (sweep 5)", meta.Sweep, len(payload), payload[0])
	}
	if err := c.wait(); err != nil {
		t.Errorf("wait with nothing in flight: %v", err)
	}

	bad := &checkpointer{path: filepath.Join(t.TempDir(), "missing", rundir.CheckpointFile)}
	if err := bad.write(rundir.CheckpointMeta{}, []byte{1}); err != nil {
		t.Fatalf("the write starts in the background, yet failed at once: %v", err)
	}
	if err := bad.write(rundir.CheckpointMeta{}, []byte{2}); err == nil {
		t.Error("the next write does not report the failed one")
	}
	if err := bad.wait(); err != nil {
		t.Errorf("a failure is reported twice: %v", err)
	}
	if err := bad.write(rundir.CheckpointMeta{}, []byte{3}); err != nil {
		t.Fatalf("a write after the reported failure: %v", err)
	}
	if err := bad.wait(); err == nil {
		t.Error("wait does not report the failed write in flight")
	}
}
