package enrich

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"scpipe/internal/testkit"
)

// TestRunStopsWhileWriting: Ctrl-C while the output is written stops Run
// with an error wrapping context.Canceled and installs nothing (the
// writing ignored it, and scpipe enrich exited 0 with its output).
func TestRunStopsWhileWriting(t *testing.T) {
	run, lib, dir := fixture(t)
	o := DefaultOptions()
	o.Run, o.Out, o.Libraries = run, filepath.Join(dir, "out"), []string{lib}
	_, err := Run(testkit.CancelWhen(filepath.Join(dir, "out.tmp-*")), o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*out*")); len(left) > 0 {
		t.Errorf("left %q", left)
	}
}
