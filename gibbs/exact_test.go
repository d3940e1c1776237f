package gibbs

import (
	"math"
	"testing"
)

// exactStats are posterior expectations of a tiny problem, in a fixed order:
// the predictive P(x_nd = 1) of every entry, P(K = k) for k = 0 … L where K is
// the number of codes with a non-empty rank-one term z_l u_lᵀ, then the
// marginals of every z_nl and u_ld.
type exactStats struct {
	names  []string
	values []float64
}

// tinyStats evaluates the statistics for one state (z, u as n*L+l bit masks)
// under the rates of each cell, r[i] (one for all cells when len(r) = 1),
// or of each entry (rateAt).
func tinyStats(z, u uint64, n, d, L int, r ...rates) []float64 {
	var out []float64
	on := func(m uint64, i int) bool { return m>>uint(i)&1 != 0 }
	for i := range n {
		for j := range d {
			cov := false
			for l := range L {
				cov = cov || on(z, i*L+l) && on(u, j*L+l)
			}
			ri := rateAt(r, i, j, n, d)
			out = append(out, ri.off+b2f(cov)*(ri.on-ri.off))
		}
	}
	k := 0
	for l := range L {
		zAny, uAny := false, false
		for i := range n {
			zAny = zAny || on(z, i*L+l)
		}
		for j := range d {
			uAny = uAny || on(u, j*L+l)
		}
		if zAny && uAny {
			k++
		}
	}
	for kk := 0; kk <= L; kk++ {
		out = append(out, b2f(k == kk))
	}
	for i := range n * L {
		out = append(out, b2f(on(z, i)))
	}
	for i := range d * L {
		out = append(out, b2f(on(u, i)))
	}
	return out
}

