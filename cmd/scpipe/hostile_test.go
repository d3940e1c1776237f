package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"scpipe/internal/outlock"
	"scpipe/internal/rundir"
)

// hostileRun simulates a small MTX folder, ingests it and fits L = 2 with
// entries held out: the inputs of every command a careless user might
// turn against itself.
func hostileRun(t *testing.T) (dir, sim, shards, runDir string) {
	t.Helper()
	dir = t.TempDir()
	sim, shards, runDir = filepath.Join(dir, "sim"), filepath.Join(dir, "shards"), filepath.Join(dir, "run")
	for _, args := range [][]string{
		{"simulate", "-o", sim, "--kind", "singlecell", "--cells", "120", "--genes", "80", "--L", "3", "--seed", "5", "-j", "2", "--quiet"},
		{"ingest", sim, "-o", shards, "--min-cell-frac", "0", "-j", "2", "--quiet"},
		{"fit", shards, "-o", runDir, "--L", "2", "--chains", "1", "--starts", "1", "--burn-in", "4", "--samples", "4",
			"--holdout", "0.2", "-j", "2", "--quiet"},
	} {
		if err := run(t, args...); err != nil {
			t.Fatalf("scpipe %s: %v", strings.Join(args, " "), err)
		}
	}
	return dir, sim, shards, runDir
}

