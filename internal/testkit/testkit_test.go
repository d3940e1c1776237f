package testkit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestHelpers: Names lists a folder's names in order, and CancelWhen's
// context is cancelled exactly once a matching file exists.
func TestHelpers(t *testing.T) {
	dir := t.TempDir()
	ctx := CancelWhen(filepath.Join(dir, "*.tmp"))
	if got := Names(t, dir); len(got) != 0 || ctx.Err() != nil {
		t.Fatalf("empty folder: names %q, Err %v", got, ctx.Err())
	}
	for _, n := range []string{"b", "a.tmp"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	if got := Names(t, dir); !slices.Equal(got, []string{"a.tmp", "b"}) {
		t.Errorf("names %q, want [a.tmp b]", got)
	}
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Errorf("Err %v once a.tmp exists, want context.Canceled", ctx.Err())
	}
}