// rateAt returns the rates of entry (i, j) of an n × d problem: r[i*d+j]
// when r has one per entry (and more than one per cell), r[i] when one per
// cell, r[0] when one for all.
func rateAt(r []rates, i, j, n, d int) rates {
	if len(r) == n*d && d > 1 {
		return r[i*d+j]
	}
	return r[min(i, len(r)-1)]
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// exactPosterior enumerates every (Z, U) of a tiny problem and returns the
// posterior expectations of tinyStats at fixed rates, r[i] those of cell i
// (one for all cells when len(r) = 1). With clampLast, code L−1 is used by
// every cell (only states with those z on are enumerated).
func exactPosterior(x, obs [][]bool, L int, pz, pu []float64, clampLast bool, r ...rates) []float64 {
	return exactPosteriorFixed(x, obs, L, pz, pu, clampLast, 0, 0, r...)
}

// exactPosteriorFixed is exactPosterior over the states whose u bits
// (j*L+l) under fixMask equal those of fixU: codes of U held fixed.
func exactPosteriorFixed(x, obs [][]bool, L int, pz, pu []float64, clampLast bool, fixMask, fixU uint64, r ...rates) []float64 {
	n, d := len(x), len(x[0])
	var logw []float64
	var stats [][]float64
	maxw := math.Inf(-1)
	var clamped uint64
	for i := range n {
		if clampLast {
			clamped |= 1 << uint(i*L+L-1)
		}
	}
	for z := uint64(0); z < 1<<uint(n*L); z++ {
		if z&clamped != clamped {
			continue
		}
		for u := uint64(0); u < 1<<uint(d*L); u++ {
			if u&fixMask != fixU {
				continue
			}
			w := tinyLogPost(x, obs, L, pz, pu, clamped, z, u, r...)
			logw = append(logw, w)
			maxw = max(maxw, w)
			stats = append(stats, tinyStats(z, u, n, d, L, r...))
		}
	}
	mean := make([]float64, len(stats[0]))
	total := 0.0
	for k, w := range logw {
		p := math.Exp(w - maxw)
		total += p
		for i, v := range stats[k] {
			mean[i] += p * v
		}
	}
	for i := range mean {
		mean[i] /= total
	}
	return mean
}

// tinyLogPost returns the log-posterior, up to a constant, of the state
// (z, u) of a tiny problem (bits n*L+l and j*L+l) whose cells' codes
// clamped are fixed on, at the rates of each entry (rateAt).
func tinyLogPost(x, obs [][]bool, L int, pz, pu []float64, clamped, z, u uint64, r ...rates) float64 {
	n, d := len(x), len(x[0])
	w := 0.0
	for i := range n * L {
		if clamped>>uint(i)&1 == 0 {
			w += math.Log(1 - pz[i%L] + float64(z>>uint(i)&1)*(2*pz[i%L]-1))
		}
	}
	for i := range d * L {
		w += math.Log(1 - pu[i%L] + float64(u>>uint(i)&1)*(2*pu[i%L]-1))
	}
	for i := range n {
		for j := range d {
			if !obs[i][j] {
				continue
			}
			cov := false
			for l := range L {
				cov = cov || z>>uint(i*L+l)&1 != 0 && u>>uint(j*L+l)&1 != 0
			}
			ri := rateAt(r, i, j, n, d)
			p := ri.off
			if cov {
				p = ri.on
			}
			if !x[i][j] {
				p = 1 - p
			}
			w += math.Log(p)
		}
	}
	return w
}

// TestPosteriorMatchesEnumeration runs long chains on 3 × 3 problems with
// fixed λ and compares the sample averages of label-invariant statistics
// (and, where per-code priors break the label symmetry, the marginals) with
// the exact posterior. The tolerance is 5 batch-means standard errors, which
// accounts for autocorrelation.
func TestPosteriorMatchesEnumeration(t *testing.T) {
	t.Parallel()
	const n, d, L = 3, 3, 2
	xbits := [][]bool{{true, true, false}, {true, true, false}, {false, true, true}}
	all := [][]bool{{true, true, true}, {true, true, true}, {true, true, true}}
	holes := [][]bool{{true, true, false}, {false, true, true}, {true, true, false}}
	cases := []struct {
		name      string
		obs       [][]bool
		noise     Noise
		lambda    float64 // Symmetric
		drop, bg  float64 // Dropout
		pz, pu    []float64
		marginals bool // compare individual z_nl and u_ld
		clamp     bool // the last code is a housekeeping code
	}{
		{"uniform", all, Symmetric, 1.0, 0, 0, []float64{0.5, 0.5}, []float64{0.5, 0.5}, false, false},
		{"missing", holes, Symmetric, 1.5, 0, 0, []float64{0.5, 0.5}, []float64{0.5, 0.5}, false, false},
		{"per-code priors", all, Symmetric, 1.2, 0, 0, []float64{0.3, 0.7}, []float64{0.6, 0.2}, true, false},
		{"per-code priors, missing", holes, Symmetric, 0.8, 0, 0, []float64{0.25, 0.6}, []float64{0.7, 0.35}, true, false},
		{"dropout", all, Dropout, 1, 0.4, 0.1, []float64{0.5, 0.5}, []float64{0.5, 0.5}, false, false},
		{"dropout, per-code priors, missing", holes, Dropout, 1, 0.55, 0.2, []float64{0.3, 0.6}, []float64{0.65, 0.3}, true, false},
		{"dropout, housekeeping code", holes, Dropout, 1, 0.5, 0.15, []float64{0.4, 0.5}, []float64{0.5, 0.35}, true, true},
	}
	samples := 200000
	if testing.Short() {
		samples = 60000
	}
	for ci, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data := tinyData(t, xbits, tc.obs)
			cfg := DefaultConfig()
			cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers = L, 1000, samples, 1, 1
			cfg.Seed = uint64(ci + 1)
			cfg.Lambda, cfg.FixLambda, cfg.KeepSamples = tc.lambda, true, true
			cfg.Noise, cfg.Dropout, cfg.Background, cfg.Housekeeping = tc.noise, tc.drop, tc.bg, tc.clamp
			if tc.clamp {
				cfg.L = L - 1 // and the housekeeping code
			}
			r := symmetricRates(tc.lambda)
			if tc.noise == Dropout {
				r = rates{on: 1 - tc.drop, off: tc.bg}
			}
			cfg.PriorZ, cfg.PriorU = FixedPrior(tc.pz...), FixedPrior(tc.pu...)
			s, _ := runAll(t, data, cfg)

			exact := exactPosterior(xbits, tc.obs, L, tc.pz, tc.pu, tc.clamp, r)
			mean, se := sampleStats(s, n, d, L, len(exact), []rates{r})
			compared := n*d + L + 1
			if tc.marginals {
				compared = len(exact)
			}
			within := func(ref []float64) []string { return farFrom(mean, se, ref[:compared]) }
			for _, b := range within(exact) {
				t.Error(b)
			}
			// Power: the same comparison must reject the posterior of a
			// slightly different model (λ off by 25%, or the dropout rate
			// off by a quarter of its distance to 1 − background).
			wrongRates := symmetricRates(tc.lambda * 1.25)
			if tc.noise == Dropout {
				wrongRates = rates{on: r.on + (r.on-r.off)/4, off: r.off}
			}
			if len(within(exactPosterior(xbits, tc.obs, L, tc.pz, tc.pu, tc.clamp, wrongRates))) == 0 {
				t.Errorf("the tolerance cannot tell rates %+v from %+v", r, wrongRates)
			}
			// The sampler's own predictive agrees with the retained samples.
			res, err := s.Result()
			if err != nil {
				t.Fatal(err)
			}
			predictsSampleMean(t, res, mean, n, d)
		})
	}
}

// tinyData is the data of a small problem: x[i][j] where obs[i][j].
func tinyData(t *testing.T, x, obs [][]bool) Data {
	t.Helper()
	n, d := len(x), len(x[0])
	xm, mask := NewMatrix(n, d), NewMatrix(n, d)
	for i := range n {
		for j := range d {
			xm.Set(i, j, x[i][j])
			mask.Set(i, j, obs[i][j])
		}
	}
	data, err := NewData(xm, mask, 0)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