// snapshot maps every regular file under dir to its SHA-256.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s := sha256.Sum256(b)
		m[p] = hex.EncodeToString(s[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestHostileCommands: each careless command of the hostile test run is
// refused with an error naming the problem, and every input is left byte
// for byte as it was.
func TestHostileCommands(t *testing.T) {
	dir, sim, shards, rd := hostileRun(t)
	for _, l := range [][2]string{{rd, "run-link"}, {shards, "shards-link"}} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	runLink, shardsLink := filepath.Join(dir, "run-link"), filepath.Join(dir, "shards-link")
	fit := rundir.FitDir(rd, 2, 1)
	before := snapshot(t, dir)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		// --force against the command's own input (defect 3).
		{[]string{"ingest", sim, "-o", sim, "--force"}, []string{"is the input", sim}},
		{[]string{"ingest", sim, "-o", filepath.Join(sim, "shards"), "--force"}, []string{"lies inside the input", sim}},
		{[]string{"ingest", filepath.Join(sim, "matrix.mtx.gz"), "-o", sim, "--force"}, []string{"holds the input"}},
		{[]string{"fit", shards, "-o", shards, "--force", "--L", "2"}, []string{"is the input", shards}},
		{[]string{"fit", shards, "-o", shardsLink, "--force", "--L", "2"}, []string{"is the input", shards}},
		{[]string{"fit", shards, "-o", dir, "--force", "--L", "2"}, []string{"holds the input", shards}},
		{[]string{"fit", shards, "-o", filepath.Join(shards, "rd"), "--force", "--L", "2"}, []string{"lies inside the input", shards}},
		{[]string{"enrich", rd, "-o", filepath.Join(rd, "L02"), "--force"}, []string{"lies inside the input", rd}},
		{[]string{"enrich", rd, "-o", filepath.Join(runLink, "L02"), "--force"}, []string{"lies inside the input", rd}},
		{[]string{"evaluate", rd, "-o", filepath.Join(rd, "L02"), "--force"}, []string{"lies inside the input", rd}},
		{[]string{"evaluate", rd, "-o", runLink, "--force"}, []string{"is the input", rd}},
		{[]string{"evaluate", rd, "-o", shards, "--force"}, []string{"is the input", shards}},
		{[]string{"report", rd, "-o", filepath.Join(fit, "page.html"), "--force"}, []string{"lies inside the input", filepath.Join(rd, "L02")}},
		// Threads beyond any use (defect 6).
		{[]string{"fit", shards, "-o", filepath.Join(dir, "run2"), "--L", "2", "-j", "100000"}, []string{"--threads: invalid configuration: threads = 100000 outside 1.."}},
		{[]string{"ingest", sim, "-o", filepath.Join(dir, "shards2"), "-j", "100000"}, []string{"--threads: invalid configuration: threads = 100000 outside 1.."}},
	} {
		err := run(t, tc.args...)
		if err == nil {
			t.Errorf("scpipe %s: no error", strings.Join(tc.args, " "))
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("scpipe %s: %v (want it to say %q)", strings.Join(tc.args, " "), err, w)
			}
		}
	}
	if after := snapshot(t, dir); !maps.Equal(before, after) {
		t.Errorf("the careless commands changed files:\n%v\n%v", slices.Sorted(maps.Keys(before)), slices.Sorted(maps.Keys(after)))
	}

	// The rd's lock through a symbolic link (defect 4).
	lk, err := outlock.Acquire(rd, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = run(t, "fit", shards, "-o", runLink, "--resume", "--L", "2", "--chains", "1", "--starts", "1", "--burn-in", "4", "--samples", "4", "--holdout", "0.2", "-q")
	lk.Release()
	if !errors.Is(err, outlock.ErrLocked) {
		t.Errorf("fit --resume through a link to a locked rd: %v, want it refused", err)
	}
}

// TestDamagedRunFiles: one changed byte in a rd's table or fit mask is an
// error naming the file from every command that reads it (defects 1 and
// 5), never a panic or a silently different result.
func TestDamagedRunFiles(t *testing.T) {
	dir, _, shards, rd := hostileRun(t)
	fit := rundir.FitDir(rd, 2, 1)
	masks, err := filepath.Glob(filepath.Join(rd, "fitmask", "x.*.bin"))
	if err != nil || len(masks) == 0 {
		t.Fatalf("no fit mask data file in %s: %v", rd, err)
	}
	readers := map[string][]string{
		"summarize": {"summarize", rd, "-q"},
		"enrich":    {"enrich", rd, "-o", filepath.Join(dir, "enrich"), "--force", "-q"},
		"evaluate":  {"evaluate", rd, "-o", filepath.Join(dir, "eval"), "--force", "-q"},
		"report":    {"report", rd, "-o", filepath.Join(dir, "report.html"), "--force", "-q"},
		"resume": {"fit", shards, "-o", rd, "--resume", "--L", "2", "--chains", "1", "--starts", "1", "--burn-in", "4", "--samples", "4",
			"--holdout", "0.2", "-q"},
	}
	// L = 2 is the run's recommended L, where the fit built a consensus of
	// chains: enrich and report read its fit, and not the chain's tables.
	cons := rundir.ConsensusDir(rd, 2)
	for _, tc := range []struct {
		file    string
		at      func(size int) int
		readers []string
	}{
		{filepath.Join(fit, rundir.CodesFile), func(n int) int { return n / 2 }, []string{"summarize", "evaluate", "resume"}},
		{filepath.Join(fit, rundir.CellsFile), func(n int) int { return 8 }, []string{"summarize", "evaluate", "resume"}},
		{filepath.Join(fit, rundir.TraceFile), func(n int) int { return n - 20 }, []string{"summarize", "evaluate", "report", "resume"}},
		{filepath.Join(cons, rundir.CodesFile), func(n int) int { return n / 2 }, []string{"enrich", "report"}},
		{filepath.Join(cons, rundir.CellsFile), func(n int) int { return 8 }, []string{"enrich", "report"}},
		{filepath.Join(cons, rundir.ConsensusFile), func(n int) int { return n - 3 }, []string{"summarize", "enrich", "report"}},
		{masks[0], func(n int) int { return n / 3 }, []string{"summarize", "evaluate"}},
	} {
		good, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		bad := slices.Clone(good)
		bad[tc.at(len(bad))] ^= 0x10
		if err := os.WriteFile(tc.file, bad, 0o666); err != nil {
			t.Fatal(err)
		}
		for _, r := range tc.readers {
			err := run(t, readers[r]...)
			if err == nil || !strings.Contains(err.Error(), tc.file) {
				t.Errorf("%s with %s damaged: %v (want an error naming it)", r, tc.file, err)
			}
		}
		if err := os.WriteFile(tc.file, good, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []string{"summarize", "enrich", "evaluate", "report", "resume"} {
		if err := run(t, readers[r]...); err != nil {
			t.Errorf("%s of the repaired rd: %v", r, err)
		}
	}
}

// TestNotRegularInputs: a named pipe or a device given where a command
// reads a file, or put in the place of one of its inputs' files, is
// refused at once with an error naming it and what it is; opening the
// pipe once blocked the command for ever, deaf to Ctrl-C (info, fit
// --config, enrich --gmt and --background, export --into, ingest of an
// MTX folder), and a run's table replaced by a pipe or a device made its
// fit count as unfinished, which a resume would have fitted again.
func TestNotRegularInputs(t *testing.T) {
	dir, sim, shards, rd := hostileRun(t)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipe here: %v", err)
	}
	mtx := filepath.Join(dir, "mtx")
	if err := os.Mkdir(mtx, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"features.tsv.gz", "barcodes.tsv.gz"} {
		if err := os.Symlink(filepath.Join(sim, name), filepath.Join(mtx, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(mtx, "matrix.mtx"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := func(name string) string { return filepath.Join(dir, name) }
	pipe, device := fifo+" is a named pipe, not a", os.DevNull+" is a character device, not a"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"info", fifo}, pipe + " folder"},
		{[]string{"info", os.DevNull}, device + " folder"},
		{[]string{"fit", shards, "-o", out("f1"), "--L", "2", "--config", fifo}, pipe + " regular file"},
		{[]string{"fit", shards, "-o", out("f2"), "--L", "2", "--fixed-codes", fifo}, pipe + " regular file"},
		{[]string{"enrich", rd, "-o", out("e1"), "--gmt", fifo}, pipe + " regular file"},
		{[]string{"enrich", rd, "-o", out("e2"), "--background", os.DevNull}, device + " regular file"},
		{[]string{"evaluate", rd, "-o", out("v1"), "--truth", fifo}, pipe + " folder"},
		{[]string{"export", rd, "-o", out("x1.h5ad"), "--enrich", fifo}, pipe + " folder"},
		{[]string{"export", rd, "-o", out("x2.h5ad"), "--into", fifo}, pipe + " regular file"},
		{[]string{"report", rd, "-o", out("r1.html"), "--enrich", os.DevNull}, device + " folder"},
		{[]string{"ingest", mtx, "-o", out("s1")}, filepath.Join(mtx, "matrix.mtx") + " is a named pipe, not a regular file"},
		// A pipe or a device as the output: --force replaced it (as root,
		// -o /dev/null --force replaced the system's /dev/null).
		{[]string{"enrich", rd, "-o", fifo, "--force"}, pipe + " file or a folder: --force does not replace it"},
		{[]string{"evaluate", rd, "-o", fifo, "--force"}, pipe + " file or a folder: --force does not replace it"},
		{[]string{"simulate", "-o", fifo, "--force"}, pipe + " file or a folder: --force does not replace it"},
		{[]string{"fit", shards, "-o", fifo, "--force", "--L", "2"}, "run directory " + pipe + " folder"},
	} {
		checkRefused(t, tc.args, tc.want)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("%s replaced: %v, %v", fifo, fi.Mode(), err)
	}

	// A run's files replaced by a pipe or a link to a device.
	readers := map[string][]string{
		"summarize": {"summarize", rd, "-q"},
		"enrich":    {"enrich", rd, "-o", out("e3"), "-q"},
		"report":    {"report", rd, "-o", out("r2.html"), "-q"},
		"export":    {"export", rd, "-o", out("x3.h5ad"), "-q"},
		"resume":    {"fit", shards, "-o", rd, "--resume", "--L", "2", "--chains", "1", "--starts", "1", "--burn-in", "4", "--samples", "4", "--holdout", "0.2", "-q"},
	}
	for _, tc := range []struct {
		file    string
		readers []string
	}{
		{filepath.Join(rundir.FitDir(rd, 2, 1), rundir.CodesFile), []string{"summarize", "enrich", "report", "export", "resume"}},
		{filepath.Join(rd, rundir.ConfigFile), []string{"summarize", "export", "resume"}},
	} {
		file := tc.file
		saved := file + ".saved"
		if err := os.Rename(file, saved); err != nil {
			t.Fatal(err)
		}
		for _, replace := range []func() error{
			func() error { return syscall.Mkfifo(file, 0o644) },
			func() error { return os.Symlink(os.DevNull, file) },
		} {
			if err := replace(); err != nil {
				t.Fatal(err)
			}
			for _, r := range tc.readers {
				checkRefused(t, readers[r], file+" is a ")
			}
			if err := os.Remove(file); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Rename(saved, file); err != nil {
			t.Fatal(err)
		}
	}
}

// checkRefused runs scpipe with args and fails unless it returns, within
// a minute, an error that says want.
func checkRefused(t *testing.T, args []string, want string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- run(t, args...) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("scpipe %s: %v (want it to say %q)", strings.Join(args, " "), err, want)
		}
	case <-time.After(time.Minute):
		t.Fatalf("scpipe %s: still running after a minute", strings.Join(args, " "))
	}
}

// TestFitSettingsOutOfRange: a setting out of its range is refused before
// the run is made, naming its flag, or its key and the --config file that
// gave it, and the range; --chains 1000000000 once listed its chains for
// minutes, deaf to Ctrl-C, --starts 100000 seeded its starts as long,
// sweeps summing past an int panicked, and threads = -3 in a --config file
// was blamed on --threads.
func TestFitSettingsOutOfRange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	shards := filepath.Join(dir, "shards")
	if err := run(t, "simulate", "-o", dir+"/sim", "--cells", "100", "--genes", "40", "--L", "2", "--shards", "-q"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "sim", "shards"), shards); err != nil {
		t.Fatal(err)
	}
	config := func(name, text string) string {
		p := filepath.Join(dir, name+".toml")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	samples0, threads, thin := config("samples", "samples = 0\n"), config("threads", "threads = -3\n"), config("thin", "thin = 5000\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--chains", "1000000000"}, "--chains: invalid configuration: chains = 1000000000 outside 1..1000"},
		{[]string{"--chains", "0"}, "--chains: invalid configuration: chains = 0 outside 1..1000"},
		{[]string{"--starts", "100000", "--burn-in", "1000000", "--start-sweeps", "1000000"}, "--starts: invalid configuration: starts = 100000 outside 1..64"},
		{[]string{"--samples", "0"}, "--samples: invalid configuration: samples = 0"},
		{[]string{"--holdout", "1.5"}, "--holdout: invalid configuration: holdout = 1.5 outside [0, 1)"},
		{[]string{"--burn-in", "-1"}, "--burn-in: invalid configuration: burn_in = -1"},
		// Sums of sweeps past an int panicked making the trace.
		{[]string{"--burn-in", "9223372036854775000", "--samples", "10000", "--starts", "1"}, "--burn-in: invalid configuration: burn_in = 9223372036854775000 outside 0..1099511627776"},
		{[]string{"--samples", "9223372036854775807", "--thin", "9223372036854775807"}, "--samples: invalid configuration: samples = 9223372036854775807 outside 1..1099511627776"},
		{[]string{"--burn-in", "1000000000000000"}, "outside 0..1099511627776"},
		{[]string{"--config", samples0}, "config " + samples0 + ": invalid configuration: samples = 0"},
		{[]string{"--config", threads}, "config " + threads + ": invalid configuration: threads = -3 outside 1.."},
		{[]string{"--config", thin}, "config " + thin + ": invalid configuration: thin = 5000 outside 1..100, the sample sweeps"},
		{[]string{"-j", "-3"}, "--threads: invalid configuration: threads = -3 outside 1.."},
	} {
		out := filepath.Join(dir, "run")
		checkRefused(t, append([]string{"fit", shards, "-o", out, "--L", "2", "-q"}, tc.args...), tc.want)
		if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("fit %v made %s (%v)", tc.args, out, err)
		}
	}
}
