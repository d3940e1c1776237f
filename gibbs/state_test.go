package gibbs

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestResumeIsBitIdentical stops runs at several sweeps (inside the
// multi-start phase, in burn-in, in the sample phase), marshals the state,
// restores it into a fresh Sampler with another worker count and finishes:
// the result must equal an uninterrupted run.
func TestResumeIsBitIdentical(t *testing.T) {
	t.Parallel()
	p := newPlanted(11, 300, 200, 3, 0.5, 0.1)
	mask := randomMatrix(&testRNG{s: 12}, 300, 200, 0.9, 0)
	data, err := NewData(p.noisy, mask, 128)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.L, cfg.BurnIn, cfg.Samples, cfg.Thin = 3, 10, 9, 3
	cfg.Starts, cfg.StartSweeps, cfg.KeepSamples, cfg.Workers = 3, 4, true, 2
	full, fullRes := runAll(t, data, cfg)
	for _, stop := range []int{1, 3, 4, 10, 14, 18} {
		t.Run(fmt.Sprintf("stop%d", stop), func(t *testing.T) {
			state := stateAfter(t, data, cfg, stop)
			resumedCfg := cfg
			resumedCfg.Workers = 1
			b := restored(t, data, resumedCfg, state)
			if b.Sweep() != stop {
				t.Fatalf("restored sweep %d, want %d", b.Sweep(), stop)
			}
			res, err := ranResult(b.Run(context.Background(), nil), b.Result)
			if err != nil {
				t.Fatal(err)
			}
			sameRun(t, "resumed", full, b, fullRes, res)
		})
	}
}

// TestRunCancellation cancels a run from its callback and resumes it.
func TestRunCancellation(t *testing.T) {
	t.Parallel()
	p := newPlanted(21, 200, 150, 2, 0.5, 0.05)
	data, err := NewData(p.noisy, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.BurnIn, cfg.Samples, cfg.Starts = 6, 6, 1
	full, fullRes := runAll(t, data, cfg)

	s, err := NewSampler(context.Background(), data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var seen []int
	err = s.Run(ctx, func(st SweepStats) error {
		seen = append(seen, st.Sweep)
		if st.Sweep == 4 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v, want context.Canceled", err)
	}
	if s.Sweep() != 5 || len(seen) != 5 {
		t.Fatalf("stopped at sweep %d after %d callbacks, want 5 and 5", s.Sweep(), len(seen))
	}
	stop := errors.New("stop")
	err = s.Run(context.Background(), func(st SweepStats) error {
		if st.Sweep == 7 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || s.Sweep() != 8 {
		t.Fatalf("callback error: %v at sweep %d, want %v at 8", err, s.Sweep(), stop)
	}
	res, err := ranResult(s.Run(context.Background(), nil), s.Result)
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, "cancelled and resumed", full, s, fullRes, res)
}

// TestUnmarshalRejectsBadState feeds corrupt and mismatched states.
func TestUnmarshalRejectsBadState(t *testing.T) {
	t.Parallel()
	p := newPlanted(31, 100, 70, 2, 0.5, 0.05)
	data, err := NewData(p.noisy, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.KeepSamples = 3, 3, 1, true
	s, err := NewSampler(context.Background(), data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if _, err := s.Step(); err != nil {
			t.Fatal(err)
		}
	}
	good, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	padded := append([]byte(nil), good...)
	// The first chain's Z words start after the magic, version, fingerprint,
	// sweep, chain count, seed and the eight rates (no per-cell levels
	// here); set a bit past cell 100 in its last word.
	zStart := 8 + 8*(1+len(s.fingerprint())+2+1+8)
	padded[zStart+8*(len(s.chains[0].z)-1)+7] |= 0x80
	older := append([]byte(nil), good...)
	older[8] = stateVersion - 1 // the version follows the magic
	other := cfg
	other.Seed = 2
	// A state whose burn-in ran on by the rule before windows of samples
	// (settle.go) lacks windowRule in its fingerprint's field 9.
	held := cfg
	held.Noise, held.HoldFrom, held.MaxBurnIn = Dropout, 2, 20
	beforeWindows := stateAfter(t, data, held, 4)
	fix := 8 + 8*(1+9)
	binary.LittleEndian.PutUint64(beforeWindows[fix:], binary.LittleEndian.Uint64(beforeWindows[fix:])&^windowRule)
	cases := []struct {
		name  string
		cfg   Config
		state []byte
	}{
		{"empty", cfg, nil},
		{"bad magic", cfg, append([]byte("notgibbs"), good[8:]...)},
		{"truncated", cfg, good[:len(good)-5]},
		{"trailing", cfg, append(append([]byte(nil), good...), 0)},
		{"other seed", other, good},
		{"padding bits", cfg, padded},
		{"older version", cfg, older},
		{"older burn-in rule", held, beforeWindows},
	}
	for _, tc := range cases {
		fresh, err := NewSampler(context.Background(), data, tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		err = fresh.UnmarshalBinary(tc.state)
		if !errors.Is(err, errState) {
			t.Errorf("%s: %v, want errState", tc.name, err)
		}
		if strings.HasPrefix(tc.name, "older") && (err == nil || !strings.Contains(err.Error(), "older scpipe")) {
			t.Errorf("%s: %v does not say that an older scpipe wrote the state", tc.name, err)
		}
		if fresh.Sweep() != 0 {
			t.Errorf("%s: a rejected state changed the sampler", tc.name)
		}
	}
}

// stateAfter returns the state of a sampler of cfg after sweeps sweeps.
func stateAfter(t *testing.T, data Data, cfg Config, sweeps int) []byte {
	t.Helper()
	a, err := NewSampler(context.Background(), data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range sweeps {
		if _, err := a.Step(); err != nil {
			t.Fatal(err)
		}
	}
	state, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return state
}

// restored returns a new sampler of cfg with state restored.
func restored(t *testing.T, data Data, cfg Config, state []byte) *Sampler {
	t.Helper()
	b, err := NewSampler(context.Background(), data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	return b
}

// resumed restores state into a new sampler of cfg, runs it to its end
// and returns it with its result.
func resumed(t *testing.T, data Data, cfg Config, state []byte) (*Sampler, *Result) {
	t.Helper()
	b := restored(t, data, cfg, state)
	res, err := ranResult(b.Run(context.Background(), nil), b.Result)
	if err != nil {
		t.Fatal(err)
	}
	return b, res
}
