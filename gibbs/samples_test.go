package gibbs

import (
	"encoding/binary"
	"errors"
	"testing"
)

// TestSamplesRoundTrip checks that the retained states, encoded by
// MarshalSamples and decoded in another value, predict what the Result
// predicts (SampleMean), bit for bit, under each likelihood; and that
// Coverage is the fraction of states in which a code covers the entry.
func TestSamplesRoundTrip(t *testing.T) {
	t.Parallel()
	p := newPlanted(5, 70, 90, 3, 0.3, 0.05)
	data, err := NewData(p.noisy, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		setup func(*Config)
	}{
		{"symmetric", func(c *Config) { c.Noise = Symmetric }},
		{"dropout", func(c *Config) { c.Noise = Dropout }},
		{"cell and gene levels, housekeeping", func(c *Config) {
			c.Noise, c.CellLevels, c.GeneLevels, c.Housekeeping, c.L = Dropout, 4, 4, true, 3
		}},
		{"samples' gene levels", func(c *Config) {
			c.Noise, c.CellLevels, c.GeneLevels, c.HoldFrom = Dropout, 4, 4, 3
			c.CellSamples = make([]uint16, 70)
			for n := 25; n < 70; n++ {
				c.CellSamples[n] = 1 + uint16(n/50) // three samples: 25, 25 and 20 cells
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.L, cfg.BurnIn, cfg.Samples, cfg.Thin, cfg.Starts, cfg.Workers, cfg.KeepSamples = 3, 6, 12, 2, 1, 1, true
			tc.setup(&cfg)
			_, res := runAll(t, data, cfg)
			b, err := res.MarshalSamples()
			if err != nil {
				t.Fatal(err)
			}
			got, err := UnmarshalSamples(b)
			if err != nil {
				t.Fatal(err)
			}
			if n, d, L := got.Shape(); n != res.N || d != res.D || L != res.L || got.Count() != 6 {
				t.Fatalf("decoded %d × %d, L = %d, %d samples; want %d × %d, L = %d, 6", n, d, L, got.Count(), res.N, res.D, res.L)
			}
			for n := range res.N {
				for d := range res.D {
					want, err := res.Predict(n, d, SampleMean)
					if err != nil {
						t.Fatal(err)
					}
					if p := got.Predict(n, d); p != want {
						t.Fatalf("entry (%d, %d): decoded samples predict %v, the result %v", n, d, p, want)
					}
					hits := 0
					for _, k := range res.kept {
						for l := range res.L {
							if k.z[n/64*res.L+l]>>(n%64)&(k.u[d/64*res.L+l]>>(d%64))&1 != 0 {
								hits++
								break
							}
						}
					}
					if c := got.Coverage(n, d); c != float64(hits)/6 {
						t.Fatalf("entry (%d, %d): coverage %v, want %d of 6", n, d, c, hits)
					}
				}
			}
		})
	}
}

// TestSamplesRefused checks the errors of MarshalSamples without kept
// states and of UnmarshalSamples on damaged input.
func TestSamplesRefused(t *testing.T) {
	t.Parallel()
	p := newPlanted(6, 20, 30, 2, 0.3, 0.05)
	data, err := NewData(p.noisy, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers = 2, 2, 2, 1, 1
	run := func(keep bool) *Result {
		cfg.KeepSamples = keep
		_, res := runAll(t, data, cfg)
		return res
	}
	if _, err := run(false).MarshalSamples(); !errors.Is(err, errNoSamples) {
		t.Errorf("MarshalSamples without KeepSamples: %v, want errNoSamples", err)
	}
	b, err := run(true).MarshalSamples()
	if err != nil {
		t.Fatal(err)
	}
	// header returns b with header word i (0: the version) set to v.
	header := func(i int, v uint64) []byte {
		h := append([]byte(nil), b...)
		binary.LittleEndian.PutUint64(h[len(samplesMagic)+8*i:], v)
		return h
	}
	flipped := append([]byte(nil), b...)
	flipped[len(flipped)-1] |= 0x80 // a bit past the last gene of the last code
	for name, in := range map[string][]byte{
		"empty":     nil,
		"magic":     append([]byte("scpGIBBS"), b[8:]...),
		"version":   header(0, 3),
		"truncated": b[:len(b)-3],
		"trailing":  append(append([]byte(nil), b...), 0),
		"pad bits":  flipped,
		// Gene levels without cell levels, or the cells' samples without
		// gene levels: no sampler writes them; the bytes of the first state
		// are then read as levels or samples.
		"gene levels alone":       header(6, 30),
		"samples, no gene levels": header(4, 2),
		"cell levels of 7":        header(5, 7),
		"no samples":              header(7, 0)[:len(samplesMagic)+8*8],
		"huge count":              header(7, 1<<40),
	} {
		if _, err := UnmarshalSamples(in); !errors.Is(err, errState) {
			t.Errorf("%s: %v, want errState", name, err)
		}
	}
	// Version 1, written before the cells' samples, had no count of them.
	v1 := append(header(0, 1)[:len(samplesMagic)+8*4], b[len(samplesMagic)+8*5:]...)
	old, err := UnmarshalSamples(v1)
	if err != nil {
		t.Fatalf("version 1: %v", err)
	}
	now, err := UnmarshalSamples(b)
	if err != nil {
		t.Fatal(err)
	}
	for n := range 20 {
		for d := range 30 {
			if old.Predict(n, d) != now.Predict(n, d) {
				t.Fatalf("entry (%d, %d): version 1 predicts %v, version 2 %v", n, d, old.Predict(n, d), now.Predict(n, d))
			}
		}
	}
}
