package pipeline

import (
	"bytes"
	"context"
	"io"
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
// one set of parameters, estimated once into RUN/Lnn/params.bin (every
// cell's rates and every gene's offset the same in both chains, which
// differ without it); a fit resumed after the file is gone estimates the
// same again and restores its checkpoint; a damaged file is refused with
// its name. fit --mpi shares them too (TestFitMPIMatchesFit).
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
		// A damaged file, its checksum updated as a careless edit would.
		path := rundir.ParamsPath(cfg.Output, 3)
		if err := rundir.WriteChecksummed(path, func(w io.Writer) error { _, err := w.Write([]byte("scpPARAMjunk")); return err }); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(rundir.FitDir(cfg.Output, 3, 2), rundir.TraceFile)); err != nil {
			t.Fatal(err)
		}
		if _, err := Fit(context.Background(), cfg, FitOptions{Resume: true}); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("a damaged %s: %v, want an error naming it", rundir.ParamsFile, err)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
