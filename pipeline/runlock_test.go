package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"scpipe/internal/outlock"
	"scpipe/internal/rundir"
	"scpipe/simulate"

	"scpipe/simulate/simtest"

	"scpipe/internal/testkit"
)

// blockEnv makes the fit child (see TestMain) stop for good when it starts
// its first fit, holding the run's lock, after saying "fitting" on stdout.
const blockEnv = "SCPIPE_TEST_FIT_BLOCK"

// childLog is the fit child's logger: nil, or with blockEnv one that
// blocks at the first "fitting" line.
func childLog() *slog.Logger {
	if os.Getenv(blockEnv) == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(blockingWriter{}, nil))
}

type blockingWriter struct{}

func (blockingWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("msg=fitting")) {
		fmt.Println("fitting")
		select {}
	}
	return len(p), nil
}

// startFitChild starts the test binary as a process that runs Fit on cfg
// with Resume (see TestMain), with extra environment variables.
func startFitChild(t *testing.T, cfg FitConfig, env ...string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	js, _ := json.Marshal(cfg)
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(append(os.Environ(), childEnv+"="+string(js)), env...)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	return child, bufio.NewReader(out)
}

// tinyConfig is a run of one short fit of L codes (the only place these
// tests spell the L setting).
func tinyConfig(shards, out string, L int) FitConfig {
	c := smallConfig(shards, out)
	c.L, c.Chains, c.BurnIn, c.Samples, c.Starts = LSizes{L}, 1, 3, 3, 1
	return c
}

// temporaries lists the names in run (recursively) that look like
// temporary files or folders: name.tmp-…, .name.tmp-…, .name.spill-….
func temporaries(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && (strings.Contains(d.Name(), ".tmp-") || strings.Contains(d.Name(), ".spill-")) {
			found = append(found, p)
		}
		return nil
	})
	return found
}

// TestResumeOnOtherShards: a run resumed on shards other than those it was
// started on is refused with a message naming both, whether they have the
// same shape or not, and the run is left as it was.
func TestResumeOnOtherShards(t *testing.T) {
	a, _ := simtest.Shards(t, smallPlanted)
	sameShape := smallPlanted
	sameShape.Seed = 4
	b, _ := simtest.Shards(t, sameShape)
	otherShape := smallPlanted
	otherShape.Cells, otherShape.Genes = 640, 150
	c, _ := simtest.Shards(t, otherShape)
	ctx := context.Background()

	cfg := tinyConfig(a, filepath.Join(t.TempDir(), "run"), 2)
	if _, err := Fit(ctx, cfg, FitOptions{}); err != nil {
		t.Fatal(err)
	}
	config, _ := os.ReadFile(filepath.Join(cfg.Output, rundir.ConfigFile))
	before := digest(t, cfg.Output)
	for _, other := range []string{b, c} {
		o := cfg
		o.Shards = other
		_, err := Fit(ctx, o, FitOptions{Resume: true})
		if err == nil || !strings.Contains(err.Error(), "started on the shards "+a) || !strings.Contains(err.Error(), "not on "+other) || strings.Contains(err.Error(), "gibbs") {
			t.Errorf("resume on %s: %v (want a refusal naming %s and %s)", other, err, a, other)
		}
		if now, _ := os.ReadFile(filepath.Join(cfg.Output, rundir.ConfigFile)); !bytes.Equal(now, config) || digest(t, cfg.Output) != before {
			t.Errorf("resume on %s changed the run", other)
		}
	}
	// The same shards at another path are the same shards.
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.CopyFS(moved, os.DirFS(a)); err != nil {
		t.Fatal(err)
	}
	o := cfg
	o.Shards = moved
	if rep, err := Fit(ctx, o, FitOptions{Resume: true}); err != nil || rep.Skipped != 1 {
		t.Errorf("resume on a copy of the shards: %+v, %v", rep, err)
	}
	if id, err := rundir.ReadShardsIdentity(filepath.Join(cfg.Output, rundir.ShardsFile)); err != nil || id.Path != moved {
		t.Errorf("shards.json after resuming on the moved shards: %+v, %v", id, err)
	}
}

