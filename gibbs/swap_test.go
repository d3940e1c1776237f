package gibbs

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// TestSwapsMatchEnumeration runs chains with swap moves of cells
// (Config.Swaps) or of genes (Config.GeneSwaps) on 3 × 3 problems of three
// codes and compares them with the enumerated posterior, as
// TestPosteriorMatchesEnumeration does for the single flips: under fixed
// rates, with per-code priors (whose logits a swap weighs), missing
// entries and a housekeeping code (which genes may leave and join), and
// under held per-cell and per-gene levels.
func TestSwapsMatchEnumeration(t *testing.T) {
	t.Parallel()
	samples := 150000
	if testing.Short() {
		samples = 50000
	}
	for _, genes := range []bool{false, true} {
		for ci, tc := range moveCases {
			t.Run(fmt.Sprintf("%s, gene swaps %v", tc.name, genes), func(t *testing.T) {
				t.Parallel()
				checkSwaps(t, tc, uint64(ci+11), samples, genes)
			})
		}
	}
}

// checkSwaps runs a chain of tc with cell swaps, or gene swaps, and
// compares it with the enumerated posterior.
func checkSwaps(t *testing.T, tc moveCase, seed uint64, samples int, genes bool) {
	const n, d = 3, 3
	L := len(tc.pz)
	cfg := tc.config(seed)
	cfg.BurnIn, cfg.Samples, cfg.KeepSamples = 1000, samples, true
	cfg.Swaps, cfg.GeneSwaps = !genes, genes
	s, err := NewSampler(context.Background(), tinyData(t, moveX, tc.obs), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ranResult(s.Run(context.Background(), nil), s.Result); err != nil {
		t.Fatal(err)
	}
	entries := tc.entries(cfg, s.chains[0])
	exact := exactPosterior(moveX, tc.obs, L, tc.pz, tc.pu, tc.clamp, entries...)
	mean, se := sampleStats(s, n, d, L, len(exact), entries)
	for _, b := range farFrom(mean, se, exact) {
		t.Error(b)
	}
	if !movesAccepted(t, cfg, tc.obs) {
		t.Error("no swap was accepted in 200 sweeps")
	}
}

// movesAccepted reports whether a chain of cfg (on data moveX with
// observed entries obs) with its swaps ends 200 sweeps elsewhere than the same chain without them: a refused swap
// leaves the state and the flips' draws as they were, so the chains
// differ only once a swap is accepted.
func movesAccepted(t *testing.T, cfg Config, obs [][]bool) bool {
	t.Helper()
	cfg.BurnIn, cfg.Samples, cfg.KeepSamples = 199, 1, false
	var states [2][]uint64
	for k, on := range []bool{true, false} {
		c := cfg
		c.Swaps, c.GeneSwaps = cfg.Swaps && on, cfg.GeneSwaps && on
		s, err := NewSampler(context.Background(), tinyData(t, moveX, obs), c)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		states[k] = append(slices.Clone(s.chains[0].z), s.chains[0].u...)
	}
	return !slices.Equal(states[0], states[1])
}

// moveCase is a 3 × 3 problem of three codes (moveX) on which a move's
// chains are compared with the enumerated posterior.
type moveCase struct {
	name   string
	obs    [][]bool
	noise  Noise
	pz, pu []float64
	clamp  bool // the last code is a housekeeping code
	levels bool // held per-cell and per-gene levels
}

var (
	moveX     = [][]bool{{true, true, false}, {true, false, true}, {false, true, true}}
	moveAll   = [][]bool{{true, true, true}, {true, true, true}, {true, true, true}}
	moveHoles = [][]bool{{true, true, true}, {false, true, true}, {true, true, false}}

	moveCases = []moveCase{
		{"symmetric, per-code priors", moveAll, Symmetric, []float64{0.3, 0.6, 0.45}, []float64{0.55, 0.3, 0.5}, false, false},
		{"dropout, missing", moveHoles, Dropout, []float64{0.5, 0.5, 0.5}, []float64{0.5, 0.5, 0.5}, false, false},
		{"dropout, housekeeping code", moveHoles, Dropout, []float64{0.35, 0.6, 0.5}, []float64{0.6, 0.4, 0.45}, true, false},
		{"held levels, missing", moveHoles, Dropout, []float64{0.4, 0.55, 0.5}, []float64{0.6, 0.35, 0.5}, false, true},
	}
)

// config returns a one-start, one-worker sampler of tc with seed seed:
// fixed rates, or per-cell and per-gene levels held from sweep 40.
func (tc moveCase) config(seed uint64) Config {
	cfg := DefaultConfig()
	cfg.L, cfg.Starts, cfg.Workers, cfg.Seed = len(tc.pz), 1, 1, seed
	cfg.Noise, cfg.Housekeeping = tc.noise, tc.clamp
	cfg.Lambda, cfg.Dropout, cfg.Background = 1.1, 0.45, 0.15
	if tc.levels {
		cfg.CellLevels, cfg.GeneLevels, cfg.HoldFrom = 4, 4, 40
	} else {
		cfg.FixLambda = true
	}
	if tc.clamp {
		cfg.L--
	}
	cfg.PriorZ, cfg.PriorU = FixedPrior(tc.pz...), FixedPrior(tc.pu...)
	return cfg
}

// entries returns the rates of tc's entries under cfg, with chain c's
// held levels.
func (tc moveCase) entries(cfg Config, c *chain) []rates {
	switch {
	case tc.levels:
		return levelEntries(c.rates, c.level, c.geneLevel)
	case tc.noise == Dropout:
		return []rates{{on: 1 - cfg.Dropout, off: cfg.Background}}
	}
	return []rates{symmetricRates(cfg.Lambda)}
}
