package gibbs

import (
	"context"
	"errors"
	"math"
	"math/bits"
	"testing"
)

// TestTraceAndSummary checks the bookkeeping of a run against values
// recomputed from the final state: phases, chain counts, retained samples,
// accuracy, log-likelihood and λ of the last sweep, and the plug-in
// predictive formula.
func TestTraceAndSummary(t *testing.T) {
	t.Parallel()
	p := newPlanted(41, 130, 90, 3, 0.5, 0.1)
	mask := randomMatrix(&testRNG{s: 42}, 130, 90, 0.7, 0)
	data, err := NewData(p.noisy, mask, 64)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.L, cfg.BurnIn, cfg.Samples, cfg.Thin = 3, 12, 10, 3
	cfg.Starts, cfg.StartSweeps, cfg.KeepSamples = 3, 5, true
	s, res := runAll(t, data, cfg)
	if len(res.Trace) != 22 || res.Samples != 3 || len(res.kept) != 3 {
		t.Fatalf("trace %d sweeps, %d samples, %d kept; want 22, 3, 3", len(res.Trace), res.Samples, len(res.kept))
	}
	for i, st := range res.Trace {
		wantPhase, wantChains := BurnIn, 1
		if i >= cfg.BurnIn {
			wantPhase = Sample
		}
		if i < cfg.StartSweeps {
			wantChains = cfg.Starts
		}
		if st.Sweep != i || st.Phase != wantPhase || st.Chains != wantChains {
			t.Errorf("sweep %d: got sweep %d, phase %v, %d chains; want %v, %d chains", i, st.Sweep, st.Phase, st.Chains, wantPhase, wantChains)
		}
	}
	// Recompute P from the final state.
	c := s.chains[0]
	u := unpack(c.u, 90, 3)
	var correct, observed int64
	for n := range 130 {
		for d := range 90 {
			if !mask.Get(n, d) {
				continue
			}
			observed++
			if covered(c.z, c.u, 3, n, d) == p.noisy.Get(n, d) {
				correct++
			}
		}
	}
	last := res.Trace[len(res.Trace)-1]
	if want := float64(correct) / float64(observed); last.Accuracy != want {
		t.Errorf("last accuracy %v, recomputed %v", last.Accuracy, want)
	}
	if want := math.Log(float64(correct) / float64(observed-correct)); math.Abs(last.Lambda-want) > 1e-12 || res.Lambda != last.Lambda {
		t.Errorf("λ %v (result %v), want logit(P/obs) = %v", last.Lambda, res.Lambda, want)
	}
	wantLL := float64(correct)*math.Log(sigmoid(last.Lambda)) + float64(observed-correct)*math.Log(sigmoid(-last.Lambda))
	if math.Abs(last.LogLik-wantLL) > 1e-9*math.Abs(wantLL) {
		t.Errorf("log-likelihood %v, recomputed %v", last.LogLik, wantLL)
	}
	// The last retained sample is the final state, and the means average the kept samples.
	for l := range 3 {
		for n := range 130 {
			m := 0.0
			for _, k := range res.kept {
				m += float64(k.z[n/64*3+l] >> uint(n%64) & 1)
			}
			if m/3 != res.ZMean[n*3+l] {
				t.Fatalf("ZMean[%d, %d] = %v, kept samples give %v", n, l, res.ZMean[n*3+l], m/3)
			}
		}
		for d := range 90 {
			if u[d][l] != (res.kept[2].u[d/64*3+l]>>uint(d%64)&1 != 0) {
				t.Fatalf("last kept sample differs from the final state")
			}
		}
	}
	// Plug-in predictive and the batch forms agree with the formula.
	heldOut := NewMatrix(130, 90)
	var entries []entry
	for n := range 130 {
		for d := range 90 {
			if !mask.Get(n, d) {
				heldOut.Set(n, d, true)
				entries = append(entries, entry{n, d})
			}
		}
	}
	got, probs, err := res.predictMask(heldOut, PlugIn)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(entries) {
		t.Fatalf("predictMask returned %d entries, want %d", len(got), len(entries))
	}
	for i, e := range entries {
		prod := 1.0
		for l := range 3 {
			prod *= 1 - res.ZMean[e.Cell*3+l]*res.UMean[e.Gene*3+l]
		}
		want := 1 / (1 + math.Exp(-res.Lambda*(1-2*prod)))
		if got[i] != e || math.Abs(probs[i]-want) > 1e-12 {
			t.Fatalf("entry %d: %v P = %v, want %v P = %v", i, got[i], probs[i], e, want)
		}
	}
	sm, err := res.predictEntries(nil, entries, SampleMean)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		want := 0.0
		for _, k := range res.kept {
			want += sigmoid(-k.rates.lambda) + b2f(covered(k.z, k.u, 3, e.Cell, e.Gene))*(sigmoid(k.rates.lambda)-sigmoid(-k.rates.lambda))
		}
		if want /= 3; math.Abs(sm[i]-want) > 1e-12 {
			t.Fatalf("sample mean at %v = %v, want %v", e, sm[i], want)
		}
	}
	if _, err := res.Predict(130, 0, PlugIn); err == nil {
		t.Error("Predict out of range: no error")
	}
	noKeep := cfg
	noKeep.KeepSamples = false
	_, r2 := runAll(t, data, noKeep)
	if _, err := r2.Predict(0, 0, SampleMean); !errors.Is(err, errNoSamples) {
		t.Errorf("SampleMean without kept samples: %v, want errNoSamples", err)
	}
	fresh, err := NewSampler(context.Background(), data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Result(); !errors.Is(err, errNoSamples) {
		t.Errorf("Result before sampling: %v, want errNoSamples", err)
	}
}

// predictMask returns the entries where mask (N × D, for example the held-out
// entries) is 1, in row-major order, with P(x = 1) for each.
func (r *Result) predictMask(mask BitMatrix, method Method) ([]entry, []float64, error) {
	if err := checkMatrix("mask", mask, r.N, r.D); err != nil {
		return nil, nil, err
	}
	var entries []entry
	b := mask.Segments()
	for n := 0; n < r.N; n++ {
		for s := 0; s+1 < len(b); s++ {
			for k, w := range mask.Segment(n, s) {
				for ; w != 0; w &= w - 1 {
					entries = append(entries, entry{n, b[s] + 64*k + bits.TrailingZeros64(w)})
				}
			}
		}
	}
	p, err := r.predictEntries(make([]float64, 0, len(entries)), entries, method)
	return entries, p, err
}
