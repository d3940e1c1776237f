package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"scpipe/simulate"

	"scpipe/internal/testkit"
)

// mainEnv makes the test binary run scpipe with the arguments it holds (a
// JSON list): the kill tests kill such a child.
const mainEnv = "SCPIPE_TEST_MAIN"

func TestMain(m *testing.M) {
	// Called through a link named scpipe (TestPaperScripts), the test
	// binary is scpipe, so that scripts can run it with any arguments.
	if filepath.Base(os.Args[0]) == "scpipe" {
		main()
		os.Exit(0)
	}
	if js := os.Getenv(mainEnv); js != "" {
		var args []string
		if err := json.Unmarshal([]byte(js), &args); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Args = append([]string{"scpipe"}, args...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// child is scpipe running in another process.
type child struct {
	cmd  *exec.Cmd
	done chan error // receives Wait's result once
}

func startScpipe(t *testing.T, args ...string) *child {
	t.Helper()
	js, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainEnv+"="+string(js))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	return c
}

// stopAt polls dir until one of its entries satisfies match, then stops
// the child with SIGSTOP and returns the entry, provided it is still there;
// otherwise the child goes on. It returns "" when the child exits first.
func (c *child) stopAt(t *testing.T, dir string, match func(name string) bool) string {
	t.Helper()
	find := func() string {
		es, _ := os.ReadDir(dir)
		for _, e := range es {
			if match(e.Name()) {
				return e.Name()
			}
		}
		return ""
	}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		select {
		case err := <-c.done:
			c.done <- err
			return ""
		default:
		}
		if find() == "" {
			continue
		}
		c.cmd.Process.Signal(syscall.SIGSTOP)
		// The signal takes effect when the child next enters the kernel: a
		// child running on another core may still rename its temporary, so
		// look again only once it is stopped.
		testkit.WaitStopped(c.cmd.Process.Pid)
		if name := find(); name != "" {
			return name
		}
		c.cmd.Process.Signal(syscall.SIGCONT)
	}
	t.Fatal("timed out")
	return ""
}

func (c *child) kill() {
	c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
}

// TestKilledWritersLeaveNothing stops ingest and simulate at several
// moments (while ingest's spill file exists, while its shard folder is
// being written, while simulate's folder is), checks that another process
// is refused the same output meanwhile, naming the holder, kills them with
// SIGKILL and checks that running the command again leaves nothing but its
// output.
func TestKilledWritersLeaveNothing(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	p := simulate.Params{Cells: 3000, Genes: 400, L: 3, CodeDensity: 0.2, UsageDensity: 0.3, FlipOn: 0.02, FlipOff: 0.05, Seed: 9}
	tr, err := simulate.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if err := simulate.WriteMTX(context.Background(), sim, tr, false); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	for _, tc := range []struct {
		name  string
		out   string
		args  []string
		match func(string) bool // the temporary to stop at
	}{
		{"ingest counting", "shards", []string{"ingest", sim, "-j", "1", "-q"}, func(n string) bool { return strings.HasPrefix(n, ".shards.spill-") }},
		{"ingest writing", "shards", []string{"ingest", sim, "-j", "1", "-q"}, func(n string) bool { return strings.HasPrefix(n, "shards.tmp-") }},
		{"simulate", "planted", []string{"simulate", "--shards", "--cells", "3000", "--genes", "400", "-q"}, func(n string) bool { return strings.HasPrefix(n, "planted.tmp-") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, tc.out)
			args := append(slices.Clone(tc.args), "-o", out)
			var left []string
			for kills := 0; kills < 2; kills++ {
				// A new temporary, not the one the last kill left. A
				// stage of a few milliseconds can pass between two looks
				// on a loaded machine: the command is run again then.
				var c *child
				var name string
				for try := 0; name == "" && try < 20; try++ {
					os.RemoveAll(out)
					c = startScpipe(t, args...)
					name = c.stopAt(t, parent, func(n string) bool { return tc.match(n) && !slices.Contains(left, n) })
				}
				if name == "" {
					t.Fatalf("%s finished before it could be stopped, 20 times", tc.args[0])
				}
				// Another process is refused while the stopped one lives.
				holder := fmt.Sprintf("pid %d on host %s", c.cmd.Process.Pid, host)
				for _, extra := range [][]string{nil, {"--force"}} {
					err := run(t, append(slices.Clone(args), extra...)...)
					if err == nil || !strings.Contains(err.Error(), holder) {
						t.Errorf("scpipe %s %v while another process writes %s: %v (want a refusal naming %s)", tc.args[0], extra, out, err, holder)
					}
				}
				c.kill()
				if _, err := os.Stat(filepath.Join(parent, name)); err != nil {
					t.Fatalf("kill %d: %s gone: %v", kills, name, err)
				}
				left = append(left, name)
			}
			if err := run(t, args...); err != nil {
				t.Fatal(err)
			}
			if got := testkit.Names(t, parent); !slices.Equal(got, []string{tc.out}) {
				t.Errorf("after kills that left %q and a complete run, %s holds %q, want only %s", left, parent, got, tc.out)
			}
		})
	}
}

// TestOutputModesFollowUmask runs simulate, ingest and fit under umask 027:
// every folder they create is 0750 and every file 0640, so that a group
// shares them exactly as the umask says.
func TestOutputModesFollowUmask(t *testing.T) {
	dir := t.TempDir()
	const mask = 0o027
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	steps := [][]string{
		{"simulate", "-o", filepath.Join(dir, "sim"), "--cells", "300", "--genes", "100", "-q"},
		{"simulate", "--shards", "-o", filepath.Join(dir, "simshards"), "--cells", "300", "--genes", "100", "--missing", "0.1", "-q"},
		{"ingest", filepath.Join(dir, "sim"), "-o", filepath.Join(dir, "shards"), "-q"},
		{"fit", filepath.Join(dir, "shards"), "-o", filepath.Join(dir, "run"), "--L", "2", "--burn-in", "3", "--samples", "3", "--starts", "1", "--holdout", "0.05", "-q"},
	}
	for _, args := range steps {
		if err := run(t, args...); err != nil {
			t.Fatalf("scpipe %s: %v", strings.Join(args, " "), err)
		}
	}
	syscall.Umask(old)
	if n := testkit.ModesFollowUmask(t, dir, mask); n < 30 {
		t.Fatalf("walked %d entries, want 30 or more", n)
	}
}

// TestResumeEmptyRunFolder: `fit --resume` on a run folder that a failed
// start left empty starts the run instead of failing on its missing
// config.toml.
func TestResumeEmptyRunFolder(t *testing.T) {
	dir := t.TempDir()
	shards, runDir := filepath.Join(dir, "sim"), filepath.Join(dir, "run")
	if err := run(t, "simulate", "--shards", "-o", shards, "--cells", "300", "--genes", "100", "-q"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(runDir, 0o777); err != nil {
		t.Fatal(err)
	}
	args := []string{"fit", filepath.Join(shards, simulate.ShardsDir), "-o", runDir, "--L", "2", "--burn-in", "3", "--samples", "3", "--starts", "1", "-q"}
	if err := run(t, append(args, "--resume")...); err != nil {
		t.Fatalf("--resume on an empty run folder: %v", err)
	}
	if err := run(t, append(args, "--resume")...); err != nil {
		t.Fatalf("--resume on the finished run: %v", err)
	}
}
