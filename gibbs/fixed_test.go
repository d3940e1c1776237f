package gibbs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

// fixedCodeOf returns code l of a planted U as a FixedCode.
func fixedCodeOf(p *planted, l int) FixedCode {
	f := FixedCode{Code: l}
	for j, row := range p.u {
		if row[l] {
			f.Genes = append(f.Genes, j)
		}
	}
	return f
}

// TestFixedCodesStayFixed runs samplers with some codes fixed (under each
// likelihood and start, with and without missing entries and several
// workers) and checks after every sweep that every chain holds the fixed
// codes bit for bit, that the retained samples and the posterior means of
// those codes are exactly the fixed values, and that the free codes moved.
func TestFixedCodesStayFixed(t *testing.T) {
	t.Parallel()
	p := newPlanted(11, 150, 130, 4, 0.3, 0.02)
	mask := randomMatrix(&testRNG{s: 5}, 150, 130, 0.8, 0)
	cases := []struct {
		name    string
		noise   Noise
		init    Init
		levels  int
		hk      bool
		masked  bool
		workers int
		fixed   []int
	}{
		{"symmetric random", Symmetric, InitRandom, 0, false, false, 1, []int{0, 2}},
		{"symmetric data masked", Symmetric, InitData, 0, false, true, 3, []int{1}},
		{"dropout cluster housekeeping", Dropout, InitCluster, 0, true, false, 2, []int{0}},
		{"dropout levels cluster masked", Dropout, InitCluster, 2, true, true, 2, []int{0, 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var m BitMatrix
			if tc.masked {
				m = mask
			}
			data, err := NewData(p.noisy, m, 0)
			if err != nil {
				t.Fatal(err)
			}
			cfg := DefaultConfig()
			cfg.L, cfg.BurnIn, cfg.Samples, cfg.StartSweeps = 4, 12, 12, 4
			cfg.Noise, cfg.Init, cfg.CellLevels, cfg.Housekeeping, cfg.Workers = tc.noise, tc.init, 1<<tc.levels, tc.hk, tc.workers
			if tc.hk {
				cfg.L-- // and the housekeeping code
			}
			cfg.KeepSamples = true
			for _, l := range tc.fixed {
				cfg.FixedCodes = append(cfg.FixedCodes, fixedCodeOf(p, l))
			}
			s, err := NewSampler(context.Background(), data, cfg)
			if err != nil {
				t.Fatal(err)
			}
			start := slices.Clone(s.chains[0].u)
			check := func(when string) {
				for ci, c := range s.chains {
					for _, f := range cfg.FixedCodes {
						for j := range 130 {
							if got, want := c.u[j/64*4+f.Code]>>uint(j%64)&1 == 1, p.u[j][f.Code]; got != want {
								t.Fatalf("%s, chain %d: u[%d][%d] = %v, fixed at %v", when, ci, j, f.Code, got, want)
							}
						}
					}
				}
			}
			check("start")
			for s.Sweep() < s.Sweeps() {
				if _, err := s.Step(); err != nil {
					t.Fatal(err)
				}
				check(fmt.Sprintf("sweep %d", s.Sweep()))
			}
			for k, ks := range s.kept {
				if !s.holdsFixedCodes(ks.u) {
					t.Errorf("retained sample %d does not hold the fixed codes", k)
				}
			}
			res, err := s.Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range tc.fixed {
				for j := range 130 {
					if want := b2f(p.u[j][l]); res.UMean[j*4+l] != want {
						t.Fatalf("posterior mean of u[%d][%d] = %v, fixed at %v", j, l, res.UMean[j*4+l], want)
					}
				}
			}
			moved := false
			for w, v := range s.chains[0].u {
				l := w % 4
				if s.fixedU>>uint(l)&1 == 0 && v != start[w] {
					moved = true
				}
			}
			if !moved {
				t.Error("no free code changed: the test shows nothing")
			}
		})
	}
}

// TestFixedTruthRecoversUsage fixes every code at the planted U and checks
// that the sampler, now inferring Z alone, recovers the planted usage:
// the MAP of Z agrees with the truth on at least 98% of its entries under
// 5% symmetric noise, and under dropout noise with a housekeeping code
// (whose code is free) on at least 97%.
func TestFixedTruthRecoversUsage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		noise Noise
		hk    bool
		min   float64
	}{
		{"symmetric", Symmetric, false, 0.98},
		{"dropout, housekeeping", Dropout, true, 0.97},
	}
	for ci, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const n, d, L = 300, 200, 5
			p := newPlanted(uint64(40+ci), n, d, L, 0.5, 0.05)
			data, err := NewData(p.noisy, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			cfg := DefaultConfig()
			cfg.L, cfg.BurnIn, cfg.Samples, cfg.Seed = L, 30, 30, uint64(ci+1)
			cfg.Noise, cfg.Housekeeping = tc.noise, tc.hk
			for l := range L {
				cfg.FixedCodes = append(cfg.FixedCodes, fixedCodeOf(p, l))
			}
			_, res := runAll(t, data, cfg)
			agree := 0
			for i := range n {
				for l := range L {
					if res.zMAP(i, l) == p.z[i][l] {
						agree++
					}
				}
			}
			acc := float64(agree) / float64(n*L)
			t.Logf("%s: Z recovered on %.4f of its entries", tc.name, acc)
			if acc < tc.min {
				t.Errorf("%s: MAP of Z agrees with the planted usage on %.4f of its entries, want ≥ %.2f", tc.name, acc, tc.min)
			}
		})
	}
}

