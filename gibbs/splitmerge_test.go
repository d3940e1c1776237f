package gibbs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"scpipe/internal/splitmix"
)

// TestSplitMergeMatchesEnumeration checks that split–merge moves leave
// the posterior invariant, on 3 × 3 problems of three codes: under fixed
// rates with per-code priors, with missing entries and a housekeeping
// code, and under per-cell and per-gene levels held after the sampler's
// burn-in. The chain alternates one single-bit Metropolis flip, made by
// the test from the enumerated log-posterior (so that the chain reaches
// every state), with two split–merge proposals: the moves carry most of
// its changes of partition, and a move that did not leave the posterior
// invariant would move the estimates (TestSplitMergeTestHasPower). Its
// averages are compared with the enumerated posterior's, and splits,
// merges and re-splits must each have been accepted.
func TestSplitMergeMatchesEnumeration(t *testing.T) {
	t.Parallel()
	for ci, tc := range moveCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, b := range checkSplitMerge(t, ci, tc, smLaunchScans, false) {
				t.Error(b)
			}
		})
	}
	// With three cells a launch forgets its start in a scan or two, so a
	// launch that read the state it should not would pass above: without
	// launch scans it shows.
	t.Run("dropout, missing, no launch scans", func(t *testing.T) {
		t.Parallel()
		for _, b := range checkSplitMerge(t, 7, moveCases[1], 0, false) {
			t.Error(b)
		}
	})
}

// TestSplitMergeTestHasPower runs TestSplitMergeMatchesEnumeration's
// check with half of the accepted splits undone, a move whose splits are
// accepted half as often as they should be (as one that left out the
// reverse's choice of move would be, the other way), and asks that it
// fail.
func TestSplitMergeTestHasPower(t *testing.T) {
	t.Parallel()
	if bad := checkSplitMerge(t, 1, moveCases[1], smLaunchScans, true); len(bad) == 0 {
		t.Error("a split–merge move whose splits are accepted half as often as they should be passed the enumeration check")
	}
}

