package gibbs

import (
	"context"
	"fmt"
	"math"
	"testing"
)

// bruteLogLik returns log p(X_obs | Z, U, θ) of chain c entry by entry,
// each entry at the rates of its cell's and its gene's level.
func bruteLogLik(s *Sampler, c *chain, x, mask *Matrix) float64 {
	t := 0.0
	for i := range s.n {
		a := s.rowCodes(c, i)
		for j := range s.d {
			if mask != nil && !mask.Get(i, j) {
				continue
			}
			covered := false
			for l := range s.l {
				covered = covered || a>>uint(l)&1 != 0 && c.u[j/64*s.l+l]>>uint(j%64)&1 != 0
			}
			var kg uint8
			if c.geneLevel != nil {
				kg = c.geneLevel[s.geneLevelAt(i, j)]
			}
			on, off := c.rates.entryRates(c.level[i], kg)
			p := off
			if covered {
				p = on
			}
			if !x.Get(i, j) {
				p = 1 - p
			}
			t += math.Log(p)
		}
	}
	return t
}

// TestTraceLogLikIsExact requires the reported log-likelihood of every
// sweep with per-gene levels held, and of every sweep before they are
// first set, to be the likelihood the sampler draws from, summed entry by
// entry at the chain's levels and rates, for any segmentation, mask and
// number of workers.
func TestTraceLogLikIsExact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		seg, workers, geneLevels, hold, L int
		masked, housekeeping, swaps       bool
		splitMerge                        int
		samples                           bool
	}{
		{0, 1, 8, 6, 3, false, true, false, 0, false},
		{64, 3, 4, 4, 3, true, false, true, 0, false},
		{128, 2, 2, 1, 3, true, true, true, 0, false},
		// More codes than programs (cells and genes move between codes
		// by swaps, and split–merge moves in the held burn-in sweeps),
		// and genes detected in half the cells (their levels differ);
		// with swaps, also under two samples' gene levels.
		{64, 2, 8, 2, 6, true, true, true, 0, false},
		{64, 2, 8, 2, 6, true, true, true, 0, true},
		{64, 2, 8, 2, 6, true, true, false, 4, false},
	} {
		p := newPlanted(41, 260, 300, 3, 0.3, 0.05)
		if tc.L > 3 {
			r := &testRNG{s: 9}
			for i := range 260 {
				for j := range 40 {
					p.noisy.Set(i, j, p.noisy.Get(i, j) || r.bern(0.5))
				}
			}
		}
		var mask *Matrix
		var m BitMatrix
		if tc.masked {
			mask = randomMatrix(&testRNG{s: 5}, 260, 300, 0.85, 0)
			m = mask
		}
		data, err := NewData(p.noisy, m, tc.seg)
		if err != nil {
			t.Fatal(err)
		}
		for _, kernel := range Kernels() {
			name := fmt.Sprintf("seg %d, %d workers, %d gene levels, hold %d, L %d, masked %v, swaps %v, split-merge %d, samples %v, kernel %s", tc.seg, tc.workers, tc.geneLevels, tc.hold, tc.L, tc.masked, tc.swaps, tc.splitMerge, tc.samples, kernel)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				cfg := DefaultConfig()
				cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers, cfg.Init = tc.L, 8, 4, 1, tc.workers, InitCluster
				cfg.Noise, cfg.CellLevels, cfg.GeneLevels, cfg.Housekeeping, cfg.HoldFrom = Dropout, 8, tc.geneLevels, tc.housekeeping, tc.hold
				cfg.Swaps, cfg.GeneSwaps, cfg.SplitMerge = tc.swaps, tc.swaps, tc.splitMerge
				cfg.Kernel = kernel
				if tc.samples {
					cfg.CellSamples = threeSamples(260)
				}
				s, err := NewSampler(context.Background(), data, cfg)
				if err != nil {
					t.Fatal(err)
				}
				for range s.Sweeps() {
					st, err := s.Step()
					if err != nil {
						t.Fatal(err)
					}
					if st.Sweep+1 >= s.sched.genesFrom && st.Sweep < tc.hold {
						continue // the levels move: the genes' part is left out
					}
					want := bruteLogLik(s, s.chains[0], p.noisy, mask)
					if math.Abs(st.LogLik-want) > 1e-9*math.Abs(want) {
						t.Errorf("sweep %d: LogLik %.6f, entry by entry %.6f", st.Sweep, st.LogLik, want)
					}
				}
			})
		}
	}
}

