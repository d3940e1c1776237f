package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"scpipe/gibbs"
	"scpipe/internal/mpi"
	"scpipe/internal/rundir"
	"scpipe/shard"
	"scpipe/simulate"
)

// blockShards writes smallPlanted's data as shards of 128-cell blocks (4
// blocks of its 500 cells), so that up to 4 ranks share them.
func blockShards(t *testing.T) string {
	t.Helper()
	return manifestShards(t, func(*simulate.Truth) shard.Manifest { return shard.Manifest{} })
}

// manifestShards is blockShards with the manifest that manifest makes of
// the simulated data.
func manifestShards(t *testing.T, manifest func(*simulate.Truth) shard.Manifest) string {
	t.Helper()
	tr, err := simulate.New(context.Background(), smallPlanted)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "shards")
	w, err := shard.Create(dir, shard.Layout{Cells: tr.Cells, Genes: tr.Genes, RowsPerBlock: 128}, shard.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	row, clean := make([]uint64, tr.Words()), make([]uint64, tr.Words())
	for n := range tr.Cells {
		tr.Row(n, row, clean)
		w.SetRowWords(n, row)
	}
	if err := w.Commit(context.Background(), manifest(tr)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fitRanks runs FitMPI on a Local group of n ranks; ctxs, when not nil,
// gives each rank its context.
func fitRanks(cfg FitConfig, o FitOptions, n int, ctxs []context.Context) []error {
	comms := mpi.Local(n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, comm := range comms {
		ctx := context.Background()
		if ctxs != nil {
			ctx = ctxs[r]
		}
		wg.Go(func() { _, errs[r] = FitMPI(ctx, cfg, o, comm) })
	}
	wg.Wait()
	return errs
}

// TestFitMPIMatchesFit requires the run directory of FitMPI on 1, 2, 3 and
// 4 ranks to hold, byte for byte, what Fit writes (but the seconds), with
// the fit's defaults (dropout noise, 8 cell levels, the cluster start, a
// housekeeping code, held-out entries) and with the paper's symmetric
// model from a random start; and a run stopped on one rank to checkpoint
// on all, each rank its cells, and resume on another number of ranks, or
// without MPI, to the same result.
func TestFitMPIMatchesFit(t *testing.T) {
	shards, samples := blockShards(t), sampleShards(t)
	for _, tc := range []struct {
		name string
		edit func(*FitConfig)
	}{
		{"fit defaults", func(*FitConfig) {}},
		{"fit defaults, three samples", func(c *FitConfig) { c.Shards = samples }},
		{"shared parameters", func(c *FitConfig) { c.ShareParams = true }},
		{"symmetric, random start", func(c *FitConfig) {
			c.Noise, c.Init, c.Housekeeping = givenNoise(gibbs.Symmetric), gibbs.InitRandom, GivenHousekeeping(false)
		}},
	} {
		cfg := smallConfig(shards, filepath.Join(t.TempDir(), "single"))
		cfg.L, cfg.Chains, cfg.BurnIn, cfg.Samples, cfg.CheckpointEvery = LSizes{3, 4}, 1, 6, 4, 3
		cfg.Starts, cfg.StartSweeps = 2, 2
		// fit --mpi builds no consensus of chains (docs/commands.md), on
		// which the summary's verdict would otherwise differ.
		cfg.ConsensusChains = 0
		tc.edit(&cfg)
		if _, err := Fit(context.Background(), cfg, FitOptions{}); err != nil {
			t.Fatal(err)
		}
		want := digest(t, cfg.Output)
		if cfg.Shards == samples { // the samples model is on: each sample's gene offsets
			codes, err := rundir.ReadCodes(filepath.Join(rundir.FitDir(cfg.Output, 3, 1), rundir.CodesFile))
			if err != nil || len(codes.Samples) != 3 {
				t.Fatalf("%s: codes.parquet of samples %q (%v), want three", tc.name, codes.Samples, err)
			}
		}
		for _, ranks := range []int{1, 2, 3, 4} {
			c := cfg
			c.Output = filepath.Join(t.TempDir(), fmt.Sprint("ranks", ranks))
			if err := errors.Join(fitRanks(c, FitOptions{}, ranks, nil)...); err != nil {
				t.Fatalf("%s, %d ranks: %v", tc.name, ranks, err)
			}
			if digest(t, c.Output) != want {
				t.Errorf("%s, %d ranks: the run differs from a single process's", tc.name, ranks)
			}
		}
		// Rank 1 of 2 is stopped, before its first sweep, after its
		// fourth (between two checkpoints of the cadence) or in the last
		// sweep of L = 3, which every rank then finishes (its results
		// take collectives that the stopped rank must join) before L = 4
		// stops at its start. Every rank stops; after a sweep each
		// checkpoints its cells there, while a fit stopped in seeding
		// its starts has nothing to checkpoint. 3 ranks resume the first
		// such run, a single process the second, 2 ranks the third.
		sweeps := cfg.BurnIn + cfg.Samples
		for _, stop := range []struct {
			sweep       int // the sweeps done when rank 1 is stopped
			resumeRanks int // 0: without MPI
			L, at       int // the fit that stops, and the sweep it checkpoints in parts (−1: none)
		}{{0, 3, 3, -1}, {4, 0, 3, 4}, {sweeps, 2, 4, -1}} {
			resumeRanks := stop.resumeRanks
			c := cfg
			c.Output = filepath.Join(t.TempDir(), "stopped")
			stopped, cancel := context.WithCancel(context.Background())
			o := FitOptions{afterSweep: cancelAfter(stop.sweep-1, cancel)}
			if stop.sweep == 0 {
				cancel()
			}
			errs := fitRanks(c, o, 2, []context.Context{context.Background(), stopped})
			cancel()
			for r, err := range errs {
				if !errors.Is(err, ErrInterrupted) {
					t.Fatalf("%s: rank %d of the run stopped after %d sweeps: got %v, want ErrInterrupted", tc.name, r, stop.sweep, err)
				}
			}
			fitDir := rundir.FitDir(c.Output, stop.L, 1)
			parts, err := rundir.CheckpointParts(fitDir)
			switch _, serr := os.Stat(filepath.Join(fitDir, rundir.CheckpointFile)); {
			case stop.at < 0 && (len(parts) != 0 || serr == nil):
				t.Fatalf("%s: the run stopped in seeding L = %d left part files %v and a checkpoint (%v), want none", tc.name, stop.L, parts, serr)
			case stop.at >= 0 && (err != nil || len(parts) != 2 || parts[0].Sweep != int64(stop.at)):
				t.Fatalf("%s: the run stopped after %d sweeps left part files %v (%v), want 2 of L = %d's sweep %d", tc.name, stop.sweep, parts, err, stop.L, stop.at)
			}
			if resumeRanks > 0 {
				// As scpipe fit --mpi --resume gives it: the run's own
				// configuration, which rank 0 reads and hands the others.
				cmd := DefaultFitConfig()
				cmd.Shards, cmd.Output = c.Shards, c.Output
				err = errors.Join(fitRanks(cmd, FitOptions{Resume: true, Given: GivenKeys()}, resumeRanks, nil)...)
			} else {
				_, err = Fit(context.Background(), c, FitOptions{Resume: true})
			}
			if err != nil {
				t.Fatalf("%s: resume on %d ranks: %v", tc.name, resumeRanks, err)
			}
			if digest(t, c.Output) != want {
				t.Errorf("%s: the run stopped on 2 ranks and resumed on %d (0: without MPI) differs from a single process's", tc.name, resumeRanks)
			}
			if resumeRanks > 0 {
				if parts, _ := rundir.CheckpointParts(rundir.FitDir(c.Output, stop.L, 1)); len(parts) != 0 {
					t.Errorf("%s: %d part files left after the fit finished", tc.name, len(parts))
				}
			}
		}
	}
}

// TestFitMPIRefusesTooManyRanks checks that more ranks than cell blocks
// fail in every rank with an error that says how many to run.
func TestFitMPIRefusesTooManyRanks(t *testing.T) {
	c := smallConfig(blockShards(t), filepath.Join(t.TempDir(), "run"))
	c.L, c.Chains = LSizes{3}, 1
	for r, err := range fitRanks(c, FitOptions{}, 5, nil) {
		if err == nil || !strings.Contains(err.Error(), "at most 4 ranks") {
			t.Errorf("rank %d: got %v, want an error saying to run at most 4 ranks", r, err)
		}
	}
}

// TestFitMPIResumeRefusedUntouched checks that --mpi --resume of a run
// whose own settings MPI cannot fit (kept samples) is refused in every
// rank before the run directory is touched.
func TestFitMPIResumeRefusedUntouched(t *testing.T) {
	c := smallConfig(blockShards(t), filepath.Join(t.TempDir(), "run"))
	c.L, c.Chains, c.KeepSamples = LSizes{3}, 1, true
	if _, err := Fit(context.Background(), c, FitOptions{}); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(c.Output, rundir.ConfigFile)
	before, err := os.Stat(config)
	if err != nil {
		t.Fatal(err)
	}
	want := digest(t, c.Output)
	cmd := DefaultFitConfig()
	cmd.Shards, cmd.Output = c.Shards, c.Output
	// Rank 0 reads the run's settings and refuses; the others learn that
	// it failed.
	errs := fitRanks(cmd, FitOptions{Resume: true, Given: GivenKeys()}, 2, nil)
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "without --mpi") {
		t.Errorf("rank 0: got %v, want a refusal saying to run without --mpi", errs[0])
	}
	if !errors.Is(errs[1], errOtherRank) {
		t.Errorf("rank 1: got %v, want errOtherRank", errs[1])
	}
	after, err := os.Stat(config)
	if err != nil || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("%s was rewritten by the refused resume (%v)", rundir.ConfigFile, err)
	}
	if digest(t, c.Output) != want {
		t.Error("the refused resume changed the run")
	}
}

// sampleShards is blockShards in three samples, whose first cells (a
// fifth and a half of the way) fall inside cell blocks and words.
func sampleShards(t *testing.T) string {
	t.Helper()
	return manifestShards(t, func(tr *simulate.Truth) shard.Manifest {
		var m shard.Manifest
		for k, b := range [][2]int{{0, tr.Cells/5 + 3}, {tr.Cells/5 + 3, tr.Cells/2 + 1}, {tr.Cells/2 + 1, tr.Cells}} {
			n := b[1] - b[0]
			m.Samples = append(m.Samples, shard.Sample{Name: fmt.Sprint("s", k+1), Format: "simulate",
				FirstCell: b[0], CellsBefore: n, CellsAfter: n, GenesBefore: tr.Genes})
		}
		return m
	})
}

// TestSplitMergeRefusedWhereUnsupported checks that split–merge moves are
// refused, before a run is written, under --mpi and with several
// samples' gene levels, each refusal saying what to change, and that
// with samples_model = false they run.
func TestSplitMergeRefusedWhereUnsupported(t *testing.T) {
	c := smallConfig(sampleShards(t), filepath.Join(t.TempDir(), "run"))
	c.L, c.Chains, c.SplitMerge = LSizes{3}, 1, 2
	if err := mpiRefuses(c); err == nil || !strings.Contains(err.Error(), "--split-merge or --gene-swaps without --mpi") {
		t.Errorf("--mpi: got %v, want a refusal saying to run --split-merge without --mpi", err)
	}
	g := c
	g.SplitMerge, g.GeneSwaps = 0, true
	if err := mpiRefuses(g); err == nil || !strings.Contains(err.Error(), "--gene-swaps") {
		t.Errorf("--mpi --gene-swaps: got %v, want a refusal naming --gene-swaps", err)
	}
	_, err := Fit(context.Background(), c, FitOptions{})
	if err == nil || !strings.Contains(err.Error(), "samples_model = false") {
		t.Errorf("several samples: got %v, want a refusal naming samples_model", err)
	}
	if _, serr := os.Stat(c.Output); !os.IsNotExist(serr) {
		t.Errorf("the refused fit left %s behind (%v)", c.Output, serr)
	}
	c.SamplesModel = false
	if _, err := Fit(context.Background(), c, FitOptions{}); err != nil {
		t.Errorf("samples_model = false: %v", err)
	}
}
