package outlock

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckInputs: an output that is an input, lies inside one or holds
// one is refused, under any name (relative, through symbolic links of
// itself or of its folders, a hard link), whether it exists yet or not;
// siblings and names that merely share a prefix pass.
func TestCheckInputs(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	fit := filepath.Join(run, "L02", "chain1")
	if err := os.MkdirAll(fit, 0o777); err != nil {
		t.Fatal(err)
	}
	h5 := filepath.Join(dir, "raw.h5")
	if err := os.WriteFile(h5, []byte("x"), 0o666); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{run, "run-link"}, {h5, "raw-link.h5"}, {dir, "dir-link"}, {fit, "fit-link"}} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(h5, filepath.Join(dir, "hard.h5")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, tc := range []struct {
		output, input string
		how           string // "" when allowed
	}{
		{h5, h5, "is the input"},
		{"raw.h5", h5, "is the input"},
		{"raw-link.h5", h5, "is the input"},
		{"hard.h5", h5, "is the input"},
		{run, run, "is the input"},
		{"run-link", run, "is the input"},
		{filepath.Join(run, "L02"), run, "lies inside the input"},
		{filepath.Join("run-link", "L02"), run, "lies inside the input"},
		{filepath.Join("dir-link", "run", "L02", "chain1", "new"), run, "lies inside the input"},
		{filepath.Join(run, "new", "deeper"), "run-link", "lies inside the input"},
		// The system resolves fit-link before its "..": the output is
		// run/L02/new, not dir/new as the cleaned text reads.
		{"fit-link/../new", run, "lies inside the input"},
		{"fit-link/../../../new", run, ""},
		{"new-dir/", run, ""},
		{"run-link/", run, "is the input"},
		{"fit-link/../", run, "lies inside the input"},
		{dir, run, "holds the input"},
		{"dir-link", filepath.Join("run-link", "L02"), "holds the input"},
		{filepath.Join(dir, "run2"), run, ""},
		{filepath.Join(dir, "ru"), run, ""},
		{filepath.Join(dir, "out"), h5, ""},
		{filepath.Join(dir, "out"), "", ""},
	} {
		err := CheckInputs(tc.output, tc.input)
		if tc.how == "" {
			if err != nil {
				t.Errorf("output %s, input %s: %v", tc.output, tc.input, err)
			}
			continue
		}
		if !errors.Is(err, ErrOverlap) || !strings.Contains(err.Error(), tc.how) ||
			!strings.Contains(err.Error(), tc.output) || !strings.Contains(err.Error(), tc.input) {
			t.Errorf("output %s, input %s: %v (want ErrOverlap saying %q and naming both)", tc.output, tc.input, err, tc.how)
		}
	}
}

// TestLockThroughSymlink: the lock of an output taken under one name
// refuses every other name of it.
func TestLockThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "data", "run")
	if err := os.MkdirAll(run, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(run, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "data"), filepath.Join(dir, "data-link")); err != nil {
		t.Fatal(err)
	}
	lk, err := Acquire(filepath.Join(dir, "link"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release()
	for _, name := range []string{run, filepath.Join(dir, "data-link", "run"), filepath.Join(dir, "link")} {
		if _, err := Acquire(name, nil); !errors.Is(err, ErrLocked) {
			t.Errorf("Acquire(%s) while %s is held: %v, want ErrLocked", name, filepath.Join(dir, "link"), err)
		}
		if _, err := AcquireShared(name, nil); !errors.Is(err, ErrLocked) {
			t.Errorf("AcquireShared(%s) while %s is held: %v, want ErrLocked", name, filepath.Join(dir, "link"), err)
		}
	}
}