// TestHeldParametersStay requires the likelihood's parameters to be set
// after each sweep before HoldFrom and never after: the rates, ρ, the
// grids and every cell's and gene's level of the last sweep are those
// left by sweep HoldFrom−1.
func TestHeldParametersStay(t *testing.T) {
	t.Parallel()
	p := newPlanted(7, 300, 250, 3, 0.3, 0.06)
	data, err := NewData(p.noisy, nil, 64)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Init = 3, 10, 10, 1, InitCluster
	cfg.Noise, cfg.CellLevels, cfg.GeneLevels, cfg.Housekeeping, cfg.HoldFrom = Dropout, 8, 8, true, 6
	s, err := NewSampler(context.Background(), data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	type params struct {
		r            rates
		cells, genes string
	}
	snap := func() params {
		c := s.chains[0]
		return params{c.rates, fmt.Sprint(c.level), fmt.Sprint(c.geneLevel)}
	}
	var atHold params
	var moved int
	for sweep := range s.Sweeps() {
		before := snap()
		if _, err := s.Step(); err != nil {
			t.Fatal(err)
		}
		after := snap()
		switch {
		case sweep < cfg.HoldFrom && after != before:
			moved++
		case sweep >= cfg.HoldFrom && after != atHold:
			t.Fatalf("sweep %d changed the held parameters", sweep)
		}
		if sweep == cfg.HoldFrom-1 {
			atHold = after
		}
	}
	if moved < cfg.HoldFrom-1 {
		t.Errorf("the parameters moved in %d of the %d sweeps before the hold", moved, cfg.HoldFrom)
	}
	for _, st := range s.trace[cfg.HoldFrom:] {
		if st.Dropout != s.trace[cfg.HoldFrom-1].Dropout || st.Background != s.trace[cfg.HoldFrom-1].Background {
			t.Errorf("sweep %d reports rates %v, %v after the hold at %v, %v", st.Sweep, st.Dropout, st.Background,
				s.trace[cfg.HoldFrom-1].Dropout, s.trace[cfg.HoldFrom-1].Background)
		}
	}
}

// TestHeldMatchesEnumeration lets a chain estimate its levels and rates
// on a 3 × 3 problem, holds them, and compares the retained states with
// the posterior enumerated under the held parameters: the sampling
// sweeps are an exact MCMC sampler of p(Z, U | X, θ̂).
func TestHeldMatchesEnumeration(t *testing.T) {
	t.Parallel()
	const n, d, L = 3, 3, 2
	xbits := [][]bool{{true, true, false}, {true, false, true}, {false, true, true}}
	obs := [][]bool{{true, true, true}, {false, true, true}, {true, true, false}}
	data := tinyData(t, xbits, obs)
	pz, pu := []float64{0.4, 0.55}, []float64{0.6, 0.35}
	cfg := DefaultConfig()
	cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers, cfg.Seed = L, 1000, 150000, 1, 1, 3
	if testing.Short() {
		cfg.Samples = 50000
	}
	cfg.Noise, cfg.CellLevels, cfg.GeneLevels, cfg.HoldFrom, cfg.KeepSamples = Dropout, 4, 4, 40, true
	cfg.PriorZ, cfg.PriorU = FixedPrior(pz...), FixedPrior(pu...)
	s, err := NewSampler(context.Background(), data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ranResult(s.Run(context.Background(), nil), s.Result); err != nil {
		t.Fatal(err)
	}
	c := s.chains[0]
	entries := levelEntries(c.rates, c.level, c.geneLevel)
	exact := exactPosterior(xbits, obs, L, pz, pu, false, entries...)
	mean, se := sampleStats(s, n, d, L, len(exact), entries)
	for _, b := range farFrom(mean, se, exact) {
		t.Error(b)
	}
}

// TestBurnInSettles checks the rule that extends a burn-in: a window of
// sampling sweeps whose log-likelihood climbs becomes burn-in, up to
// MaxBurnIn; a level one is kept; nothing extends without MaxBurnIn or a
// hold.
func TestBurnInSettles(t *testing.T) {
	t.Parallel()
	climb := func(t, noise float64) float64 { return 10*t + noise }
	flat := func(t, noise float64) float64 { return 100 * noise }
	// A climb that reaches its level at sweep 100, within the first window.
	levels := func(t, noise float64) float64 { return 100*min(t, 100) + 100*noise }
	const samples = 100
	for _, tc := range []struct {
		name                  string
		ll                    func(t, noise float64) float64
		burnIn, hold, maxBurn int
		want                  int
	}{
		{"climbing, to the cap", climb, 20, 10, 220, 220},
		{"climbing, the cap between windows", climb, 20, 10, 200, 120},
		{"level", flat, 20, 10, 400, 20},
		{"climbing, then level", levels, 20, 10, 400, 120},
		{"climbing, no MaxBurnIn", climb, 20, 10, 0, 20},
		{"climbing, no hold", climb, 20, 0, 200, 20},
	} {
		cfg := newSchedule(config{Config: Config{BurnIn: tc.burnIn, HoldFrom: tc.hold, MaxBurnIn: tc.maxBurn}})
		r := &testRNG{s: 3}
		var trace []SweepStats
		b := tc.burnIn
		for t := 0; t < b+samples; t++ {
			trace = append(trace, SweepStats{Sweep: t, LogLik: tc.ll(float64(t), r.float())})
			b = cfg.burnInAfter(b, samples, trace)
		}
		if b != tc.want {
			t.Errorf("%s: burn-in %d, want %d", tc.name, b, tc.want)
		}
	}
}

// TestTrendRho checks the Spearman correlation with the index.
func TestTrendRho(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v    []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, 1},
		{[]float64{4, 3, 2, 1}, -1},
		{[]float64{5, 5, 5}, 0},
		{[]float64{1, 3, 2, 4}, 0.8},
		{[]float64{1, 2, 2, 3}, 3 / math.Sqrt(10)}, // ties take their mean rank
	} {
		if got := trendRho(tc.v); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("trendRho(%v) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

// levelEntries returns each entry's rates, cells × genes, under r with
// the cells' and genes' levels: the per-entry rates exactPosterior takes.
func levelEntries(r rates, level, geneLevel []uint8) []rates {
	out := make([]rates, 0, len(level)*len(geneLevel))
	for _, kc := range level {
		for _, kg := range geneLevel {
			on, off := r.entryRates(kc, kg)
			out = append(out, rates{on: on, off: off})
		}
	}
	return out
}