// TestResumeFromAnotherDirectory: a run fitted as "fit shards -o run" and
// resumed from a subfolder as "fit ../shards -o ../run --resume" names
// the same shards; shards.json keeps the path it was fitted with, which
// the other commands, run where the fit was, read. Rewriting it as
// "../shards" once left evaluate, summarize and export looking for the
// shards beside the run's parent. Shards that did move are recorded at
// their new path.
func TestResumeFromAnotherDirectory(t *testing.T) {
	a, _ := simtest.Shards(t, smallPlanted)
	dir := t.TempDir()
	for _, d := range []string{"shards", "moved"} {
		if err := os.CopyFS(filepath.Join(dir, d), os.DirFS(a)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	ctx := context.Background()
	cfg := tinyConfig("shards", "run", 2)
	if _, err := Fit(ctx, cfg, FitOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Chdir("sub")
	for _, tc := range []struct{ shards, want string }{
		{"../shards", "shards"},
		{"../moved", "../moved"},
	} {
		o := cfg
		o.Shards, o.Output = tc.shards, "../run"
		if rep, err := Fit(ctx, o, FitOptions{Resume: true}); err != nil || rep.Skipped != 1 {
			t.Fatalf("resume from sub on %s: %+v, %v", tc.shards, rep, err)
		}
		if id, err := rundir.ReadShardsIdentity(filepath.Join("..", "run", rundir.ShardsFile)); err != nil || id.Path != tc.want {
			t.Errorf("shards.json after resuming from sub on %s: %+v, %v; want the path %s", tc.shards, id, err, tc.want)
		}
	}
}

// TestResumeCheckpointOnOtherShards: a run that does not record its shards
// (started by an older version) is still refused by its checkpoints and its
// fit mask, with a user's message rather than the sampler's shape error.
func TestResumeCheckpointOnOtherShards(t *testing.T) {
	a, _ := simtest.Shards(t, smallPlanted)
	sameShape := smallPlanted
	sameShape.Seed = 4
	b, _ := simtest.Shards(t, sameShape)
	otherShape := smallPlanted
	otherShape.Cells, otherShape.Genes = 640, 150
	c, _ := simtest.Shards(t, otherShape)

	cfg := tinyConfig(a, filepath.Join(t.TempDir(), "run"), 3)
	cfg.BurnIn, cfg.Samples, cfg.CheckpointEvery = 30, 20, 1
	ctx, cancel := context.WithCancel(context.Background())
	_, err := Fit(ctx, cfg, FitOptions{afterSweep: cancelAfter(3, cancel)})
	cancel()
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("interrupted fit: %v", err)
	}
	if err := os.Remove(filepath.Join(cfg.Output, rundir.ShardsFile)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		shards string
		want   string // what the refusal names besides the shards
	}{
		{b, "checkpoint " + filepath.Join(rundir.FitDir(cfg.Output, 3, 1), rundir.CheckpointFile)},
		{c, "was made from shards of 500 cells × 200 genes"},
	} {
		o := cfg
		o.Shards = tc.shards
		_, err := Fit(context.Background(), o, FitOptions{Resume: true})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.shards) || strings.Contains(err.Error(), "gibbs") {
			t.Errorf("resume on %s: %v (want an error naming the shards and %q)", tc.shards, err, tc.want)
		}
	}
	if _, err := Fit(context.Background(), cfg, FitOptions{Resume: true}); err != nil {
		t.Errorf("resume on the right shards: %v", err)
	}
}

// TestFitLock: while a process fits a run, another is refused at once,
// whether resuming or replacing it with --force, with a message naming the
// holder's pid and host; once the holder is killed the run resumes.
func TestFitLock(t *testing.T) {
	shards, _ := simtest.Shards(t, smallPlanted)
	cfg := tinyConfig(shards, filepath.Join(t.TempDir(), "run"), 2)
	if err := os.Mkdir(cfg.Output, 0o777); err != nil { // an empty folder: the child starts the run
		t.Fatal(err)
	}
	child, out := startFitChild(t, cfg, blockEnv+"=1")
	if line, err := out.ReadString('\n'); line != "fitting\n" {
		t.Fatalf("child: %q, %v", line, err)
	}
	host, _ := os.Hostname()
	holder := fmt.Sprintf("pid %d on host %s", child.Process.Pid, host)
	for _, o := range []FitOptions{{Resume: true}, {Force: true}, {}} {
		_, err := Fit(context.Background(), cfg, o)
		if !errors.Is(err, outlock.ErrLocked) || !strings.Contains(err.Error(), holder) || !strings.Contains(err.Error(), cfg.Output) {
			t.Errorf("%+v while another process fits the run: %v (want a refusal naming %s)", o, err, holder)
		}
	}
	if _, err := os.Stat(filepath.Join(cfg.Output, rundir.ConfigFile)); err != nil {
		t.Errorf("the live run lost its configuration: %v", err)
	}
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	rep, err := Fit(context.Background(), cfg, FitOptions{Resume: true})
	if err != nil || rep.Fitted != 1 {
		t.Fatalf("resume after the holder was killed: %+v, %v", rep, err)
	}
}

// TestFitKilledLeavesNoTemporaries kills fits with SIGKILL while they write
// a file (a checkpoint, the fit mask, a table), at a different sweep each
// time; resuming the run removes what the killed writes left.
func TestFitKilledLeavesNoTemporaries(t *testing.T) {
	shards, _ := simtest.Shards(t, smallPlanted)
	cfg := tinyConfig(shards, filepath.Join(t.TempDir(), "run"), 3)
	cfg.BurnIn, cfg.Samples, cfg.CheckpointEvery = 20, 20, 1
	if err := os.Mkdir(cfg.Output, 0o777); err != nil {
		t.Fatal(err)
	}
	caught, tries := 0, 0
	seen := map[string]bool{} // kinds of temporaries caught: each kill waits for another kind
	for ; tries < 60 && (caught < 4 || !seen[".state.ckpt.tmp"]); tries++ {
		child, _ := startFitChild(t, cfg)
		done := make(chan error, 1)
		go func() { done <- child.Wait() }()
		if stopAtTemporary(t, child, cfg.Output, seen, done) {
			caught++
			t.Logf("kill %d (try %d): %q", caught, tries+1, temporaries(t, cfg.Output))
			child.Process.Signal(syscall.SIGKILL)
			<-done
			continue
		}
		if err := <-done; err == nil {
			t.Fatalf("the fit finished before a kill left a temporary file (%d caught)", caught)
		}
	}
	if !seen[".state.ckpt.tmp"] {
		t.Fatalf("no kill in %d tries left a checkpoint's temporary file (%d caught)", tries, caught)
	}
	if _, err := Fit(context.Background(), cfg, FitOptions{Resume: true}); err != nil {
		t.Fatal(err)
	}
	if left := temporaries(t, cfg.Output); len(left) != 0 {
		t.Errorf("temporary files left after %d kills and a resume: %q", caught, left)
	}
}

// stopAtTemporary polls run until it holds a temporary of a kind (the
// file it stands for: .state.ckpt.tmp-…, fitmask.tmp-…) not in seen, then
// stops the child with SIGSTOP; it reports true, and adds the kind to
// seen, when the temporary is still there with the child stopped, and
// continues the child otherwise. It returns false when the child exits
// first (done).
func stopAtTemporary(t *testing.T, child *exec.Cmd, run string, seen map[string]bool, done chan error) bool {
	kind := func(p string) string { b := filepath.Base(p); return b[:strings.LastIndexByte(b, '-')] }
	fresh := func() []string {
		var n []string
		for _, p := range temporaries(t, run) {
			if !seen[kind(p)] {
				n = append(n, kind(p))
			}
		}
		return n
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			done <- err
			return false
		default:
		}
		if len(fresh()) == 0 {
			continue
		}
		child.Process.Signal(syscall.SIGSTOP)
		testkit.WaitStopped(child.Process.Pid)
		if n := fresh(); len(n) > 0 {
			for _, p := range n {
				seen[p] = true
			}
			return true
		}
		child.Process.Signal(syscall.SIGCONT)
	}
	return false
}

