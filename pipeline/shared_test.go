package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"scpipe/internal/outlock"
	"scpipe/internal/rundir"
	"scpipe/pipeline/runsummary"

	"scpipe/simulate/simtest"
)

// sharedConfig is a run of two sizes and two chains, short enough for R̂
// (four sampling sweeps) and small enough to fit many times.
func sharedConfig(shards, out string) FitConfig {
	c := smallConfig(shards, out)
	c.L, c.Chains, c.BurnIn, c.Samples, c.Starts = LSizes{2, 3}, 2, 6, 6, 1
	c.CheckpointEvery = 2
	return c
}

// TestFitChainMatchesFit: a run prepared once and fitted by one FitChain
// per (L, chain), all at once, then summarised, holds what a single Fit
// writes: the same tables, the same summary but for seconds, the same
// selection plot. runsummary.Summarize of Fit's own run rewrites Fit's summary.tsv
// byte for byte. A fit interrupted in a FitChain is resumed by either a
// FitChain or Fit itself, with the same result.
func TestFitChainMatchesFit(t *testing.T) {
	shards, _ := simtest.Shards(t, smallPlanted)
	ctx := context.Background()
	ref := sharedConfig(shards, filepath.Join(t.TempDir(), "ref"))
	if _, err := Fit(ctx, ref, FitOptions{}); err != nil {
		t.Fatal(err)
	}
	want := digest(t, ref.Output)
	refSVG := readFile(t, filepath.Join(ref.Output, rundir.SelectionFile))

	t.Run("summarize Fit's run", func(t *testing.T) {
		t.Parallel()
		summary := readFile(t, filepath.Join(ref.Output, rundir.SummaryFile))
		for _, f := range []string{rundir.SummaryFile, rundir.SelectionFile} {
			if err := os.Remove(filepath.Join(ref.Output, f)); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := runsummary.Summarize(ctx, ref.Output, SummaryPlan, runsummary.Options{Threads: 1})
		if err != nil || len(rep.Missing) != 0 || len(rep.Summary) != 4 {
			t.Fatalf("summarize: %+v, %v", rep, err)
		}
		if got := readFile(t, filepath.Join(ref.Output, rundir.SummaryFile)); !bytes.Equal(got, summary) {
			t.Errorf("summarize wrote\n%s\nFit wrote\n%s", got, summary)
		}
		if !bytes.Equal(readFile(t, filepath.Join(ref.Output, rundir.SelectionFile)), refSVG) {
			t.Error("summarize wrote another selection.svg than Fit")
		}
	})

	t.Run("one process per fit", func(t *testing.T) {
		t.Parallel()
		cfg := ref
		cfg.Output = filepath.Join(t.TempDir(), "run")
		cfg.Threads = 1
		if _, err := Prepare(ctx, cfg, FitOptions{}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, len(cfg.L)*cfg.Chains)
		for i, L := range cfg.L {
			for chain := 1; chain <= cfg.Chains; chain++ {
				task := cfg
				task.L = LSizes{L}
				wg.Go(func() {
					_, errs[i*cfg.Chains+chain-1] = FitChain(ctx, task, chain, FitOptions{})
				})
			}
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(cfg.Output, rundir.SummaryFile)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a FitChain wrote the summary: %v", err)
		}
		if _, err := runsummary.Summarize(ctx, cfg.Output, SummaryPlan, runsummary.Options{}); err != nil {
			t.Fatal(err)
		}
		if digest(t, cfg.Output) != want {
			t.Error("the fits of one process each differ from Fit's")
		}
		if !bytes.Equal(readFile(t, filepath.Join(cfg.Output, rundir.SelectionFile)), refSVG) {
			t.Error("selection.svg differs from Fit's")
		}
		if locks, _ := filepath.Glob(filepath.Join(cfg.Output, "L*", ".chain*.lock")); len(locks) != 0 {
			t.Errorf("lock files left: %q", locks)
		}
	})

	for _, finish := range []string{"FitChain", "Fit"} {
		t.Run("interrupted, resumed by "+finish, func(t *testing.T) {
			t.Parallel()
			cfg := ref
			cfg.Output = filepath.Join(t.TempDir(), "run")
			if _, err := Prepare(ctx, cfg, FitOptions{}); err != nil {
				t.Fatal(err)
			}
			task := cfg
			task.L = LSizes{3}
			cctx, cancel := context.WithCancel(ctx)
			_, err := FitChain(cctx, task, 2, FitOptions{afterSweep: cancelAfter(3, cancel)})
			cancel()
			if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "--L 3 --chain-index 2 --resume") {
				t.Fatalf("interrupted FitChain: %v (want ErrInterrupted naming the command that resumes it)", err)
			}
			if finish == "Fit" {
				if _, err := Fit(ctx, cfg, FitOptions{Resume: true}); err != nil {
					t.Fatal(err)
				}
			} else {
				for _, chain := range []int{1, 2} {
					if _, err := FitChain(ctx, cfg, chain, FitOptions{Resume: true}); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := runsummary.Summarize(ctx, cfg.Output, SummaryPlan, runsummary.Options{}); err != nil {
					t.Fatal(err)
				}
			}
			if digest(t, cfg.Output) != want {
				t.Errorf("interrupted in a FitChain and finished by %s: the run differs from Fit's", finish)
			}
		})
	}
}

// TestSummarizeMissing: runsummary.Summarize reports the fits that have not
// finished (with their checkpoint's sweep) and summarises the others; with
// none finished it writes nothing and says so.
func TestSummarizeMissing(t *testing.T) {
	shards, _ := simtest.Shards(t, smallPlanted)
	ctx := context.Background()
	cfg := sharedConfig(shards, filepath.Join(t.TempDir(), "run"))
	cfg.BurnIn, cfg.Samples = 100, 20 // long enough to be interrupted
	if _, err := Prepare(ctx, cfg, FitOptions{}); err != nil {
		t.Fatal(err)
	}
	rep, err := runsummary.Summarize(ctx, cfg.Output, SummaryPlan, runsummary.Options{})
	if err == nil || !strings.Contains(err.Error(), "no fit of "+cfg.Output+" has finished") || len(rep.Missing) != 4 {
		t.Fatalf("summarize with no fit: %+v, %v", rep, err)
	}
	if _, err := os.Stat(filepath.Join(cfg.Output, rundir.SummaryFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("summary written with no fit: %v", err)
	}

	one := cfg
	one.L = LSizes{3}
	if _, err := FitChain(ctx, one, 1, FitOptions{}); err != nil {
		t.Fatal(err)
	}
	// L=2 chain 2 stops after its first checkpoint.
	ckpt := filepath.Join(rundir.FitDir(cfg.Output, 2, 2), rundir.CheckpointFile)
	cctx, cancel := context.WithCancel(ctx)
	stop := make(chan struct{})
	go func() {
		for {
			if _, err := os.Stat(ckpt); err == nil {
				cancel()
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	one.L = LSizes{2}
	_, err = FitChain(cctx, one, 2, FitOptions{})
	close(stop)
	cancel()
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("interrupted fit: %v", err)
	}
	meta, _, err := rundir.ReadCheckpoint(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Sweep == 0 {
		t.Fatal("the interrupted fit's checkpoint holds no sweep")
	}
	rep, err = runsummary.Summarize(ctx, cfg.Output, SummaryPlan, runsummary.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantMissing := []runsummary.MissingFit{{L: 2, Chain: 1}, {L: 2, Chain: 2, Sweep: meta.Sweep}, {L: 3, Chain: 2}}
	if !slices.Equal(rep.Missing, wantMissing) {
		t.Errorf("missing %v, want %v", rep.Missing, wantMissing)
	}
	rows, err := rundir.ReadSummary(filepath.Join(cfg.Output, rundir.SummaryFile))
	if err != nil || len(rows) != 1 || rows[0].L != 3 || rows[0].Chain != 1 || rows[0].Converged != "" {
		t.Errorf("summary of the one finished fit: %+v, %v", rows, err)
	}
	if got := fmt.Sprint(wantMissing[1]); got != fmt.Sprintf("L=2 chain 2 (checkpoint after sweep %d)", meta.Sweep) {
		t.Errorf("missing fit reads %q", got)
	}
}

// TestSharedRunRefusals: what a process sharing a run is refused, with a
// message that says why, and what it leaves alone.
func TestSharedRunRefusals(t *testing.T) {
	shards, _ := simtest.Shards(t, smallPlanted)
	otherShards := smallPlanted
	otherShards.Seed = 9
	other, _ := simtest.Shards(t, otherShards)
	ctx := context.Background()
	cfg := sharedConfig(shards, filepath.Join(t.TempDir(), "run"))

	task := func(edit func(c *FitConfig)) FitConfig {
		c := cfg
		c.L = LSizes{2}
		if edit != nil {
			edit(&c)
		}
		return c
	}
	_, err := FitChain(ctx, task(nil), 1, FitOptions{})
	if err == nil || !strings.Contains(err.Error(), "not a prepared run") || !strings.Contains(err.Error(), "--prepare") {
		t.Errorf("FitChain before Prepare: %v", err)
	}
	if _, err := Prepare(ctx, cfg, FitOptions{}); err != nil {
		t.Fatal(err)
	}
	config := readFile(t, filepath.Join(cfg.Output, rundir.ConfigFile))
	if _, err := FitChain(ctx, task(nil), 1, FitOptions{}); err != nil {
		t.Fatal(err)
	}
	fitLock := func() func() {
		lk, err := outlock.Acquire(rundir.FitDir(cfg.Output, 3, 1), nil)
		if err != nil {
			t.Fatal(err)
		}
		return func() { lk.Release() }
	}
	runLock := func(shared bool) func() func() {
		return func() func() {
			acquire := outlock.Acquire
			if shared {
				acquire = outlock.AcquireShared
			}
			lk, err := acquire(cfg.Output, nil)
			if err != nil {
				t.Fatal(err)
			}
			return func() { lk.Release() }
		}
	}
	for _, tc := range []struct {
		name string
		hold func() func() // a lock another process would hold
		call func() error
		want string
	}{
		{"chain beyond the run's", nil, func() error { _, err := FitChain(ctx, task(nil), 3, FitOptions{}); return err }, "has 2 chains per L"},
		{"chain 0", nil, func() error { _, err := FitChain(ctx, task(nil), 0, FitOptions{}); return err }, "numbered from 1"},
		{"L outside the run", nil, func() error {
			_, err := FitChain(ctx, task(func(c *FitConfig) { c.L = LSizes{2, 4} }), 1, FitOptions{})
			return err
		}, "fits L = 2..3"},
		{"other settings", nil, func() error {
			_, err := FitChain(ctx, task(func(c *FitConfig) { c.Seed, c.Samples = 7, 9 }), 2, FitOptions{})
			return err
		}, "samples: 6 ≠ 9, seed: 1 ≠ 7"},
		{"a setting the defaults leave out", nil, func() error {
			_, err := FitChain(ctx, task(func(c *FitConfig) { c.KeepSamples = true }), 2, FitOptions{})
			return err
		}, "keep_samples: (none) ≠ true"},
		{"--force", nil, func() error { _, err := FitChain(ctx, task(nil), 2, FitOptions{Force: true}); return err }, "--force replaces a whole run"},
		{"a started fit without --resume", nil, func() error { _, err := FitChain(ctx, task(nil), 1, FitOptions{}); return err }, "use --resume"},
		{"other shards", nil, func() error {
			_, err := FitChain(ctx, task(func(c *FitConfig) { c.Shards = other }), 2, FitOptions{})
			return err
		}, "not on " + other},
		{"Prepare with other settings", nil, func() error {
			c := cfg
			c.Holdout = 0.05
			_, err := Prepare(ctx, c, FitOptions{})
			return err
		}, "holdout: 0.02 ≠ 0.05"},
		{"a fit another process fits", fitLock, func() error {
			_, err := FitChain(ctx, task(func(c *FitConfig) { c.L = LSizes{3} }), 1, FitOptions{})
			return err
		}, "L=3 chain 1: " + rundir.FitDir(cfg.Output, 3, 1) + " is being written by pid"},
		{"FitChain beside Fit", runLock(false), func() error { _, err := FitChain(ctx, task(nil), 2, FitOptions{}); return err }, "is being written by pid"},
		{"Summarize beside Fit", runLock(false), func() error {
			_, err := runsummary.Summarize(ctx, cfg.Output, SummaryPlan, runsummary.Options{})
			return err
		}, "is being written by pid"},
		{"Fit beside FitChain", runLock(true), func() error { _, err := Fit(ctx, cfg, FitOptions{Resume: true}); return err }, "processes that share it"},
		{"Prepare beside FitChain", runLock(true), func() error { _, err := Prepare(ctx, cfg, FitOptions{}); return err }, "processes that share it"},
		{"--force beside FitChain", runLock(true), func() error { _, err := Fit(ctx, cfg, FitOptions{Force: true}); return err }, "processes that share it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.hold != nil {
				defer tc.hold()()
			}
			before := digestFits(t, cfg.Output)
			err := tc.call()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v (want an error containing %q)", err, tc.want)
			}
			if !bytes.Equal(readFile(t, filepath.Join(cfg.Output, rundir.ConfigFile)), config) || digestFits(t, cfg.Output) != before {
				t.Error("the refused call changed the run")
			}
		})
	}
	// Prepare again with the same settings changes nothing; the finished
	// fit is skipped with --resume.
	if _, err := Prepare(ctx, cfg, FitOptions{}); err != nil {
		t.Errorf("Prepare of the prepared run: %v", err)
	}
	if rep, err := FitChain(ctx, task(nil), 1, FitOptions{Resume: true}); err != nil || rep.Skipped != 1 || rep.Fitted != 0 {
		t.Errorf("FitChain --resume of a finished fit: %+v, %v", rep, err)
	}
	if !bytes.Equal(readFile(t, filepath.Join(cfg.Output, rundir.ConfigFile)), config) {
		t.Error("Prepare rewrote the prepared run's config.toml")
	}
}

// digestFits lists the files of every fit of run with their sizes and
// modification times: what a refused call must not change.
func digestFits(t *testing.T, run string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(run, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			fmt.Fprintf(&b, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
		}
		return err
	})
	return b.String()
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSummaryPlanDamagedConfig: a config.toml cut short (a full disk, a
// careless edit) lacks settings that every run records; reading it as
// their zero values would summarise a run as one without held-out
// entries, replacing its summary.tsv with one that has no scores. It is
// an error naming the file and the missing keys instead.
func TestSummaryPlanDamagedConfig(t *testing.T) {
	cfg := DefaultFitConfig()
	cfg.Shards, cfg.Output, cfg.L = "shards", "run", LSizes{2, 3}
	full, err := cfg.encodeTOML()
	if err != nil {
		t.Fatal(err)
	}
	cut := func(after string) []byte {
		i := bytes.Index(full, []byte(after))
		if i < 0 {
			t.Fatalf("config.toml has no %q", after)
		}
		return full[:i]
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string // "": no error
	}{
		{"whole", full, ""},
		{"the header alone", cut("shards ="), "lacks L, chains, holdout"},
		{"cut after L", cut("chains ="), "lacks chains, holdout"},
		{"cut before holdout", cut("holdout ="), "lacks holdout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := t.TempDir()
			path := filepath.Join(run, rundir.ConfigFile)
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := SummaryPlan(run)
			if tc.want == "" {
				if err != nil || len(p.L) != 2 || p.Chains != cfg.Chains {
					t.Errorf("plan %+v, %v", p, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want an error naming %s that says %q", err, path, tc.want)
			}
		})
	}
}
