package testkit

import (
	"bytes"
	"compress/gzip"
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

// TestFiles: CopyDir copies a tree, Damaged changes one bit of one file
// of a copy and nothing else, ReadGzip reads back what gzip wrote, and
// Refused passes a refusal that leaves the folder as it was.
func TestFiles(t *testing.T) {
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "d"), 0o777); err != nil {
		t.Fatal(err)
	}
	want := []byte("0123456789")
	if err := os.WriteFile(filepath.Join(src, "d", "f"), want, 0o644); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "copy")
	CopyDir(t, src, dst)
	if b, err := os.ReadFile(filepath.Join(dst, "d", "f")); err != nil || !bytes.Equal(b, want) {
		t.Errorf("copy: %q (%v), want %q", b, err, want)
	}
	d := Damaged(t, src, filepath.Join("d", "f"))
	if b, _ := os.ReadFile(filepath.Join(d, "d", "f")); len(b) != len(want) || b[5] != want[5]^0x10 || !bytes.Equal(b[:5], want[:5]) {
		t.Errorf("damaged: %q, want one bit of byte 5 of %q flipped", b, want)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(want)
	zw.Close()
	p := filepath.Join(t.TempDir(), "f.gz")
	if err := os.WriteFile(p, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ReadGzip(t, p); !bytes.Equal(got, want) {
		t.Errorf("ReadGzip: %q, want %q", got, want)
	}
	Refused(t, "refusal", src, []string{"no"}, func() error { return errors.New("no way") })
}
