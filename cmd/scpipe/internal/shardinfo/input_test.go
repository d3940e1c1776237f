package shardinfo

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/internal/rundir"
	"scpipe/shard"
	"scpipe/simulate"
)

// TestInfoOnOtherThanShards: scpipe info given a count matrix, an MTX
// folder, a run directory or any other file says that it wants a shard
// folder and what it was given, instead of failing on manifest.json.
func TestInfoOnOtherThanShards(t *testing.T) {
	dir := t.TempDir()
	tr, err := simulate.New(context.Background(), simulate.Params{Cells: 50, Genes: 30, L: 2, CodeDensity: 0.2, UsageDensity: 0.3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	mtx, sim := filepath.Join(dir, "mtx"), filepath.Join(dir, "sim")
	if err := simulate.WriteMTX(context.Background(), mtx, tr, false); err != nil {
		t.Fatal(err)
	}
	if err := simulate.WriteShards(context.Background(), sim, tr, shard.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	os.Mkdir(run, 0o777)
	os.WriteFile(filepath.Join(run, rundir.ConfigFile), nil, 0o666)
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("gene programs to check"), 0o666)
	cases := []struct {
		path string
		want []string
	}{
		{filepath.Join(mtx, "matrix.mtx.gz"), []string{"is a file, not a shard folder", "Matrix Market count matrix", "scpipe ingest " + filepath.Join(mtx, "matrix.mtx.gz")}},
		{mtx, []string{"not a shard folder", "10x MTX folder", "scpipe ingest " + mtx}},
		{run, []string{"not a shard folder", "run directory"}},
		{sim, []string{"not a shard folder", "holds shards in " + filepath.Join(sim, simulate.ShardsDir)}},
		{notes, []string{"is a file, not a shard folder", `starting "gene programs to"`, "neither HDF5 nor Matrix Market"}},
		{filepath.Join(dir, "nowhere"), []string{filepath.Join(dir, "nowhere") + ": file does not exist"}},
	}
	if data := filepath.Join("..", "..", "..", "..", "..", "shared", "data"); exists(data) {
		h5 := filepath.Join(data, "scanpy-10x", "10x_data", "3.0.0", "filtered_feature_bc_matrix.h5")
		cases = append(cases, struct {
			path string
			want []string
		}{h5, []string{"is a file, not a shard folder", "10x HDF5 count matrix (CellRanger v3 or later)", "scpipe ingest " + h5}})
	}
	for _, tc := range cases {
		err := Print(context.Background(), io.Discard, tc.path, Options{})
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("info %s: %v (want %q)", tc.path, err, w)
			}
		}
		if err != nil && strings.Contains(err.Error(), "not a directory") {
			t.Errorf("info %s: %v", tc.path, err)
		}
	}
	// The shards themselves are summarised.
	if err := Print(context.Background(), io.Discard, filepath.Join(sim, simulate.ShardsDir), Options{}); err != nil {
		t.Errorf("info on shards: %v", err)
	}
}
