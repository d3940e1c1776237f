package fiteval

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"scpipe/internal/testkit"

	"scpipe/gibbs"
)

// TestEvaluateStopsWhileWriting: Ctrl-C while the output is written stops
// Evaluate with an error wrapping context.Canceled and installs nothing
// (scpipe evaluate exited 0 with its output).
func TestEvaluateStopsWhileWriting(t *testing.T) {
	t.Parallel()
	cfg, _, truth := evalPlanted(t, gibbs.Symmetric, false)
	dir := t.TempDir()
	o := DefaultOptions()
	o.Run, o.Out, o.Truth, o.Workers = cfg.Output, filepath.Join(dir, "eval"), truth, 1
	_, err := Evaluate(testkit.CancelWhen(filepath.Join(dir, "eval.tmp-*")), o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Evaluate: %v, want context.Canceled", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*eval*")); len(left) > 0 {
		t.Errorf("left %q", left)
	}
}