// TestFitOnFailedStart: a run folder that a start which failed before its
// first fit left (empty, or with only shards.json and temporaries) is no
// dead end: a plain fit and --resume both start it; a folder with other
// files is still refused.
func TestFitOnFailedStart(t *testing.T) {
	shards, _ := simtest.Shards(t, smallPlanted)
	for _, tc := range []struct {
		name   string
		files  []string
		resume bool
		ok     bool
	}{
		{"empty", nil, false, true},
		{"empty, --resume", nil, true, true},
		{"shards.json and a temporary", []string{rundir.ShardsFile, ".config.toml.tmp-0123456789ab"}, false, true},
		{"shards.json and a temporary, --resume", []string{rundir.ShardsFile, ".config.toml.tmp-0123456789ab"}, true, true},
		{"someone's notes", []string{"notes.txt"}, false, false},
		{"someone's notes, --resume", []string{"notes.txt"}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tinyConfig(shards, filepath.Join(t.TempDir(), "run"), 2)
			if err := os.Mkdir(cfg.Output, 0o777); err != nil {
				t.Fatal(err)
			}
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(cfg.Output, f), []byte("{}"), 0o666); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := Fit(context.Background(), cfg, FitOptions{Resume: tc.resume})
			if tc.ok != (err == nil) {
				t.Fatalf("fit: %v (want success %v)", err, tc.ok)
			}
			if !tc.ok {
				if _, err := os.Stat(filepath.Join(cfg.Output, "notes.txt")); err != nil {
					t.Errorf("the refused fit touched the folder: %v", err)
				}
				return
			}
			if rep.Fitted != 1 || len(temporaries(t, cfg.Output)) != 0 {
				t.Errorf("fitted %d, temporaries %q", rep.Fitted, temporaries(t, cfg.Output))
			}
			if id, err := rundir.ReadShardsIdentity(filepath.Join(cfg.Output, rundir.ShardsFile)); err != nil || id.Path != shards {
				t.Errorf("shards.json: %+v, %v", id, err)
			}
		})
	}
}

