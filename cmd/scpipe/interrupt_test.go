package main

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"scpipe/internal/testkit"
)

// TestInterruptStops: scpipe export and fit, sent SIGINT at several
// points of their work, exit with status 130 and install nothing: no
// export output or temporary beside it, no fit's tables and no summary (a
// fit keeps what it can resume from, and says so). Export once ignored
// Ctrl-C: a SIGINT 0.4 s into exporting 400 000 cells gave exit status 0
// and installed the file. Each point is reached by stopping the process
// (SIGSTOP) when a file of that stage appears, whatever the machine's
// speed. The time from SIGCONT to the exit is logged, not judged (a quiet
// machine takes well under a second; a loaded one took 1.6 s): no verdict
// depends on the clock, and one that ignored the signal would finish and
// exit 0.
func TestInterruptStops(t *testing.T) {
	dir := t.TempDir()
	// Export's stages last as long as its cells are many; a fit stops
	// after the sweep it is in (the sampler does not look within one), so
	// its cells are fewer.
	shards, small, fitted := filepath.Join(dir, "sim", "shards"), filepath.Join(dir, "small", "shards"), filepath.Join(dir, "fitted")
	for _, s := range []struct{ dir, cells string }{{"sim", "200000"}, {"small", "20000"}} {
		if err := run(t, "simulate", "-o", filepath.Join(dir, s.dir), "--cells", s.cells, "--genes", "300", "--L", "3", "--shards", "-q"); err != nil {
			t.Fatal(err)
		}
	}
	if err := run(t, "fit", shards, "-o", fitted, "--L", "3", "--chains", "1", "--burn-in", "1", "--samples", "1", "--starts", "1", "--holdout", "0", "-q"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string // with -o OUT (or --cnmf OUT); OUT is PARENT/out
		at   string   // the stage: stop when this pattern, in PARENT, matches
	}{
		{"export, its output locked", []string{"export", fitted, "-o"}, ".out.lock"},
		{"export writing", []string{"export", fitted, "-o"}, ".out.tmp-*"},
		{"export writing cNMF's tables", []string{"export", fitted, "--cnmf"}, "out.tmp-*/scpipe/*usages*"},
		{"fit starting", []string{"fit", small, "--L", "3", "--chains", "1", "--burn-in", "50", "--starts", "1", "-o"}, "out"},
		{"fit sweeping", []string{"fit", small, "--L", "3", "--chains", "1", "--burn-in", "50", "--starts", "1", "-o"}, "out/L03"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, "out")
			c := startScpipe(t, append(slices.Clone(tc.args), out, "-q")...)
			if !c.stopAtGlob(t, filepath.Join(parent, tc.at)) {
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
			t.Logf("stopped %v after SIGCONT", took)
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 130 {
				t.Errorf("scpipe %s interrupted: %v, want exit status 130", tc.args[0], err)
			}
			if tc.args[0] == "export" {
				if left := testkit.Names(t, parent); len(left) > 0 {
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

// stopAtGlob polls until pattern matches a path, then stops the child with
// SIGSTOP and reports whether the path is still there once it is stopped;
// otherwise the child goes on. It reports false when the child exits
// first.
func (c *child) stopAtGlob(t *testing.T, pattern string) bool {
	t.Helper()
	found := func() bool { m, _ := filepath.Glob(pattern); return len(m) > 0 }
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		select {
		case err := <-c.done:
			c.done <- err
			return false
		default:
		}
		if !found() {
			continue
		}
		c.cmd.Process.Signal(syscall.SIGSTOP)
		testkit.WaitStopped(c.cmd.Process.Pid)
		if found() {
			return true
		}
		c.cmd.Process.Signal(syscall.SIGCONT)
	}
	t.Fatal("timed out")
	return false
}
