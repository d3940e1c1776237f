package enrich

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// cancelWhen is a context whose Err reports cancellation once a file
// matching pattern exists: Ctrl-C while a temporary output is being
// written, whatever the machine's speed. Its Done is nil.
type cancelWhen struct {
	context.Context
	pattern string
}

func (c cancelWhen) Err() error {
	if m, _ := filepath.Glob(c.pattern); len(m) > 0 {
		return context.Canceled
	}
	return nil
}

// TestRunStopsWhileWriting: Ctrl-C while the output is written stops Run
// with an error wrapping context.Canceled and installs nothing (the
// writing ignored it, and scpipe enrich exited 0 with its output).
func TestRunStopsWhileWriting(t *testing.T) {
	run, lib, dir := fixture(t)
	o := DefaultOptions()
	o.Run, o.Out, o.Libraries = run, filepath.Join(dir, "out"), []string{lib}
	_, err := Run(cancelWhen{context.Background(), filepath.Join(dir, "out.tmp-*")}, o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*out*")); len(left) > 0 {
		t.Errorf("left %q", left)
	}
}
