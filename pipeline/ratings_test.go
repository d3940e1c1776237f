package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"scpipe/ingest"
	"scpipe/internal/rundir"
	"scpipe/shard"
)

// TestRatingsFitSeesOnlyRatedEntries runs ratings → ingest → Fit with
// entries held out, and checks that the fit's observed-entry mask holds
// rated entries only: an unrated entry is never data, neither for the fit
// nor for scoring. The ratings have a planted taste structure (two groups
// of users liking two groups of items), so the held-out accuracy must
// also beat chance clearly.
func TestRatingsFitSeesOnlyRatedEntries(t *testing.T) {
	dir := t.TempDir()
	const users, items = 120, 60
	rng := rand.New(rand.NewPCG(5, 5))
	var b bytes.Buffer
	rated := 0
	for u := range users {
		for i := range items {
			if rng.Float64() > 0.3 {
				continue
			}
			r := 1 + rng.IntN(3) // 1..3: a dislike
			if u%2 == i%2 || (u%3 == 0 && i%3 == 0) {
				r = 4 + rng.IntN(2) // 4..5: a like
			}
			if rng.Float64() < 0.05 {
				r = 1 + rng.IntN(5)
			}
			fmt.Fprintf(&b, "%d\t%d\t%d\t%d\n", u+1, i+1, r, 880000000+u*items+i)
			rated++
		}
	}
	data := filepath.Join(dir, "u.data")
	if err := os.WriteFile(data, b.Bytes(), 0o666); err != nil {
		t.Fatal(err)
	}
	o := ingest.DefaultRatingsOptions()
	o.Input, o.Output = data, filepath.Join(dir, "shards")
	if _, err := ingest.RunRatings(context.Background(), o); err != nil {
		t.Fatal(err)
	}

	cfg := DefaultFitConfig()
	cfg.Shards, cfg.Output = o.Output, filepath.Join(dir, "run")
	cfg.L, cfg.BurnIn, cfg.Samples, cfg.Holdout, cfg.Threads = LSizes{2}, 30, 30, 0.2, 2
	rep, err := Fit(context.Background(), cfg, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}

	src, err := shard.Open(o.Output)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	fm, err := shard.Open(filepath.Join(cfg.Output, rundir.FitMaskDir))
	if err != nil {
		t.Fatal(err)
	}
	defer fm.Close()
	var seen, held int64
	for n := range src.Manifest().Cells {
		obs, fit := src.Mask().Segment(n, 0), fm.X().Segment(n, 0)
		for i := range obs {
			if fit[i]&^obs[i] != 0 {
				t.Fatalf("user %d: the fit sees unrated entries (words %x, rated %x)", n, fit[i], obs[i])
			}
			seen += int64(bits.OnesCount64(fit[i]))
			held += int64(bits.OnesCount64(obs[i] &^ fit[i]))
		}
	}
	if seen+held != int64(rated) || held != rep.HeldOut || held == 0 {
		t.Errorf("the fit sees %d and holds out %d (reported %d) of %d ratings", seen, held, rep.HeldOut, rated)
	}
	if acc := rep.Summary[0].HeldoutAccuracy; !(acc > 0.75) {
		t.Errorf("held-out accuracy %.3f on planted tastes: want above 0.75", acc)
	}
}
