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
		if !errors.Is(err, errOverlap) || !strings.Contains(err.Error(), tc.how) ||
			!strings.Contains(err.Error(), tc.output) || !strings.Contains(err.Error(), tc.input) {
			t.Errorf("output %s, input %s: %v (want errOverlap saying %q and naming both)", tc.output, tc.input, err, tc.how)
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

// TestInstallAfterPathSwap: a folder on the output's path swapped for a
// link to the input's folder between CheckInputs and Install (mv d d.old;
// ln -s X d, issue 44) once made --force replace the input. Install checks
// the inputs again where the output now leads and replaces nothing,
// whether the new output was begun before the swap or after it.
func TestInstallAfterPathSwap(t *testing.T) {
	for _, tc := range []struct {
		name          string
		folder        bool // a folder output (enrich, fit), else a file (export)
		tmpBeforeSwap bool
	}{{"folder", true, false}, {"file", false, false}, {"folder begun before", true, true}, {"file begun before", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			for _, d := range []string{"X", "d"} {
				if err := os.Mkdir(d, 0o777); err != nil {
					t.Fatal(err)
				}
			}
			input, output := filepath.Join("X", "out"), filepath.Join("d", "out")
			if tc.folder {
				if err := os.MkdirAll(filepath.Join(input, "L02"), 0o777); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(output, 0o777); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(input, []byte("precious"), 0o666); err != nil {
				t.Fatal(err)
			}
			begin := func() string {
				if tc.folder {
					tmp, err := TempDir(output)
					if err != nil {
						t.Fatal(err)
					}
					return tmp
				}
				f, err := TempFile(output, "tmp")
				if err != nil {
					t.Fatal(err)
				}
				f.Close()
				return f.Name()
			}
			var tmp string
			AfterCheck = func(string) {
				if tc.tmpBeforeSwap {
					tmp = begin()
				}
				if err := os.Rename("d", "d.old"); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("X", "d"); err != nil {
					t.Fatal(err)
				}
			}
			defer func() { AfterCheck = nil }()
			if err := CheckInputs(output, input); err != nil {
				t.Fatal(err)
			}
			if !tc.tmpBeforeSwap {
				tmp = begin()
			}
			err := Install(tmp, output, true)
			switch {
			case tc.tmpBeforeSwap && (err == nil || !strings.Contains(err.Error(), "nothing replaced")):
				t.Errorf("Install after the swap: %v, want an error saying nothing was replaced", err)
			case !tc.tmpBeforeSwap && (!errors.Is(err, errOverlap) || !strings.Contains(err.Error(), "changed since the command checked it")):
				t.Errorf("Install after the swap: %v, want the overlap named", err)
			}
			if tc.folder {
				if _, err := os.Stat(filepath.Join(input, "L02")); err != nil {
					t.Errorf("the input folder was replaced: %v", err)
				}
			} else if b, err := os.ReadFile(input); string(b) != "precious" {
				t.Errorf("the input file holds %q, %v", b, err)
			}
		})
	}
}

// TestResolveDanglingLink: an output under a symbolic link whose target
// does not exist is refused naming the link and its target (issue 44
// item 11: "mkdir …/lnk2/: file exists").
func TestResolveDanglingLink(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "lnk2")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), link); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{link, filepath.Join(link, "out")} {
		if _, err := Resolve(out); err == nil || !strings.Contains(err.Error(), link+" is a symbolic link to "+filepath.Join(dir, "nowhere")+", which does not exist") {
			t.Errorf("Resolve(%s): %v, want the dangling link named", out, err)
		}
		if _, err := Acquire(out, nil); err == nil || !strings.Contains(err.Error(), "which does not exist") {
			t.Errorf("Acquire(%s): %v, want the dangling link named", out, err)
		}
	}
}
