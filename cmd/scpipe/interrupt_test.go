package main

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterruptStops: scpipe export and fit, sent SIGINT at several
// points of their work, exit with status 130 within a second and install
// nothing: no export output or temporary beside it, no fit's tables and
// no summary (a fit keeps what it can resume from, and says so). Export
// once ignored Ctrl-C: a SIGINT 0.4 s into exporting 400 000 cells gave
// exit status 0 and installed the file. Each point is reached by stopping
// the process (SIGSTOP) when a file of that stage appears, whatever the
// machine's speed; the second is timed from SIGCONT.
func TestInterruptStops(t *testing.T) {
	dir := t.TempDir()
	shards, fitted := filepath.Join(dir, "sim", "shards"), filepath.Join(dir, "fitted")
	if err := run(t, "simulate", "-o", filepath.Join(dir, "sim"), "--cells", "200000", "--genes", "300", "--L", "3", "--shards", "-q"); err != nil {
		t.Fatal(err)
	}
	if err := run(t, "fit", shards, "-o", fitted, "--L", "3", "--chains", "1", "--burn-in", "1", "--samples", "1", "--starts", "1", "--holdout", "0", "-q"); err != nil {
		t.Fatal(err)
	}
	prefix := func(p string) func(string) bool { return func(n string) bool { return strings.HasPrefix(n, p) } }
	for _, tc := range []struct {
		name string
		args []string          // with -o OUT; OUT is PARENT/out
		at   string            // "out": stop when match sees an entry of OUT, else of PARENT
		when func(string) bool // the entry to stop at
	}{
		{"export, its output locked", []string{"export", fitted}, "", prefix(".out.lock")},
		{"export writing", []string{"export", fitted}, "", prefix(".out.tmp-")},
		{"export's cNMF tables writing", []string{"export", fitted, "--cnmf"}, "", prefix("out.tmp-")},
		{"fit starting", []string{"fit", shards, "--L", "3", "--chains", "1", "--burn-in", "50", "--starts", "1"}, "", prefix("out")},
		{"fit sweeping", []string{"fit", shards, "--L", "3", "--chains", "1", "--burn-in", "50", "--starts", "1"}, "out", prefix("L03")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, "out")
			args := append(slices.Clone(tc.args), "-q")
			if args[len(args)-2] == "--cnmf" {
				args = append(args[:len(args)-1], out, "-q")
			} else {
				args = append(args, "-o", out)
			}
			c := startScpipe(t, args...)
			watch := parent
			if tc.at == "out" {
				watch = out
			}
			if c.stopAt(t, watch, tc.when) == "" {
				t.Fatalf("scpipe %s finished before it could be stopped", tc.args[0])
			}
			c.cmd.Process.Signal(syscall.SIGINT)
			start := time.Now()
			c.cmd.Process.Signal(syscall.SIGCONT)
			var err error
			select {
			case err = <-c.done:
			case <-time.After(time.Minute):
				c.kill()
				t.Fatalf("scpipe %s: still running a minute after SIGINT", tc.args[0])
			}
			took := time.Since(start)
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 130 {
				t.Errorf("scpipe %s interrupted: %v, want exit status 130", tc.args[0], err)
			}
			if took > time.Second {
				t.Errorf("scpipe %s took %v to stop after SIGINT", tc.args[0], took)
			}
			if tc.args[0] == "export" {
				if left := names(t, parent); len(left) > 0 {
					t.Errorf("export interrupted left %q", left)
				}
				return
			}
			for _, p := range []string{filepath.Join(out, "summary.tsv"), filepath.Join(out, "L03", "chain1", "trace.parquet")} {
				if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("fit interrupted: %s (%v)", p, err)
				}
			}
		})
	}
}
