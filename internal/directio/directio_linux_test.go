package directio

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSetFlag checks that Set really turns the descriptor's O_DIRECT flag
// on and off, where the file system takes it.
func TestSetFlag(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !Set(f, true) {
		t.Skip("this file system refuses O_DIRECT")
	}
	for _, on := range []bool{true, false, true} {
		if !Set(f, on) {
			t.Fatalf("Set(%v) failed", on)
		}
		flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := flags&unix.O_DIRECT != 0; got != on {
			t.Fatalf("after Set(%v), O_DIRECT is %v", on, got)
		}
	}
}
