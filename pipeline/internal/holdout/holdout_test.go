package holdout

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"scpipe/shard"
	"scpipe/simulate"

	"scpipe/simulate/simtest"
)

// TestMaskIgnoresWorkers checks that the fit mask, written on several
// goroutines, through the page cache or around it, is the same for any
// number of workers, and that it hides about the held-out fraction.
func TestMaskIgnoresWorkers(t *testing.T) {
	t.Parallel()
	p := simulate.Params{Cells: 12411, Genes: 70, L: 3, CodeDensity: 0.2, UsageDensity: 0.3, FlipOn: 0.01, FlipOff: 0.05, Seed: 5}
	src, _ := simtest.Open(t, p)
	h := Spec{Seed: 9, Frac: 0.05}
	entries := float64(p.Cells * p.Genes)

	var crcs []string
	for _, workers := range []int{1, 3, 8} {
		run := t.TempDir()
		// Through the page cache or around it, the files are the same.
		held, err := WriteMask(context.Background(), run, src, h, shard.CreateOptions{Workers: workers, Cached: workers == 3})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(float64(held)-h.Frac*entries) > 5*math.Sqrt(h.Frac*entries) {
			t.Errorf("workers %d: %d entries held out of %g, want about %g", workers, held, entries, h.Frac*entries)
		}
		fm, err := OpenMask(context.Background(), run, src, workers)
		if err != nil {
			t.Fatal(err)
		}
		if got := fm.Manifest().Ones + held; got != int64(entries) {
			t.Errorf("workers %d: mask ones %d + held %d ≠ %g entries", workers, fm.Manifest().Ones, held, entries)
		}
		crcs = append(crcs, fmt.Sprint(fm.Manifest().Files))
		fm.Close()
	}
	if crcs[0] != crcs[1] || crcs[0] != crcs[2] {
		t.Error("the fit mask depends on the number of workers")
	}
}

// TestMaskBits checks every bit of the fit mask, written on several
// goroutines over shards of several cell blocks, with and without an
// observed mask of their own: observed and not held out, in X and in XT.
func TestMaskBits(t *testing.T) {
	t.Parallel()
	const cells, genes = 300, 70
	for _, masked := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "src")
		w, err := shard.Create(dir, shard.Layout{Cells: cells, Genes: genes, RowsPerBlock: 64, Masked: masked}, shard.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(3, 4))
		for c := range cells {
			for g := range genes {
				if r.Float64() < 0.2 {
					w.Set(c, g)
				}
				if masked && r.Float64() < 0.7 {
					w.SetObserved(c, g)
				}
			}
		}
		if err := w.Commit(context.Background(), shard.Manifest{}); err != nil {
			t.Fatal(err)
		}
		src, err := shard.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		h := Spec{Seed: 2, Frac: 0.1}
		for _, workers := range []int{1, 3} {
			run := t.TempDir()
			if fm, err := OpenMask(context.Background(), run, src, workers); fm != nil || err != nil {
				t.Fatalf("a run without a fit mask: %v, %v; want none and no error", fm, err)
			}
			if _, err := WriteMask(context.Background(), run, src, h, shard.CreateOptions{Workers: workers}); err != nil {
				t.Fatal(err)
			}
			fm, err := OpenMask(context.Background(), run, src, workers)
			if err != nil {
				t.Fatal(err)
			}
			obs, held := make([]uint64, (genes+63)/64), make([]uint64, (genes+63)/64)
			for c := range cells {
				src.ObservedRow(c, obs)
				h.Row(c, genes, obs, held)
				for g := range genes {
					want := obs[g/64]>>(g%64)&1 == 1 && held[g/64]>>(g%64)&1 == 0
					if fm.X().At(c, g) != want || fm.XT().At(g, c) != want {
						t.Fatalf("masked %v, workers %d: fit mask at (%d, %d) is %v in X, %v in XT, want %v", masked, workers, c, g, fm.X().At(c, g), fm.XT().At(g, c), want)
					}
				}
			}
			fm.Close()
		}
		src.Close()
	}
}

// TestPinned pins the entries that earlier versions held out of a few
// cells: a run without a fit mask has them drawn again to score its fits,
// so a change of the generator would score entries the fits had seen.
func TestPinned(t *testing.T) {
	const genes = 256
	observed := make([]uint64, genes/64)
	for i := range observed {
		observed[i] = ^uint64(0)
	}
	dst := make([]uint64, genes/64)
	for _, tc := range []struct {
		cell int
		want []int
	}{
		{0, []int{18, 121, 150, 202, 217, 238, 241, 243}},
		{7, []int{0, 30, 35, 49, 74, 90, 162, 186, 188, 202, 203, 214}},
		{100000, []int{46, 48, 82, 83, 127, 164, 167, 175, 223}},
	} {
		Spec{Seed: 9, Frac: 0.05}.Row(tc.cell, genes, observed, dst)
		var got []int
		for w, x := range dst {
			for ; x != 0; x &= x - 1 {
				got = append(got, w*64+bits.TrailingZeros64(x))
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("cell %d: held out %v, want %v", tc.cell, got, tc.want)
		}
	}
}
