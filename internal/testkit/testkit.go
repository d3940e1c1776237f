// Package testkit holds the helpers that the tests of several packages
// share, so that each is written once. It is imported by tests only, and
// imports the standard library only, so that any package's tests may use
// it (a helper that needs scpipe's own packages lives beside them, such as
// simulate/simtest).
package testkit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Names lists the names in the folder dir, sorted (os.ReadDir's order),
// failing t when it cannot be read.
func Names(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// CancelWhen returns a context whose Err reports cancellation once a file
// matching pattern (filepath.Glob's) exists: Ctrl-C while a temporary
// output is being written, whatever the machine's speed. Its Done is nil,
// so only code that asks Err sees it.
func CancelWhen(pattern string) context.Context {
	return cancelWhen{context.Background(), pattern}
}

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

// CopyDir copies the folders and files under src to dst, failing t on
// any error.
func CopyDir(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o777)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o666)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// ReadGzip returns the decompressed contents of the gzipped file path,
// failing t on any error.
func ReadGzip(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(zr); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return buf.Bytes()
}

// ReadGzipLines returns the lines of the gzip file at path.
func ReadGzipLines(t testing.TB, path string) []string {
	t.Helper()
	return lines(t, path, bytes.NewReader(ReadGzip(t, path)))
}

// ReadTSV returns the header and the rows of the tab-separated file at
// path, each row as many fields as the header.
func ReadTSV(t testing.TB, path string) (header []string, rows [][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for k, line := range lines(t, path, f) {
		fields := strings.Split(line, "\t")
		if k == 0 {
			header = fields
			continue
		}
		if len(fields) != len(header) {
			t.Fatalf("%s line %d: %d fields, the header has %d: %q", path, k+1, len(fields), len(header), line)
		}
		rows = append(rows, fields)
	}
	if header == nil {
		t.Fatalf("%s is empty", path)
	}
	return header, rows
}

// lines returns the lines of r, read from path.
func lines(t testing.TB, path string, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

// WaitStopped waits (up to a second) until process pid is stopped (state
// T in /proc/PID/stat, where /proc exists): SIGSTOP takes effect only when
// the process next enters the kernel, and one running on another core may
// still rename its temporary meanwhile.
func WaitStopped(pid int) {
	stat := fmt.Sprintf("/proc/%d/stat", pid)
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
		b, err := os.ReadFile(stat)
		if err != nil {
			return
		}
		// The state follows the command name in parentheses.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && (b[i+2] == 'T' || b[i+2] == 't') {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// Damaged copies the folder dir to a folder of t's own, flips a bit in
// the middle of its file name, and returns the copy.
func Damaged(t testing.TB, dir, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "damaged")
	if err := os.CopyFS(dst, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dst, name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x10
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// Mode returns the permission bits of the file p.
func Mode(t testing.TB, p string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// Refused runs a command that must be refused (the case name) and checks
// that its error says each of want and that the folder dir, where it
// would write, is as it was.
func Refused(t testing.TB, name, dir string, want []string, run func() error) {
	t.Helper()
	before := Names(t, dir)
	ErrorSays(t, name, run(), want)
	if after := Names(t, dir); !slices.Equal(before, after) {
		t.Errorf("%s: the folder changed: %v, then %v", name, before, after)
	}
}

// ErrorSays checks that err, the error of the case name, is not nil and
// says each of want.
func ErrorSays(t testing.TB, name string, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", name)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not say %q", name, err, w)
		}
	}
}

// ModesFollowUmask checks that every folder and file under dir (dir
// aside) has the mode its creator gets under umask mask, 0777 or 0666
// less the mask, and returns how many there are.
func ModesFollowUmask(t testing.TB, dir string, mask os.FileMode) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := 0o666 &^ mask
		if d.IsDir() {
			want = 0o777 &^ mask
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %03o, want %03o", p, fi.Mode().Perm(), want)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