// TestRunModesFollowUmask: the run directory's folders and files are
// created 0777 and 0666 less the umask.
func TestRunModesFollowUmask(t *testing.T) {
	shards, _ := simtest.Shards(t, simulate.Params{Cells: 200, Genes: 100, L: 2, CodeDensity: 0.2, UsageDensity: 0.3, Seed: 5})
	const mask = 0o027
	old := syscall.Umask(mask)
	cfg := tinyConfig(shards, filepath.Join(t.TempDir(), "run"), 2)
	_, err := Fit(context.Background(), cfg, FitOptions{})
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	if m := testkit.Mode(t, cfg.Output); m != 0o777&^mask {
		t.Errorf("%s: mode %03o, want %03o", cfg.Output, m, 0o777&^mask)
	}
	if n := testkit.ModesFollowUmask(t, cfg.Output, mask); n < 10 {
		t.Errorf("only %d files and folders in the run", n)
	}
}

// TestInterruptedInEveryPhase: a fit cancelled before it sweeps (here,
// before it starts: the shards' check is the first phase to notice) still
// says that it was interrupted and how to go on, not only "context
// canceled"; so do a prepared run and one of its chains.
func TestInterruptedInEveryPhase(t *testing.T) {
	shards, _ := simtest.Shards(t, smallPlanted)
	cfg := tinyConfig(shards, filepath.Join(t.TempDir(), "run"), 2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, fit := range map[string]func() error{
		"fit":     func() error { _, err := Fit(ctx, cfg, FitOptions{}); return err },
		"prepare": func() error { _, err := Prepare(ctx, cfg, FitOptions{}); return err },
	} {
		err := fit()
		if !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "-o "+cfg.Output) {
			t.Errorf("%s cancelled at once: %v, want ErrInterrupted saying how to go on", name, err)
		}
	}
}
