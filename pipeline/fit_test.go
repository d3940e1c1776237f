package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"scpipe/gibbs"
	"scpipe/internal/rundir"
	"scpipe/internal/stats/codematch"
	"scpipe/shard"
	"scpipe/simulate"

	"scpipe/simulate/simtest"

	"scpipe/internal/rundir/rundirtest"
)

// childEnv makes the test binary run one Fit and exit: the SIGKILL test
// kills such a child in the middle of its run.
const childEnv = "SCPIPE_TEST_FIT_CHILD"

func TestMain(m *testing.M) {
	if js := os.Getenv(childEnv); js != "" {
		var cfg FitConfig
		if err := json.Unmarshal([]byte(js), &cfg); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if _, err := Fit(context.Background(), cfg, FitOptions{Resume: true, Log: childLog()}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var smallPlanted = simulate.Params{Cells: 500, Genes: 200, L: 4, CodeDensity: 0.15, UsageDensity: 0.3, FlipOn: 0.01, FlipOff: 0.05, Seed: 3}

func smallConfig(shards, out string) FitConfig {
	c := DefaultFitConfig()
	c.Shards, c.Output = shards, out
	c.L, c.Chains, c.BurnIn, c.Samples = LSizes{3, 4, 5}, 2, 30, 20
	c.Holdout, c.CheckpointEvery, c.Threads = 0.02, 5, 2
	// The single-cell model these tests were written for, given: the auto
	// model of simulated binary data is the paper's (model_test.go).
	c.Noise, c.Housekeeping = givenNoise(gibbs.Dropout), GivenHousekeeping(true)
	return c
}

func TestFitRecoversPlantedPrograms(t *testing.T) {
	shards, truth := simtest.Shards(t, smallPlanted)
	cfg := smallConfig(shards, filepath.Join(t.TempDir(), "run"))
	rep, err := Fit(context.Background(), cfg, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Fitted != 6 || len(rep.Summary) != 6 || rep.HeldOut == 0 {
		t.Fatalf("fitted %d, %d summary rows, %d held out", rep.Fitted, len(rep.Summary), rep.HeldOut)
	}
	for _, f := range []string{rundir.ConfigFile, rundir.SummaryFile, rundir.SelectionFile} {
		if _, err := os.Stat(filepath.Join(cfg.Output, f)); err != nil {
			t.Error(err)
		}
	}
	// The fit with the planted L recovers every planted program.
	codes, err := rundir.ReadCodes(filepath.Join(rundir.FitDir(cfg.Output, 4, 1), rundir.CodesFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(codes.GeneIDs) != smallPlanted.Genes || codes.GeneIDs[0] != simulate.GeneID(0) {
		t.Fatalf("codes: %d genes, first %q", len(codes.GeneIDs), codes.GeneIDs[0])
	}
	found := codematch.MAPSets(codes.Mean, 4)
	for l := range truth.L {
		planted := codematch.NewSet(smallPlanted.Genes)
		for _, g := range truth.ProgramGenes(l) {
			planted.Add(g)
		}
		best := 0.0
		for _, s := range found {
			best = max(best, codematch.Jaccard(planted, s))
		}
		if best < 0.9 {
			t.Errorf("planted program %d (%d genes): best code overlaps with Jaccard %.2f", l+1, planted.Len(), best)
		}
	}
	cells, err := rundir.ReadCells(filepath.Join(rundir.FitDir(cfg.Output, 4, 1), rundir.CellsFile))
	if err != nil || len(cells.Barcodes) != smallPlanted.Cells || cells.Barcodes[1] != simulate.Barcode(1) {
		t.Fatalf("cells: %v, %d barcodes", err, len(cells.Barcodes))
	}
	// Codes are ordered by decreasing size.
	for k := 1; k < len(found); k++ {
		if found[k].Len() > found[k-1].Len() {
			t.Errorf("code_%d has %d genes, more than code_%d's %d", k+1, found[k].Len(), k, found[k-1].Len())
		}
	}
	// With more codes than planted programs, the extra codes are unused and
	// numbered last, even though their genes' posterior means sit near ½.
	for L := 3; L <= 5; L++ {
		dir := rundir.FitDir(cfg.Output, L, 1)
		codes, cells := rundirtest.Tables(t, dir)
		sets := codematch.UsedMAPSets(codes.Mean, cells.Mean, L)
		for k := 1; k < L; k++ {
			if sets[k].Len() > sets[k-1].Len() {
				t.Errorf("L=%d: code_%d has %d genes, more than code_%d's %d", L, k+1, sets[k].Len(), k, sets[k-1].Len())
			}
		}
		if L == 5 && sets[4].Len() != 0 {
			t.Errorf("L=5 with 4 planted programs: code_5 has %d genes, want an unused code", sets[4].Len())
		}
	}
	for _, r := range rep.Summary {
		if r.L == 4 && (r.HeldoutAccuracy < 0.9 || math.IsNaN(r.HeldoutLogPred) || r.TrainAccuracy < 0.9) {
			t.Errorf("L=4 chain %d: held-out accuracy %.3f, logpred %.3f, train accuracy %.3f", r.Chain, r.HeldoutAccuracy, r.HeldoutLogPred, r.TrainAccuracy)
		}
		if math.IsNaN(r.RHatLogLik) || math.IsNaN(r.Agreement) {
			t.Errorf("L=%d chain %d: R-hat %v, agreement %v", r.L, r.Chain, r.RHatLogLik, r.Agreement)
		}
	}
}

// digest is everything a run writes that must be reproducible: the tables'
// bytes and the trace and summary with the seconds zeroed.
func digest(t *testing.T, run string) string {
	t.Helper()
	var b strings.Builder
	fits, err := rundir.Fits(run)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fits {
		for _, name := range []string{rundir.CodesFile, rundir.CellsFile, rundir.SamplesFile} {
			data, err := os.ReadFile(filepath.Join(f.Dir, name))
			if name == rundir.SamplesFile && errors.Is(err, os.ErrNotExist) {
				continue // a fit without --keep-samples
			}
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%d/%d/%s %x\n", f.L, f.Chain, name, data)
		}
		trace, err := rundir.ReadTrace(filepath.Join(f.Dir, rundir.TraceFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range trace {
			r.Seconds = 0
			fmt.Fprintf(&b, "%d/%d trace %+v\n", f.L, f.Chain, r)
		}
	}
	rows, err := rundir.ReadSummary(filepath.Join(run, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		r.Seconds = 0
		fmt.Fprintf(&b, "summary %+v\n", r)
	}
	return b.String()
}

func TestFitThreadsIdentical(t *testing.T) {
	shards, _ := simtest.Shards(t, smallPlanted)
	var digests []string
	for _, threads := range []int{1, 2} {
		cfg := smallConfig(shards, filepath.Join(t.TempDir(), fmt.Sprint("run", threads)))
		cfg.L, cfg.Chains, cfg.Threads = LSizes{3}, 1, threads
		if _, err := Fit(context.Background(), cfg, FitOptions{}); err != nil {
			t.Fatal(err)
		}
		digests = append(digests, digest(t, cfg.Output))
	}
	if digests[0] != digests[1] {
		t.Error("-j 1 and -j 2 wrote different results")
	}
}

// cancelAfter is a FitOptions.afterSweep that cancels the first fit to
// finish the given sweep: an interruption mid-fit however fast the machine.
func cancelAfter(sweep int, cancel context.CancelFunc) func(L, chain, s int) {
	return func(_, _, s int) {
		if s == sweep {
			cancel()
		}
	}
}

// waitForCheckpoint polls until some fit of run has a checkpoint.
func waitForCheckpoint(run string, stop <-chan struct{}) bool {
	for {
		if m, _ := filepath.Glob(filepath.Join(run, "L*", "chain*", rundir.CheckpointFile)); len(m) > 0 {
			return true
		}
		select {
		case <-stop:
			return false
		case <-time.After(2 * time.Millisecond):
		}
	}
}

func TestFitInterruptAndResume(t *testing.T) {
	shards, _ := simtest.Shards(t, smallPlanted)
	ref := smallConfig(shards, filepath.Join(t.TempDir(), "ref"))
	ref.CheckpointEvery, ref.KeepSamples = 3, true // the retained states too survive an interruption
	if _, err := Fit(context.Background(), ref, FitOptions{}); err != nil {
		t.Fatal(err)
	}
	want := digest(t, ref.Output)
	if !strings.Contains(want, rundir.SamplesFile) {
		t.Fatal("the reference run kept no samples")
	}

	t.Run("SIGINT", func(t *testing.T) {
		cfg := ref
		cfg.Output = filepath.Join(t.TempDir(), "run")
		ctx, cancel := context.WithCancel(context.Background())
		_, err := Fit(ctx, cfg, FitOptions{afterSweep: cancelAfter(3, cancel)})
		cancel()
		if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "--resume") {
			t.Fatalf("interrupted fit returned %v", err)
		}
		// As scpipe fit --resume gives it: the defaults, and the settings
		// the command chose (Given); the rest comes from the run's own
		// configuration. A chosen setting that changes results is refused.
		cmd := DefaultFitConfig()
		cmd.Shards, cmd.Output, cmd.BurnIn = cfg.Shards, cfg.Output, cfg.BurnIn+1
		if _, err := Fit(context.Background(), cmd, FitOptions{Resume: true, Given: GivenKeys("burn_in")}); err == nil || !strings.Contains(err.Error(), "differs") {
			t.Fatalf("resumed with another burn_in: %v", err)
		}
		cmd.Threads = 1
		if _, err := Fit(context.Background(), cmd, FitOptions{Resume: true, Given: GivenKeys("threads"), Log: childLog()}); err != nil {
			t.Fatal(err)
		}
		if digest(t, cfg.Output) != want {
			t.Error("interrupted and resumed run differs from the uninterrupted run")
		}
	})

	t.Run("SIGKILL", func(t *testing.T) {
		cfg := ref
		cfg.Output = filepath.Join(t.TempDir(), "run")
		if err := os.MkdirAll(cfg.Output, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeConfig(cfg); err != nil { // the child resumes this run from the start
			t.Fatal(err)
		}
		// As a fit's start records them: the shards and the run's
		// identity, which its tables record.
		src, err := shard.Open(cfg.Shards)
		if err != nil {
			t.Fatal(err)
		}
		id := shardsIdentity(cfg.Shards, src.Manifest())
		src.Close()
		id.Run = cfg.hash()
		if err := rundir.WriteShardsIdentity(filepath.Join(cfg.Output, rundir.ShardsFile), id); err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(cfg)
		for kills := 0; kills < 3; kills++ {
			child := exec.Command(os.Args[0], "-test.run=^$")
			child.Env = append(os.Environ(), childEnv+"="+string(js))
			var stderr bytes.Buffer
			child.Stderr = &stderr
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			// Kill at a different moment each time: after a checkpoint appears, plus a delay.
			stop := make(chan struct{})
			go func() {
				if waitForCheckpoint(cfg.Output, stop) {
					time.Sleep(time.Duration(kills*7) * time.Millisecond)
					child.Process.Signal(syscall.SIGKILL)
				}
			}()
			err := child.Wait()
			close(stop)
			if err == nil {
				break // the child finished before the kill
			}
			if ws, ok := child.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
				t.Fatalf("child failed: %v\n%s", err, stderr.String())
			}
		}
		if _, err := Fit(context.Background(), cfg, FitOptions{Resume: true, Log: childLog()}); err != nil {
			t.Fatal(err)
		}
		if digest(t, cfg.Output) != want {
			t.Error("killed and resumed run differs from the uninterrupted run")
		}
	})
}

func TestFitRefusesBadInput(t *testing.T) {
	shards, _ := simtest.Shards(t, smallPlanted)
	ctx := context.Background()
	base := smallConfig(shards, filepath.Join(t.TempDir(), "run"))
	base.L, base.Chains, base.BurnIn, base.Samples, base.Starts = LSizes{2}, 1, 2, 2, 1

	t.Run("L spec", func(t *testing.T) {
		for _, spec := range []string{"5..2", "0", "two"} {
			var ls LSizes
			if err := ls.UnmarshalText([]byte(spec)); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), spec) {
				t.Errorf("L=%q: %v", spec, err)
			}
		}
		cfg := base
		cfg.L = nil
		if _, err := Fit(ctx, cfg, FitOptions{}); !errors.Is(err, ErrConfig) {
			t.Errorf("no L: %v", err)
		}
		if _, err := os.Stat(cfg.Output); err == nil {
			t.Error("no L: run directory created")
		}
	})

	t.Run("existing run", func(t *testing.T) {
		cfg := base
		if _, err := Fit(ctx, cfg, FitOptions{}); err != nil {
			t.Fatal(err)
		}
		before := digest(t, cfg.Output)
		if _, err := Fit(ctx, cfg, FitOptions{}); err == nil || !strings.Contains(err.Error(), "--force") {
			t.Errorf("second fit without --force: %v", err)
		}
		other := cfg
		other.Seed++
		want := fmt.Sprintf("configuration differs from the one %s was started with (seed: %d ≠ %d;", cfg.Output, cfg.Seed, other.Seed)
		if _, err := Fit(ctx, other, FitOptions{Resume: true}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("resume with another seed: %v, want %q", err, want)
		}
		if digest(t, cfg.Output) != before {
			t.Error("a refused fit changed the existing run")
		}
		rep, err := Fit(ctx, cfg, FitOptions{Resume: true})
		if err != nil || rep.Skipped != 1 || rep.Fitted != 0 {
			t.Errorf("resume of a finished run: %+v, %v", rep, err)
		}
		if _, err := Fit(ctx, other, FitOptions{Force: true}); err != nil {
			t.Errorf("--force: %v", err)
		}
	})

	t.Run("--force keeps the old run until the new one is complete", func(t *testing.T) {
		// fit --force once deleted the old run at its start, so that
		// Ctrl-C left neither run (issue 44 item 11).
		cfg := base
		cfg.Output = filepath.Join(t.TempDir(), "run")
		if _, err := Fit(ctx, cfg, FitOptions{}); err != nil {
			t.Fatal(err)
		}
		before := digest(t, cfg.Output)
		other := cfg
		other.Seed++
		cctx, cancel := context.WithCancel(ctx)
		_, err := Fit(cctx, other, FitOptions{Force: true, afterSweep: cancelAfter(2, cancel)})
		cancel()
		if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "nothing replaced") || strings.Contains(err.Error(), "--resume") {
			t.Errorf("interrupted --force: %v, want it to say nothing was replaced", err)
		}
		if digest(t, cfg.Output) != before {
			t.Error("an interrupted --force lost the old run")
		}
		if _, err := Fit(ctx, other, FitOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
		if digest(t, cfg.Output) == before {
			t.Error("--force did not replace the run")
		}
		if left, _ := os.ReadDir(filepath.Dir(cfg.Output)); len(left) != 1 {
			t.Errorf("%d entries beside the run after --force, want none", len(left)-1)
		}
	})

	t.Run("--force on the working directory", func(t *testing.T) {
		cfg := base
		cfg.Output = filepath.Join(t.TempDir(), "run")
		if _, err := Fit(ctx, cfg, FitOptions{}); err != nil {
			t.Fatal(err)
		}
		before := digest(t, cfg.Output)
		t.Chdir(cfg.Output)
		if _, err := Fit(ctx, cfg, FitOptions{Force: true}); err == nil || !strings.Contains(err.Error(), "is the working directory") {
			t.Errorf("--force on the run the command runs in: %v", err)
		}
		if digest(t, cfg.Output) != before {
			t.Error("the refused --force changed the run")
		}
	})

	t.Run("damaged shards", func(t *testing.T) {
		damage := func(name string, mutate func(path string) error) {
			t.Helper()
			dir := filepath.Join(t.TempDir(), "shards")
			if err := os.CopyFS(dir, os.DirFS(shards)); err != nil {
				t.Fatal(err)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "x*"))
			if len(files) == 0 {
				t.Fatalf("no data files in %s", dir)
			}
			if err := mutate(files[0]); err != nil {
				t.Fatal(err)
			}
			cfg := base
			cfg.Shards, cfg.Output = dir, filepath.Join(t.TempDir(), "run")
			_, err := Fit(ctx, cfg, FitOptions{})
			if err == nil || !strings.Contains(err.Error(), filepath.Base(files[0])) {
				t.Errorf("%s: %v (want an error naming %s)", name, err, filepath.Base(files[0]))
			}
			// Even --force keeps an existing run when the shards are bad.
			if err := os.MkdirAll(cfg.Output, 0o755); err != nil {
				t.Fatal(err)
			}
			keep := filepath.Join(cfg.Output, "keep")
			os.WriteFile(keep, []byte("old results"), 0o644)
			if _, err := Fit(ctx, cfg, FitOptions{Force: true}); err == nil {
				t.Errorf("%s: --force fit on bad shards succeeded", name)
			}
			if _, err := os.Stat(keep); err != nil {
				t.Errorf("%s: --force fit on bad shards removed the existing run: %v", name, err)
			}
		}
		damage("flipped byte", func(p string) error {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b[0] ^= 1
			return os.WriteFile(p, b, 0o644)
		})
		damage("truncated", func(p string) error {
			fi, err := os.Stat(p)
			if err != nil {
				return err
			}
			return os.Truncate(p, fi.Size()-8)
		})
	})
}

// TestChainSeedPinned pins the seeds of a few (L, chain) fits as earlier
// versions derived them: a resumed run must continue the same chains.
func TestChainSeedPinned(t *testing.T) {
	for _, tc := range []struct {
		seed     uint64
		L, chain int
		want     uint64
	}{{1, 2, 1, 0xb0416fd02161f27e}, {1, 10, 3, 0xd1ef42b91439bade}, {42, 5, 2, 0x2d7d3a995a07f5be}} {
		if got := chainSeed(tc.seed, tc.L, tc.chain); got != tc.want {
			t.Errorf("chainSeed(%d, %d, %d) = %#x, want %#x", tc.seed, tc.L, tc.chain, got, tc.want)
		}
	}
}
