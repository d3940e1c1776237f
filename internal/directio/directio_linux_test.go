package directio

import (
	"bytes"
	"fmt"
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

// TestRefused: where the device refuses a direct transfer's alignment
// (EINVAL), possibly after part of a write went through, WriteNew, WriteAt
// and ReadAt make it again through the page cache and leave the
// descriptor without O_DIRECT.
func TestRefused(t *testing.T) {
	defer func(w, r func(*os.File, []byte, int64) (int, error)) { directWrite, directRead = w, r }(directWrite, directRead)
	data := Aligned(3*minDirect + 100)
	for i := range data {
		data[i] = byte(i * 7)
	}
	refuse := func(part int) {
		directWrite = func(f *os.File, b []byte, off int64) (int, error) {
			n, _ := f.WriteAt(b[:min(part, len(b))], off)
			return n, unix.EINVAL
		}
		directRead = func(*os.File, []byte, int64) (int, error) { return 0, unix.EINVAL }
	}
	direct := func(t *testing.T, f *os.File) {
		t.Helper()
		if !Set(f, true) {
			t.Skip("this file system refuses O_DIRECT")
		}
	}
	cleared := func(t *testing.T, f *os.File) {
		t.Helper()
		if flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0); err != nil || flags&unix.O_DIRECT != 0 {
			t.Errorf("O_DIRECT still set (%v)", err)
		}
	}
	for _, part := range []int{0, Align} {
		t.Run(fmt.Sprintf("WriteNew/part%d", part), func(t *testing.T) {
			refuse(part)
			p := filepath.Join(t.TempDir(), "f")
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			direct(t, f)
			Set(f, false)
			if err := WriteNew(f, data); err != nil {
				t.Fatal(err)
			}
			cleared(t, f)
			if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, data) {
				t.Errorf("file holds %d bytes (%v), not the %d written", len(got), err, len(data))
			}
		})
	}
	t.Run("WriteAt+ReadAt", func(t *testing.T) {
		refuse(0)
		f, err := os.Create(filepath.Join(t.TempDir(), "f"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		direct(t, f)
		page := data[:2*Align]
		if err := WriteAt(f, page, Align); err != nil {
			t.Fatal(err)
		}
		cleared(t, f)
		direct(t, f)
		got := Aligned(len(page))
		if err := ReadAt(f, got, Align); err != nil {
			t.Fatal(err)
		}
		cleared(t, f)
		if !bytes.Equal(got, page) {
			t.Error("ReadAt read other bytes than WriteAt wrote")
		}
	})
}