// TestFixedCodeMatchesEnumeration compares a long chain with code 0 of U
// fixed against the exact posterior over the states that hold it (3 × 3,
// L = 2, fixed rates), marginals included: the fixed code's own marginals
// are exactly its values, and the free code and Z follow the conditional
// posterior given it. Its power check: the posterior with code 0 free (or
// fixed at other genes) must be told apart.
func TestFixedCodeMatchesEnumeration(t *testing.T) {
	t.Parallel()
	const n, d, L = 3, 3, 2
	xbits := [][]bool{{true, true, false}, {true, true, false}, {false, true, true}}
	holes := [][]bool{{true, true, false}, {false, true, true}, {true, true, true}}
	cases := []struct {
		name   string
		noise  Noise
		fixed  []int // genes of code 0
		wrong  []int // another fixed code 0, whose posterior must differ
		pz, pu []float64
	}{
		{"symmetric", Symmetric, []int{0, 1}, []int{1, 2}, []float64{0.4, 0.5}, []float64{0.5, 0.45}},
		{"dropout", Dropout, []int{1, 2}, []int{0, 1}, []float64{0.5, 0.35}, []float64{0.5, 0.6}},
	}
	samples := 200000
	if testing.Short() {
		samples = 60000
	}
	for ci, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data := tinyData(t, xbits, holes)
			cfg := DefaultConfig()
			cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers = L, 1000, samples, 1, 1
			cfg.Seed = uint64(ci + 21)
			cfg.Lambda, cfg.FixLambda, cfg.KeepSamples = 1.2, true, true
			cfg.Noise, cfg.Dropout, cfg.Background = tc.noise, 0.3, 0.15
			cfg.PriorZ, cfg.PriorU = FixedPrior(tc.pz...), FixedPrior(tc.pu...)
			cfg.FixedCodes = []FixedCode{{Code: 0, Genes: tc.fixed}}
			r := symmetricRates(cfg.Lambda)
			if tc.noise == Dropout {
				r = rates{on: 1 - cfg.Dropout, off: cfg.Background}
			}
			fixMask := func(genes []int) (mask, val uint64) {
				for j := range d {
					mask |= 1 << uint(j*L)
				}
				for _, j := range genes {
					val |= 1 << uint(j*L)
				}
				return mask, val
			}
			m, v := fixMask(tc.fixed)
			exact := exactPosteriorFixed(xbits, holes, L, tc.pz, tc.pu, false, m, v, r)
			s, _ := runAll(t, data, cfg)
			mean, se := sampleStats(s, n, d, L, len(exact), []rates{r})
			for _, b := range farFrom(mean, se, exact) {
				t.Error(b)
			}
			if len(farFrom(mean, se, exactPosterior(xbits, holes, L, tc.pz, tc.pu, false, r))) == 0 {
				t.Error("the tolerance cannot tell the posterior with code 0 fixed from the one with it free")
			}
			wm, wv := fixMask(tc.wrong)
			if len(farFrom(mean, se, exactPosteriorFixed(xbits, holes, L, tc.pz, tc.pu, false, wm, wv, r))) == 0 {
				t.Errorf("the tolerance cannot tell code 0 fixed at genes %v from %v", tc.fixed, tc.wrong)
			}
		})
	}
}

// TestFixedCodesRejected checks that bad fixed codes are refused with
// ErrConfig, and that a state whose fixed codes differ is not restored.
func TestFixedCodesRejected(t *testing.T) {
	t.Parallel()
	p := newPlanted(3, 40, 30, 3, 0.3, 0)
	data, err := NewData(p.noisy, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		hk    bool
		codes []FixedCode
	}{
		{"code past L", false, []FixedCode{{Code: 3}}},
		{"negative code", false, []FixedCode{{Code: -1}}},
		{"code twice", false, []FixedCode{{Code: 1, Genes: []int{0}}, {Code: 1, Genes: []int{2}}}},
		{"housekeeping code", true, []FixedCode{{Code: 3, Genes: []int{0}}}},
		{"gene past D", false, []FixedCode{{Code: 0, Genes: []int{30}}}},
		{"negative gene", false, []FixedCode{{Code: 0, Genes: []int{-1}}}},
	} {
		cfg := DefaultConfig()
		cfg.L, cfg.Housekeeping, cfg.FixedCodes = 3, tc.hk, tc.codes
		if _, err := NewSampler(context.Background(), data, cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: NewSampler error %v, want ErrConfig", tc.name, err)
		}
	}
	cfg := DefaultConfig()
	cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts = 3, 2, 2, 1
	cfg.FixedCodes = []FixedCode{fixedCodeOf(p, 0)}
	state := stateAfter(t, data, cfg, 1)
	cfg.FixedCodes = []FixedCode{fixedCodeOf(p, 1)}
	b, err := NewSampler(context.Background(), data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.UnmarshalBinary(state); !errors.Is(err, errState) {
		t.Errorf("restoring a state with other fixed codes: %v, want errState", err)
	}
}
