package outlock

import (
	"path/filepath"
	"runtime"
	"testing"
)

// TestFreeBytes: a folder not yet made has the free space of the file
// system it will be made on, which is its nearest existing parent's.
func TestFreeBytes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	have, ok := FreeBytes(dir)
	if !ok {
		if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
			t.Skip("free space is not told here")
		}
		t.Fatalf("FreeBytes(%s): not told", dir)
	}
	if have <= 0 {
		t.Errorf("FreeBytes(%s) = %d", dir, have)
	}
	deep, ok := FreeBytes(filepath.Join(dir, "not", "yet", "made"))
	// Other tests write beside it; the two looks agree within 1 GiB.
	if !ok || deep < have-1<<30 || deep > have+1<<30 {
		t.Errorf("FreeBytes of a path under %s = %d, %v; want about %d", dir, deep, ok, have)
	}
}
