package report

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"scpipe/internal/testkit"
)

// TestWriteStopsWhileWriting: Ctrl-C while the figures are written stops
// Write with an error wrapping context.Canceled and installs nothing, page
// or figures (scpipe report exited 0 with them).
func TestWriteStopsWhileWriting(t *testing.T) {
	t.Parallel()
	dir, run, _ := runWithEnrich(t)
	out := filepath.Join(dir, "page.html")
	_, err := Write(testkit.CancelWhen(filepath.Join(dir, "page.html.tmp-*")), Options{Run: run, Threshold: 0.5, Out: out})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Write: %v, want context.Canceled", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*page*")); len(left) > 0 {
		t.Errorf("left %q", left)
	}
}
