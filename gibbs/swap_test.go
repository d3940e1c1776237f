package gibbs

import (
	"context"
	"math/bits"
	"testing"
)

// TestSwapsMatchEnumeration runs chains with swap moves on 3 × 3 problems
// of three codes and compares them with the enumerated posterior, as
// TestPosteriorMatchesEnumeration does for the single flips: under fixed
// rates, with per-code priors (whose logits a swap weighs), missing
// entries and a housekeeping code, and under held per-cell and per-gene
// levels.
func TestSwapsMatchEnumeration(t *testing.T) {
	t.Parallel()
	const n, d = 3, 3
	xbits := [][]bool{{true, true, false}, {true, false, true}, {false, true, true}}
	all := [][]bool{{true, true, true}, {true, true, true}, {true, true, true}}
	holes := [][]bool{{true, true, true}, {false, true, true}, {true, true, false}}
	cases := []struct {
		name   string
		obs    [][]bool
		noise  Noise
		pz, pu []float64
		clamp  bool // the last code is a housekeeping code
		levels bool // held per-cell and per-gene levels
	}{
		{"symmetric, per-code priors", all, Symmetric, []float64{0.3, 0.6, 0.45}, []float64{0.55, 0.3, 0.5}, false, false},
		{"dropout, missing", holes, Dropout, []float64{0.5, 0.5, 0.5}, []float64{0.5, 0.5, 0.5}, false, false},
		{"dropout, housekeeping code", holes, Dropout, []float64{0.35, 0.6, 0.5}, []float64{0.6, 0.4, 0.45}, true, false},
		{"held levels, missing", holes, Dropout, []float64{0.4, 0.55, 0.5}, []float64{0.6, 0.35, 0.5}, false, true},
	}
	samples := 150000
	if testing.Short() {
		samples = 50000
	}
	for ci, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			L := len(tc.pz)
			cfg := DefaultConfig()
			cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers = L, 1000, samples, 1, 1
			cfg.Seed, cfg.Swaps, cfg.KeepSamples = uint64(ci+11), true, true
			cfg.Noise, cfg.Housekeeping = tc.noise, tc.clamp
			cfg.Lambda, cfg.Dropout, cfg.Background = 1.1, 0.45, 0.15
			if tc.levels {
				cfg.CellLevels, cfg.GeneLevels, cfg.HoldFrom = 4, 4, 40
			} else {
				cfg.FixLambda = true
			}
			if tc.clamp {
				cfg.L = L - 1
			}
			cfg.PriorZ, cfg.PriorU = FixedPrior(tc.pz...), FixedPrior(tc.pu...)
			s, err := NewSampler(context.Background(), tinyData(t, xbits, tc.obs), cfg)
			if err != nil {
				t.Fatal(err)
			}
			swapped := int64(0)
			for s.Sweep() < s.Sweeps() {
				before := append([]uint64(nil), s.chains[0].z...)
				if _, err := s.Step(); err != nil {
					t.Fatal(err)
				}
				swapped += int64(countMoves(before, s.chains[0].z))
			}
			c := s.chains[0]
			entries := []rates{symmetricRates(cfg.Lambda)}
			switch {
			case tc.levels:
				entries = levelEntries(c.rates, c.level, c.geneLevel)
			case tc.noise == Dropout:
				entries = []rates{{on: 1 - cfg.Dropout, off: cfg.Background}}
			}
			exact := exactPosterior(xbits, tc.obs, L, tc.pz, tc.pu, tc.clamp, entries...)
			mean, se := sampleStats(s, n, d, L, len(exact), entries)
			for _, b := range farFrom(mean, se, exact) {
				t.Error(b)
			}
			if swapped == 0 {
				t.Error("no cell changed codes in one sweep")
			}
		})
	}
}

// countMoves returns how many cells' codes differ between two states.
func countMoves(a, b []uint64) int {
	var diff uint64
	for i := range a {
		diff |= a[i] ^ b[i]
	}
	return bits.OnesCount64(diff)
}
