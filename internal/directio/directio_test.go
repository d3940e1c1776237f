package directio

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

func TestAligned(t *testing.T) {
	for _, n := range []int{0, 1, 4095, 4096, 4097, 1 << 20} {
		b := Aligned(n)
		if len(b) != n || cap(b) != RoundUp(n) || cap(b)%Align != 0 || !IsAligned(b) {
			t.Errorf("Aligned(%d): len %d cap %d aligned %v", n, len(b), cap(b), IsAligned(b))
		}
	}
}

// TestWriteNew checks that a file is written whole whatever its length and
// its buffer's alignment: O_DIRECT takes the aligned pages and the page
// cache the tail, or everything where the buffer or file system does not
// allow direct writes.
func TestWriteNew(t *testing.T) {
	dir := t.TempDir()
	backing := Aligned(2<<20 + 8192)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range backing {
		backing[i] = byte(rng.Uint32())
	}
	for _, tc := range []struct {
		off, n int
	}{
		{0, 0}, {0, 100}, {0, minDirect - 1}, {0, minDirect}, {0, minDirect + 123},
		{0, 1 << 20}, {0, 2<<20 + 4095}, {1, 1 << 20}, {8, 300 << 10},
	} {
		data := backing[tc.off : tc.off+tc.n]
		path := filepath.Join(dir, fmt.Sprintf("f-%d-%d", tc.off, tc.n))
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		err = WriteNew(f, data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatalf("off %d, %d bytes: %v", tc.off, tc.n, err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("off %d, %d bytes: read back %d bytes that differ", tc.off, tc.n, len(got))
		}
	}
}
