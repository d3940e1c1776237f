package gibbs

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestGivenParamsMatchEnumeration holds a chain's parameters (an
// empirical-Bayes burn-in), hands them through their encoding to a chain
// of another seed (Config.Params), and compares that chain's retained
// states with the posterior enumerated under them: it samples
// p(Z, U | X, θ̂) from its first sweep and never moves θ̂. Its state
// restores only into a sampler given the same parameters.
func TestGivenParamsMatchEnumeration(t *testing.T) {
	t.Parallel()
	const n, d, L = 3, 3, 2
	xbits := [][]bool{{true, true, false}, {true, false, true}, {false, true, true}}
	obs := [][]bool{{true, true, true}, {false, true, true}, {true, true, false}}
	data := tinyData(t, xbits, obs)
	pz, pu := []float64{0.4, 0.55}, []float64{0.6, 0.35}
	cfg := DefaultConfig()
	cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers, cfg.Seed = L, 40, 1, 1, 1, 3
	cfg.Noise, cfg.CellLevels, cfg.GeneLevels, cfg.HoldFrom = Dropout, 4, 4, 40
	cfg.PriorZ, cfg.PriorU = FixedPrior(pz...), FixedPrior(pu...)
	est, err := NewSampler(context.Background(), data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := est.HeldParams(); err == nil {
		t.Error("HeldParams before the hold: no error")
	}
	if err := est.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	held, err := est.HeldParams()
	if err != nil {
		t.Fatal(err)
	}
	p, err := UnmarshalParams(held.MarshalBinary())
	if err != nil {
		t.Fatal(err)
	}
	if p.rates != held.rates || !slices.Equal(p.level, held.level) || !slices.Equal(p.geneLevel, held.geneLevel) || p.Digest() != held.Digest() {
		t.Fatalf("decoded %+v, encoded %+v", p, held)
	}

	cfg.Seed, cfg.HoldFrom, cfg.Params, cfg.BurnIn, cfg.Samples, cfg.KeepSamples = 9, 0, p, 1000, 150000, true
	if testing.Short() {
		cfg.Samples = 50000
	}
	s, err := NewSampler(context.Background(), data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ranResult(s.Run(context.Background(), nil), s.Result); err != nil {
		t.Fatal(err)
	}
	c := s.chains[0]
	if c.rates != p.rates || !slices.Equal(c.level, p.level) || !slices.Equal(c.geneLevel, p.geneLevel) {
		t.Fatalf("the chain's parameters moved: %+v %v %v, given %+v %v %v", c.rates, c.level, c.geneLevel, p.rates, p.level, p.geneLevel)
	}
	entries := levelEntries(p.rates, p.level, p.geneLevel)
	exact := exactPosterior(xbits, obs, L, pz, pu, false, entries...)
	mean, se := sampleStats(s, n, d, L, len(exact), entries)
	for _, b := range farFrom(mean, se, exact) {
		t.Error(b)
	}

	state, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	other := *p
	other.rates.rho += 0.01
	for name, tc := range map[string]struct {
		params *Params
		hold   int
		ok     bool
	}{
		"the same parameters":  {p, 0, true},
		"other parameters":     {&other, 0, false},
		"parameters estimated": {nil, 40, false},
	} {
		rc := cfg
		rc.Params, rc.HoldFrom = tc.params, tc.hold
		r, err := NewSampler(context.Background(), data, rc)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.UnmarshalBinary(state); (err == nil) != tc.ok {
			t.Errorf("restored into a sampler with %s: %v, want ok %v", name, err, tc.ok)
		}
	}
}

// TestParamsRefused checks the settings and encodings that Params refuses.
func TestParamsRefused(t *testing.T) {
	t.Parallel()
	xbits := [][]bool{{true, true, false}, {true, false, true}, {false, true, true}}
	all := [][]bool{{true, true, true}, {true, true, true}, {true, true, true}}
	data := tinyData(t, xbits, all)
	p := &Params{rates: rates{rho: 0.5, lift0: 1, step: 0.2}, level: []uint8{0, 1, 2}, geneLevel: []uint8{1, 1, 0}}
	for name, set := range map[string]func(*Config){
		"symmetric noise":    func(c *Config) { c.Noise = Symmetric },
		"no cell levels":     func(c *Config) { c.CellLevels, c.GeneLevels = 1, 1 },
		"a hold":             func(c *Config) { c.HoldFrom = 2 },
		"FixLambda":          func(c *Config) { c.FixLambda = true },
		"too few cells":      func(c *Config) { c.Params = &Params{rates: p.rates, level: p.level[:2], geneLevel: p.geneLevel} },
		"no gene levels":     func(c *Config) { c.Params = &Params{rates: p.rates, level: p.level} },
		"a level past the 4": func(c *Config) { c.Params = &Params{rates: p.rates, level: []uint8{0, 4, 1}, geneLevel: p.geneLevel} },
	} {
		cfg := DefaultConfig()
		cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts = 1, 4, 2, 1
		cfg.Noise, cfg.CellLevels, cfg.GeneLevels, cfg.Params = Dropout, 4, 4, p
		set(&cfg)
		if _, err := NewSampler(context.Background(), data, cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
	b := p.MarshalBinary()
	for name, in := range map[string][]byte{
		"empty":     nil,
		"magic":     append([]byte("scpGIBBS"), b[8:]...),
		"truncated": b[:len(b)-1],
		"trailing":  append(append([]byte(nil), b...), 0),
	} {
		if _, err := UnmarshalParams(in); !errors.Is(err, errState) {
			t.Errorf("%s: %v, want errState", name, err)
		}
	}
}

// TestGivenParamsSettle checks that the burn-in of a chain given its
// parameters runs on by windows while its log-likelihood climbs, as under
// a hold (settle.go).
func TestGivenParamsSettle(t *testing.T) {
	t.Parallel()
	const samples = 100
	sc := newSchedule(config{Config: Config{BurnIn: 20, MaxBurnIn: 220, Params: &Params{}}})
	var trace []SweepStats
	b := 20
	for t := 0; t < b+samples; t++ {
		trace = append(trace, SweepStats{Sweep: t, LogLik: 10 * float64(t)})
		b = sc.burnInAfter(b, samples, trace)
	}
	if b != 220 {
		t.Errorf("climbing with parameters given: burn-in %d, want 220", b)
	}
}
