package bench

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"scpipe/shard"
	"scpipe/simulate"
)

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestPlantedParamsHitDensity(t *testing.T) {
	t.Parallel()
	for _, d := range []float64{0.01, 0.03, defaultDensity, 0.15, 0.2} {
		p, err := plantedParams(Size{100, 100}, d, 1)
		if err != nil {
			t.Fatalf("density %v: %v", d, err)
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("density %v: %v", d, err)
		}
		if got := expectedDensity(p); math.Abs(got-d) > 1e-12 {
			t.Errorf("density %v: expected density of the planted model is %v", d, got)
		}
		if p.FlipOn >= d || p.FlipOff != plantedDropout || p.L != plantedPrograms {
			t.Errorf("density %v: params %+v", d, p)
		}
	}
}

func TestPlantedParamsErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		size    Size
		density float64
	}{
		{Size{100, 100}, 0}, {Size{100, 100}, 1}, {Size{100, 100}, -0.1}, {Size{100, 100}, math.NaN()},
		{Size{100, 100}, 0.95}, // beyond what 10 programs of 3% of the genes can cover
		{Size{0, 100}, 0.07}, {Size{100, 0}, 0.07},
	} {
		if _, err := plantedParams(tt.size, tt.density, 1); !errors.Is(err, errOptions) {
			t.Errorf("PlantedParams(%v, %v) = %v, want errOptions", tt.size, tt.density, err)
		}
	}
}

// TestPlantedDataDensity draws rows of the planted model and checks the
// observed fraction of ones against the target. Its spread comes mostly
// from the programs' random sizes (about 60 genes each here), a few percent
// of the density.
func TestPlantedDataDensity(t *testing.T) {
	t.Parallel()
	p, err := plantedParams(Size{4000, 2000}, defaultDensity, 11)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := simulate.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	row, clean := make([]uint64, tr.Words()), make([]uint64, tr.Words())
	var ones, programs int
	for n := range p.Cells {
		tr.Row(n, row, clean)
		for _, w := range row {
			ones += bits.OnesCount64(w)
		}
		for l := range p.L {
			programs += int(tr.Z[l][n/64] >> (n % 64) & 1)
		}
	}
	got := float64(ones) / float64(p.Cells*p.Genes)
	if math.Abs(got-defaultDensity) > 0.01 {
		t.Errorf("planted data have density %.4f, want %.2f ± 0.01", got, defaultDensity)
	}
	// Single-cell-like: cells use a few programs each, not none or all.
	if per := float64(programs) / float64(p.Cells); per < 1.5 || per > 4 {
		t.Errorf("cells use %.2f programs on average, want a few", per)
	}
}

// TestOpenDatasetTooLarge: a size whose shards the disk cannot hold is
// refused before its truth is drawn (--size 2e13 drew 1.8 billion cells'
// usage for minutes, deaf to Ctrl-C), naming the folder. The disk is told
// to have 1 TB free, whatever the one the test runs on has.
func TestOpenDatasetTooLarge(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	size := Size{2_000_000_000, 1_000_000} // 0.5 PB of shards
	done := make(chan error, 1)
	go func() {
		free := func(string) (int64, bool) { return 1e12, true }
		_, err := openDataset(context.Background(), work, size, defaultDensity, 3, 2, false, free, discard())
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, simulate.ErrNoRoom) || !strings.Contains(err.Error(), work) {
			t.Errorf("%v: %v, want a refusal naming %s", size, err, work)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%v: still drawing after 30 s", size)
	}
}

func TestOpenDatasetCachesAndRepairs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	work := t.TempDir()
	size := Size{150, 70}
	d, err := openDataset(ctx, work, size, defaultDensity, 3, 2, false, nil, discard())
	if err != nil {
		t.Fatal(err)
	}
	ones := d.shards.Manifest().Ones
	if d.cached || d.genSecond <= 0 || ones == 0 {
		t.Errorf("first open: cached %v, generate seconds %v, ones %d", d.cached, d.genSecond, ones)
	}
	d.shards.Close()

	d, err = openDataset(ctx, work, size, defaultDensity, 3, 2, false, nil, discard())
	if err != nil {
		t.Fatal(err)
	}
	if !d.cached || d.shards.Manifest().Ones != ones {
		t.Errorf("second open: cached %v, ones %d, want cached with %d", d.cached, d.shards.Manifest().Ones, ones)
	}
	d.shards.Close()

	// A damaged cache entry is regenerated, to the same data (written
	// through the page cache this time).
	if err := os.Remove(filepath.Join(d.dir, simulate.ShardsDir, shard.ManifestName)); err != nil {
		t.Fatal(err)
	}
	d, err = openDataset(ctx, work, size, defaultDensity, 3, 2, true, nil, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer d.shards.Close()
	if d.cached || d.shards.Manifest().Ones != ones {
		t.Errorf("after damage: cached %v, ones %d, want regenerated with %d", d.cached, d.shards.Manifest().Ones, ones)
	}

	// Another seed or size is another folder.
	if a, b := datasetDir(work, size, defaultDensity, 3), datasetDir(work, size, defaultDensity, 4); a == b {
		t.Errorf("seeds 3 and 4 share the cache folder %s", a)
	}
}
