package pipeline

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"scpipe/internal/rundir"
	"scpipe/internal/rundir/rundirtest"
	"scpipe/simulate/simtest"
)

// TestShareParams checks FitConfig.ShareParams: the chains of an L hold
// one set of parameters, estimated once into RUN/Lnn/params.bin (logged
// as given, and every cell's rates and every gene's offset the same in
// both chains); a fit resumed after the file is gone estimates the same
// again and restores its checkpoint; a damaged file, or one of another
// run, is refused with its name; without the setting (the default) there
// is no file. fit --mpi shares them too (TestFitMPIMatchesFit).
func TestShareParams(t *testing.T) {
	shards, _ := simtest.Shards(t, smallPlanted)
	for _, share := range []bool{false, true} {
		cfg := smallConfig(shards, filepath.Join(t.TempDir(), "run"))
		cfg.L, cfg.ShareParams, cfg.ConsensusChains = LSizes{3}, share, 0
		var logText bytes.Buffer
		if _, err := Fit(context.Background(), cfg, FitOptions{Log: slog.New(slog.NewTextHandler(&logText, nil))}); err != nil {
			t.Fatal(err)
		}
		_, err := os.Stat(rundir.ParamsPath(cfg.Output, 3))
		if (err == nil) != share {
			t.Errorf("share %v: %s: %v", share, rundir.ParamsFile, err)
		}
		if got := strings.Count(logText.String(), "parameters given"); got != 2*boolInt(share) {
			t.Errorf("share %v: %d fits logged with their parameters given, want %d:\n%s", share, got, 2*boolInt(share), logText.String())
		}
		if !share {
			continue
		}
		codes1, cells1 := rundirtest.Tables(t, rundir.FitDir(cfg.Output, 3, 1))
		codes2, cells2 := rundirtest.Tables(t, rundir.FitDir(cfg.Output, 3, 2))
		if !slices.Equal(cells1.Dropout, cells2.Dropout) || !slices.Equal(cells1.Background, cells2.Background) ||
			!slices.Equal(codes1.GeneLift, codes2.GeneLift) || cells1.Dropout == nil || codes1.GeneLift == nil {
			t.Error("the chains' cell rates or gene offsets differ")
		}
		// Resumed without the file: the same parameters, so the checkpoint
		// of chain 2, whose tables are gone, restores and writes them again.
		before, err := os.ReadFile(filepath.Join(rundir.FitDir(cfg.Output, 3, 2), rundir.CodesFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{rundir.ParamsPath(cfg.Output, 3), filepath.Join(rundir.FitDir(cfg.Output, 3, 2), rundir.TraceFile)} {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := Fit(context.Background(), cfg, FitOptions{Resume: true}); err != nil {
			t.Fatalf("resumed without %s: %v", rundir.ParamsFile, err)
		}
		after, err := os.ReadFile(filepath.Join(rundir.FitDir(cfg.Output, 3, 2), rundir.CodesFile))
		if err != nil || !bytes.Equal(before, after) {
			t.Errorf("resumed without %s: codes.parquet of chain 2 changed (%v)", rundir.ParamsFile, err)
		}
		// The file copied into another run (of another seed), and damaged.
		path := rundir.ParamsPath(cfg.Output, 3)
		good, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		other := cfg
		other.Output, other.Seed = filepath.Join(t.TempDir(), "other"), 2
		if _, err := Fit(context.Background(), other, FitOptions{}); err != nil {
			t.Fatal(err)
		}
		damaged := append([]byte(nil), good...)
		damaged[len(damaged)/2] ^= 1
		for name, tc := range map[string]struct {
			cfg     FitConfig
			content []byte
			want    string
		}{
			"another run's": {other, good, "written for config"},
			"damaged":       {cfg, damaged, "damaged"},
		} {
			p := rundir.ParamsPath(tc.cfg.Output, 3)
			if err := os.WriteFile(p, tc.content, 0o666); err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(rundir.FitDir(tc.cfg.Output, 3, 2), rundir.TraceFile))
			_, err := Fit(context.Background(), tc.cfg, FitOptions{Resume: true})
			if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s %s: %v, want an error naming it and %q", name, rundir.ParamsFile, err, tc.want)
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
