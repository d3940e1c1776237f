package gibbs

import (
	"context"
	"fmt"
	"math"
	"testing"
)

// TestDropoutUpdateIsMaximumLikelihood checks the Dropout rate update
// against a grid search of the log-likelihood over both rates, and its
// guards: no signal gives equal rates, empty classes keep their rate.
func TestDropoutUpdateIsMaximumLikelihood(t *testing.T) {
	t.Parallel()
	old := rates{on: 0.6, off: 0.05}
	for _, tc := range []tally{
		{observed: 1000, ones: 90, covered: 120, miss: 70},
		{observed: 5000, ones: 400, covered: 300, miss: 260},
		{observed: 200, ones: 150, covered: 180, miss: 40},
	} {
		got := Dropout.update(tc, old, false)
		best, bestLL := rates{}, math.Inf(-1)
		for on := 0.001; on < 1; on += 0.001 {
			for off := 0.001; off < on; off += 0.001 {
				if ll := Dropout.logLik(tc, rates{on: on, off: off}); ll > bestLL {
					best, bestLL = rates{on: on, off: off}, ll
				}
			}
		}
		if math.Abs(got.on-best.on) > 0.0015 || math.Abs(got.off-best.off) > 0.0015 {
			t.Errorf("%+v: update %+v, grid maximum %+v", tc, got, best)
		}
		if ll := Dropout.logLik(tc, got); ll < bestLL-1e-9 {
			t.Errorf("%+v: log-likelihood %v at the update, %v at the grid maximum", tc, ll, bestLL)
		}
	}
	// Covering picks out fewer ones than chance: no signal.
	if r := Dropout.update(tally{observed: 1000, ones: 100, covered: 500, miss: 500}, old, false); r.on != r.off || r.on != 0.1 {
		t.Errorf("no signal: %+v, want both rates 0.1", r)
	}
	// Nothing covered: P(1 | covered) is unknown and keeps its value.
	if r := Dropout.update(tally{observed: 1000, ones: 100, covered: 0, miss: 100}, old, false); r.on != old.on || r.off != 0.1 {
		t.Errorf("nothing covered: %+v, want on %v and off 0.1", r, old.on)
	}
	// Every covered entry a one: the rate stays half an entry from 1.
	if r := Dropout.update(tally{observed: 1000, ones: 100, covered: 100, miss: 0}, old, false); !(r.on < 1 && r.on == 99.5/100) || r.off != 0.5/900 {
		t.Errorf("no errors: %+v", r)
	}
	if r := Dropout.update(tally{observed: 1000, ones: 90, covered: 120, miss: 70}, old, true); r != old {
		t.Errorf("fixed: %+v, want %+v", r, old)
	}
}

// TestSymmetricRatesAreTheDropoutSpecialCase checks that the Dropout
// log-likelihood with α = β = σ(−λ) is the paper's.
func TestSymmetricRatesAreTheDropoutSpecialCase(t *testing.T) {
	t.Parallel()
	tc := tally{observed: 1000, ones: 90, covered: 120, miss: 70}
	for _, lambda := range []float64{0.1, 1, 2.5} {
		r := symmetricRates(lambda)
		if a, b := Symmetric.logLik(tc, r), Dropout.logLik(tc, r); math.Abs(a-b) > 1e-9*math.Abs(a) {
			t.Errorf("λ = %v: symmetric %v, dropout %v", lambda, a, b)
		}
	}
}

// TestDropoutBeatsSymmetricOnSparseData plants single-cell-like programs,
// detected in only part of the cells that use them over a background of
// rare ones, and requires the Dropout likelihood to recover every program
// (Jaccard ≥ 0.9) where a single symmetric rate cannot.
func TestDropoutBeatsSymmetricOnSparseData(t *testing.T) {
	t.Parallel()
	const n, d, L = 1200, 400, 4
	p := newPlanted(21, n, d, L, 0.1, 0.08)
	// Detection of 35% inside a program, 2% background.
	r := &testRNG{s: 22}
	x := NewMatrix(n, d)
	for i := range n {
		for j := range d {
			on := p.clean.Get(i, j)
			x.Set(i, j, on && r.bern(0.35) || !on && r.bern(0.02))
		}
	}
	data, err := NewData(x, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	recovered := map[Noise]float64{}
	for _, noise := range []Noise{Symmetric, Dropout} {
		cfg := DefaultConfig()
		cfg.L, cfg.BurnIn, cfg.Samples, cfg.Init, cfg.Noise = L, 60, 40, InitData, noise
		_, res := runAll(t, data, cfg)
		recovered[noise] = p.worstJaccard(res)
		t.Logf("%v: worst Jaccard %.3f, dropout %.3f, background %.3f", noise, recovered[noise], res.Dropout, res.Background)
	}
	if recovered[Dropout] < 0.9 {
		t.Errorf("Dropout: worst planted program recovered with Jaccard %.3f, want ≥ 0.9", recovered[Dropout])
	}
	if recovered[Symmetric] >= 0.9 {
		t.Errorf("Symmetric recovers every program (worst Jaccard %.3f): the test no longer shows what Dropout adds", recovered[Symmetric])
	}
}

// TestDropoutResumeAndWorkers runs the Dropout likelihood through the
// reproducibility guarantees: any worker count and a resumed run give the
// uninterrupted run's result.
func TestDropoutResumeAndWorkers(t *testing.T) {
	t.Parallel()
	p := newPlanted(13, 300, 200, 3, 0.3, 0.05)
	mask := randomMatrix(&testRNG{s: 14}, 300, 200, 0.9, 0)
	data, err := NewData(p.noisy, mask, 64)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.L, cfg.BurnIn, cfg.Samples, cfg.Thin, cfg.Noise = 3, 8, 6, 2, Dropout
	cfg.Starts, cfg.StartSweeps, cfg.KeepSamples, cfg.Workers, cfg.Init = 2, 3, true, 1, InitData
	full, fullRes := runAll(t, data, cfg)
	for _, w := range []int{2, 5} {
		c := cfg
		c.Workers = w
		s, res := runAll(t, data, c)
		sameRun(t, fmt.Sprintf("%d workers", w), full, s, fullRes, res)
	}
	state := stateAfter(t, data, cfg, 5)
	b, res := resumed(t, data, cfg, state)
	sameRun(t, "resumed", full, b, fullRes, res)
	symmetric := cfg
	symmetric.Noise = Symmetric
	s, err := NewSampler(context.Background(), data, symmetric)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.UnmarshalBinary(state); err == nil {
		t.Error("a Dropout state restored into a Symmetric sampler")
	}
}

// TestPriorText checks that priors read from text write back unchanged and
// that bad probabilities are refused.
func TestPriorText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"uniform", "uniform", true}, {"Empirical", "empirical", true}, {"0.05", "0.05", true},
		{"0.1, 0.3", "0.1,0.3", true}, {"auto", "", false}, {"0", "", false}, {"1", "", false}, {"sparse", "", false}, {"0.2,", "", false},
	} {
		var pr Prior
		err := pr.UnmarshalText([]byte(tc.in))
		if (err == nil) != tc.ok {
			t.Errorf("%q: error %v, want ok = %v", tc.in, err, tc.ok)
			continue
		}
		if tc.ok && pr.String() != tc.want {
			t.Errorf("%q: written as %q, want %q", tc.in, pr.String(), tc.want)
		}
	}
}