// checkSplitMerge runs TestSplitMergeMatchesEnumeration's chain for case
// tc (seeded by ci) and returns the statistics far from the exact
// posterior's, and a complaint if a kind of move was never accepted.
// The launch takes scans restricted scans; with halveSplits, half of the
// accepted splits are undone.
func checkSplitMerge(t *testing.T, ci int, tc moveCase, scans int, halveSplits bool) []string {
	const n, d = 3, 3
	L := len(tc.pz)
	cfg := tc.config(uint64(ci + 21))
	cfg.BurnIn, cfg.Samples, cfg.SplitMerge = 60, 1, 2
	s, err := NewSampler(context.Background(), tinyData(t, moveX, tc.obs), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.smScans = scans
	for s.Sweep() < cfg.BurnIn {
		if _, err := s.Step(); err != nil {
			t.Fatal(err)
		}
	}
	c := s.chains[0]
	entries := tc.entries(cfg, c)
	var clamped uint64
	if tc.clamp {
		for i := range n {
			clamped |= 1 << uint(i*L+L-1)
		}
	}
	exact := exactPosterior(moveX, tc.obs, L, tc.pz, tc.pu, tc.clamp, entries...)
	pack := func() (z, u uint64) {
		for l := range L {
			for i := range n {
				z |= (c.z[l] >> uint(i) & 1) << uint(i*L+l)
			}
			for j := range d {
				u |= (c.u[l] >> uint(j) & 1) << uint(j*L+l)
			}
		}
		return z, u
	}
	flip := func(words []uint64, bit, L int) { words[bit%L] ^= 1 << uint(bit/L) }
	iters := 200000
	if testing.Short() {
		iters = 80000
	}
	const batches = 50
	sum := make([][]float64, batches)
	for b := range sum {
		sum[b] = make([]float64, len(exact))
	}
	free := s.freeCodes()
	r := &testRNG{s: uint64(ci + 1)}
	var splits, merges, resplits int
	for it := range iters {
		// A single-bit Metropolis flip: any bit of U, or of Z but the
		// clamped.
		z, u := pack()
		k := r.intn((n + d) * L)
		z2, u2 := z, u
		if k < n*L {
			z2 ^= 1 << uint(k)
		} else {
			u2 ^= 1 << uint(k-n*L)
		}
		if z2&clamped == clamped {
			delta := tinyLogPost(moveX, tc.obs, L, tc.pz, tc.pu, clamped, z2, u2, entries...) -
				tinyLogPost(moveX, tc.obs, L, tc.pz, tc.pu, clamped, z, u, entries...)
			if delta >= 0 || r.float() < math.Exp(delta) {
				if k < n*L {
					flip(c.z, k, L)
				} else {
					flip(c.u, k-n*L, L)
				}
			}
		}
		for q := range 2 {
			key := splitmix.At(uint64(ci+1)<<56, uint64(2*it+q))
			l, m := codePair(free, key)
			split := liveCodes(c.z, s.l)>>uint(m)&1 == 0
			before := [2][]uint64{slices.Clone(c.z), slices.Clone(c.u)}
			if s.proposeSplitMerge(c, key, l, m) {
				switch {
				case split && halveSplits && r.float() < 0.5:
					copy(c.z, before[0])
					copy(c.u, before[1])
				case split:
					splits++
				case liveCodes(c.z, s.l)>>uint(m)&1 == 0:
					merges++
				default:
					resplits++
				}
			}
		}
		z, u = pack()
		for i, v := range tinyStats(z, u, n, d, L, entries...)[:len(exact)] {
			sum[it*batches/iters][i] += v
		}
	}
	mean, se := make([]float64, len(exact)), make([]float64, len(exact))
	per := float64(iters / batches)
	for i := range exact {
		for b := range batches {
			mean[i] += sum[b][i] / per / batches
		}
		v := 0.0
		for b := range batches {
			dv := sum[b][i]/per - mean[i]
			v += dv * dv / (batches - 1)
		}
		// An event the chain never met has a batch error of 0; the
		// binomial error under the exact value bounds it below.
		se[i] = max(math.Sqrt(v/batches), math.Sqrt(exact[i]*(1-exact[i])/float64(iters)))
	}
	bad := farFrom(mean, se, exact)
	if min(splits, merges, resplits) < iters/100 {
		bad = append(bad, fmt.Sprintf("%d splits, %d merges and %d re-splits accepted in %d proposals: too few to test the move", splits, merges, resplits, 2*iters))
	}
	return bad
}

// TestSplitMergeSameForAnyWorkers runs fits with split–merge moves and
// asks for the same states on 1 and 3 workers (with genes enough for the
// moves' blocks to split), and for X and XT stored whole or in segments
// of 64 under a mask: the moves' draws are keyed by variable and their
// sums taken in order.
func TestSplitMergeSameForAnyWorkers(t *testing.T) {
	t.Parallel()
	fit := func(data Data, workers int) []uint64 {
		cfg := DefaultConfig()
		cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers, cfg.SplitMerge = 5, 12, 6, 1, workers, 3
		cfg.Noise, cfg.CellLevels, cfg.GeneLevels, cfg.HoldFrom, cfg.Housekeeping = Dropout, 4, 4, 6, true
		s, err := NewSampler(context.Background(), data, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		return append(slices.Clone(s.chains[0].z), s.chains[0].u...)
	}
	wide := sparsePlanted(8, 150, 9000, 4, 0.08, 0.02)
	if !slices.Equal(fit(wide, 1), fit(wide, 3)) {
		t.Error("1 and 3 workers reached different states")
	}
	p := newPlanted(9, 450, 300, 4, 0.5, 0.1)
	mask := randomMatrix(&testRNG{s: 10}, 450, 300, 0.8, 0)
	var states [][]uint64
	for _, seg := range []int{0, 64} {
		data := segmentedCopy(t, p.noisy, mask, 450, 300, seg)
		states = append(states, fit(data, 2))
	}
	if !slices.Equal(states[0], states[1]) {
		t.Error("segments of 64 reached another state than whole rows")
	}
}

// TestSplitMergeRefused checks the configurations the move does not
// serve.
func TestSplitMergeRefused(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.SplitMerge = -1
	if err := cfg.Validate(); !errors.Is(err, ErrConfig) {
		t.Errorf("SplitMerge = -1: got %v, want a configuration error", err)
	}
	cfg.SplitMerge = maxSplitMerge + 1
	if err := cfg.Validate(); !errors.Is(err, ErrConfig) {
		t.Errorf("SplitMerge = %d: got %v, want a configuration error", cfg.SplitMerge, err)
	}
}

// BenchmarkSplitMerge times one split–merge proposal against one sweep on
// data of the islets' shape (800 cells × 14,000 genes, L = 9 and a
// housekeeping code, held per-cell and per-gene levels): the move's cost
// as a share of the sweep's.
func BenchmarkSplitMerge(b *testing.B) {
	data := sparsePlanted(3, 800, 14000, 9, 0.08, 0.02)
	cfg := DefaultConfig()
	cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers = 9, 20, 1, 1, 1
	cfg.Noise, cfg.CellLevels, cfg.GeneLevels, cfg.HoldFrom, cfg.Housekeeping = Dropout, 8, 8, 10, true
	s, err := NewSampler(context.Background(), data, cfg)
	if err != nil {
		b.Fatal(err)
	}
	for range 20 {
		if _, err := s.Step(); err != nil {
			b.Fatal(err)
		}
	}
	c := s.chains[0]
	b.Run("sweep", func(b *testing.B) {
		for i := range b.N {
			s.sweepChain(c, 20+i)
		}
	})
	b.Run("proposal", func(b *testing.B) {
		free := s.freeCodes()
		for i := range b.N {
			key := splitmix.At(99, uint64(i))
			l, m := codePair(free, key)
			s.proposeSplitMerge(c, key, l, m)
		}
	})
}
