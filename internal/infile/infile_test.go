package infile

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOpen: a regular file (or a link to one) opens; a named pipe without
// a writer, a device, a link to a device and a folder are refused at once,
// naming the path and what it is, where opening the pipe blocked for ever.
func TestOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "lib.gmt")
	if err := os.WriteFile(file, []byte("set\tdesc\tA\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipe here: %v", err)
	}
	fileLink, devLink := filepath.Join(dir, "file-link"), filepath.Join(dir, "zero-link")
	if err := os.Symlink(file, fileLink); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(os.DevNull, devLink); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, want string // want: "" opens
	}{
		{file, ""},
		{fileLink, ""},
		{fifo, fifo + " is a named pipe, not a regular file"},
		{os.DevNull, os.DevNull + " is a character device, not a regular file"},
		{devLink, devLink + " is a character device, not a regular file"},
		{dir, dir + " is a folder, not a regular file"},
		{filepath.Join(dir, "absent"), "no such file"},
	} {
		for name, read := range map[string]func(string) error{
			"Open":     func(p string) error { f, err := Open(p); f.Close(); return err },
			"ReadFile": func(p string) error { _, err := ReadFile(p); return err },
		} {
			done := make(chan error, 1)
			go func() { done <- read(tc.path) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s(%s) blocks", name, tc.path)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%s(%s): %v", name, tc.path, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("%s(%s): %v, want %q", name, tc.path, err, tc.want)
			case strings.Contains(tc.want, "regular") && !errors.Is(err, errNotRegular):
				t.Errorf("%s(%s): %v does not wrap errNotRegular", name, tc.path, err)
			}
		}
	}
}

// TestDir: a folder (or a link to one) passes; a pipe or a file is
// refused, naming the path and what it is.
func TestDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "truth")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipe here: %v", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{dir, ""},
		{link, ""},
		{fifo, fifo + " is a named pipe, not a folder"},
		{os.DevNull, os.DevNull + " is a character device, not a folder"},
	} {
		err := Dir(tc.path)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Dir(%s): %v, want %q", tc.path, err, tc.want)
		}
	}
}

// TestSkipBOM: a byte-order mark at the head is dropped, and nothing
// else: not one later in the text, nor the head of a text without one.
func TestSkipBOM(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"\ufeffBC0-1\n":  "BC0-1\n",
		"BC0-1\n":        "BC0-1\n",
		"\ufeff":         "",
		"ab":             "ab",
		"":               "",
		"\ufeff\ufeffx":  "\ufeffx",
		"x\ufeff":        "x\ufeff",
		"\xef\xbb\xbe\n": "\xef\xbb\xbe\n",
	} {
		br := bufio.NewReader(strings.NewReader(in))
		SkipBOM(br)
		got, err := io.ReadAll(br)
		if err != nil || string(got) != want {
			t.Errorf("SkipBOM(%q): %q, %v; want %q", in, got, err, want)
		}
	}
}
