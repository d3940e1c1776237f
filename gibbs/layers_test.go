package gibbs

import (
	"context"
	"fmt"
	"math"
	"testing"
)

// twoLayer is a tiny two-layer model for exact enumeration: X (n × d, mask
// obs) = Z₁∘U₁ᵀ at λ₁, Z₁ (n × L1) = Z₂∘U₂ᵀ at λ₂, Z₂ n × 1, U₂ L1 × 1,
// Bernoulli priors pu1 (per code of layer 1), pu2 and pz2.
type twoLayer struct {
	x, obs         [][]bool
	L1             int
	lambda1, lam2  float64
	pu1            []float64
	pu2, pz2       float64
	noAbove        bool // leave out the likelihood of Z₁ as data (a wrong model, for the power check)
	fixZ2, fixU2   uint64
	fixed          bool // enumerate layer 1 only, layer 2 at (fixZ2, fixU2)
	n, d, nz1, nu1 int
}

func (m *twoLayer) init() {
	m.n, m.d = len(m.x), len(m.x[0])
	m.nz1, m.nu1 = m.n*m.L1, m.d*m.L1
}

// bernLog returns log p(b) under Bernoulli(p).
func bernLog(b bool, p float64) float64 {
	if b {
		return math.Log(p)
	}
	return math.Log1p(-p)
}

// logJoint returns log p(X_obs, Z₁, U₁, Z₂, U₂) up to a constant; z1 bit
// n·L1+l, u1 bit d·L1+l, z2 bit n, u2 bit l.
func (m *twoLayer) logJoint(z1, u1, z2, u2 uint64) float64 {
	on := func(w uint64, i int) bool { return w>>uint(i)&1 != 0 }
	lp := 0.0
	for i := range m.d * m.L1 {
		lp += bernLog(on(u1, i), m.pu1[i%m.L1])
	}
	for l := range m.L1 {
		lp += bernLog(on(u2, l), m.pu2)
	}
	for n := range m.n {
		lp += bernLog(on(z2, n), m.pz2)
	}
	for n := range m.n {
		for d := range m.d {
			if !m.obs[n][d] {
				continue
			}
			cov := false
			for l := range m.L1 {
				cov = cov || on(z1, n*m.L1+l) && on(u1, d*m.L1+l)
			}
			lp += math.Log(onProb(cov == m.x[n][d], m.lambda1))
		}
		for l := range m.L1 {
			if m.noAbove {
				continue
			}
			cov := on(z2, n) && on(u2, l)
			lp += math.Log(onProb(cov == on(z1, n*m.L1+l), m.lam2))
		}
	}
	return lp
}

// stats are the statistics compared: P(x_nd = 1) of every entry, then
// the marginals of z₁, u₁, z₂, u₂.
func (m *twoLayer) stats(z1, u1, z2, u2 uint64) []float64 {
	on := func(w uint64, i int) bool { return w>>uint(i)&1 != 0 }
	var out []float64
	for n := range m.n {
		for d := range m.d {
			cov := false
			for l := range m.L1 {
				cov = cov || on(z1, n*m.L1+l) && on(u1, d*m.L1+l)
			}
			out = append(out, onProb(cov, m.lambda1))
		}
	}
	for _, v := range []struct {
		w uint64
		k int
	}{{z1, m.nz1}, {u1, m.nu1}, {z2, m.n}, {u2, m.L1}} {
		for i := range v.k {
			out = append(out, b2f(on(v.w, i)))
		}
	}
	return out
}

// exact returns the posterior expectations of stats by enumeration.
func (m *twoLayer) exact() []float64 {
	var logw []float64
	var st [][]float64
	maxw := math.Inf(-1)
	z2s, u2s := uint64(1)<<uint(m.n), uint64(1)<<uint(m.L1)
	for z1 := range uint64(1) << uint(m.nz1) {
		for u1 := range uint64(1) << uint(m.nu1) {
			for z2 := range z2s {
				for u2 := range u2s {
					if m.fixed && (z2 != m.fixZ2 || u2 != m.fixU2) {
						continue
					}
					w := m.logJoint(z1, u1, z2, u2)
					logw, st = append(logw, w), append(st, m.stats(z1, u1, z2, u2))
					maxw = max(maxw, w)
				}
			}
		}
	}
	mean := make([]float64, len(st[0]))
	total := 0.0
	for k, w := range logw {
		p := math.Exp(w - maxw)
		total += p
		for i, v := range st[k] {
			mean[i] += p * v
		}
	}
	for i := range mean {
		mean[i] /= total
	}
	return mean
}

// state reads the sampler's two layers as enumeration bit masks.
func (m *twoLayer) state(s *LayersSampler) (z1, u1, z2, u2 uint64) {
	c1, c2 := s.layers[0].chains[0], s.layers[1].chains[0]
	for l := range m.L1 {
		for n := range m.n {
			z1 |= (c1.z[l] >> uint(n) & 1) << uint(n*m.L1+l)
		}
		for d := range m.d {
			u1 |= (c1.u[l] >> uint(d) & 1) << uint(d*m.L1+l)
		}
	}
	return z1, u1, c2.z[0], c2.u[0]
}

// batchCheck compares batch means of per-sweep statistics with ref and
// returns the statistics more than 5 batch-means standard errors off.
func batchCheck(batchMean [][]float64, ref []float64) (bad []string) {
	batches := float64(len(batchMean))
	for i := range ref {
		mean, v := 0.0, 0.0
		for _, b := range batchMean {
			mean += b[i] / batches
		}
		for _, b := range batchMean {
			v += (b[i] - mean) * (b[i] - mean) / (batches - 1)
		}
		se := math.Sqrt(v / batches)
		if math.Abs(mean-ref[i]) > 5*se+1e-9 {
			bad = append(bad, fmt.Sprintf("stat %d: sampler %.4f ± %.4f, exact %.4f", i, mean, se, ref[i]))
		}
	}
	return bad
}

// TestLayersPosteriorMatchesEnumeration runs the two-layer sampler on a
// 2 × 3 problem (L = 2 then 1, fixed λ₁ ≠ λ₂, entries missing) and
// compares, by batch means, the frequencies of every variable and the
// predictive of every entry with the enumerated posterior: of the whole
// model during burn-in (every layer swept: the conditional of z₁ carries
// both likelihood terms), and of layer 1 given layer 2 held at its state
// during layer 1's sample sweeps. The same comparison must reject the
// model without z₁'s term as data of layer 2, and with λ₁ and λ₂ swapped.
func TestLayersPosteriorMatchesEnumeration(t *testing.T) {
	t.Parallel()
	m := &twoLayer{
		x:       [][]bool{{true, true, false}, {false, true, true}},
		obs:     [][]bool{{true, false, true}, {true, true, true}},
		L1:      2,
		lambda1: 1.3, lam2: 0.7,
		pu1: []float64{0.35, 0.6}, pu2: 0.4, pz2: 0.55,
	}
	m.init()
	sweeps := 200000
	if testing.Short() {
		sweeps = 60000
	}
	x, mask := NewMatrix(m.n, m.d), NewMatrix(m.n, m.d)
	for i := range m.n {
		for j := range m.d {
			x.Set(i, j, m.x[i][j])
			mask.Set(i, j, m.obs[i][j])
		}
	}
	data, err := NewData(x, mask, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := LayersConfig{
		Layers: []LayerSpec{{L: m.L1, PriorU: FixedPrior(m.pu1...), Lambda: m.lambda1},
			{L: 1, PriorU: FixedPrior(m.pu2), Lambda: m.lam2}},
		PriorZ: FixedPrior(m.pz2),
		BurnIn: sweeps, Samples: sweeps, Thin: 1, Seed: 7, Workers: 1, FixLambda: true,
	}
	s, err := NewLayersSampler(context.Background(), data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	const batches, skip = 50, 1000
	run := func(n int) [][]float64 {
		per := (n - skip) / batches
		out := make([][]float64, batches)
		for i := range n {
			if _, err := s.Step(); err != nil {
				t.Fatal(err)
			}
			if i < skip || (i-skip)/per >= batches {
				continue
			}
			b := (i - skip) / per
			if out[b] == nil {
				out[b] = make([]float64, m.n*m.d+m.nz1+m.nu1+m.n+m.L1)
			}
			for k, v := range m.stats(m.state(s)) {
				out[b][k] += v / float64(per)
			}
		}
		return out
	}
	joint := run(sweeps)
	for _, b := range batchCheck(joint, m.exact()) {
		t.Error("joint:", b)
	}
	wrong := *m
	wrong.noAbove = true
	if len(batchCheck(joint, wrong.exact())) == 0 {
		t.Error("the tolerance cannot tell the model without z₁'s likelihood as data of layer 2")
	}
	wrong = *m
	wrong.lambda1, wrong.lam2 = m.lam2, m.lambda1
	if len(batchCheck(joint, wrong.exact())) == 0 {
		t.Error("the tolerance cannot tell λ₁ and λ₂ swapped")
	}

	// Layer 1's sample sweeps: layer 2 stays where the burn-in left it.
	m.fixed = true
	_, _, m.fixZ2, m.fixU2 = m.state(s)
	cond := run(sweeps)
	if _, _, z2, u2 := m.state(s); z2 != m.fixZ2 || u2 != m.fixU2 {
		t.Fatalf("layer 2 moved while layer 1 was sampled: (%b, %b) → (%b, %b)", m.fixZ2, m.fixU2, z2, u2)
	}
	for _, b := range batchCheck(cond, m.exact()) {
		t.Errorf("layer 1 given layer 2 at z₂ = %02b, u₂ = %02b: %s", m.fixZ2, m.fixU2, b)
	}
}

// plantedLayers draws a planted two-layer problem: top codes Z₂ (n × L2,
// each on with probability ½), layer-1 usage Z₁ = Z₂∘U₂ᵀ with flips,
// genes U₁ (d × L1, each gene in one code), X = Z₁∘U₁ᵀ with flips; and a
// mask observing each entry with probability observe.
func plantedLayers(seed uint64, n, d int, u2 [][]bool, flipZ, flipX, observe float64) (clean, noisy, mask *Matrix, u1 [][]bool) {
	r := &testRNG{s: seed}
	L1, L2 := len(u2), len(u2[0])
	u1 = make([][]bool, d)
	for j := range d {
		u1[j] = make([]bool, L1)
		u1[j][j%L1] = true // every gene in one code, so that codes are distinct
	}
	clean, noisy, mask = NewMatrix(n, d), NewMatrix(n, d), NewMatrix(n, d)
	for i := range n {
		z2 := make([]bool, L2)
		for k := range z2 {
			z2[k] = r.bern(0.5)
		}
		z1 := make([]bool, L1)
		for l := range z1 {
			for k := range z2 {
				z1[l] = z1[l] || z2[k] && u2[l][k]
			}
			z1[l] = z1[l] != r.bern(flipZ)
		}
		for j := range d {
			v := false
			for l := range z1 {
				v = v || z1[l] && u1[j][l]
			}
			clean.Set(i, j, v)
			noisy.Set(i, j, v != r.bern(flipX))
			mask.Set(i, j, r.bern(observe))
		}
	}
	return clean, noisy, mask, u1
}

// TestLayersPlantedRecovery fits a 4-2 model to planted data (each top
// code switching two layer-1 codes on, 12% of the layer-1 usage flipped,
// 3% of the data flipped, half the entries missing): layer 1 must recover
// the planted genes' codes,
// layer 2 must recover which layer-1 codes go together (each top code's
// prototype at the data layer matches the planted union of genes), and the
// held-out entries must be reconstructed.
func TestLayersPlantedRecovery(t *testing.T) {
	t.Parallel()
	u2 := [][]bool{{true, false}, {true, false}, {false, true}, {false, true}}
	clean, noisy, mask, u1 := plantedLayers(3, 300, 60, u2, 0.12, 0.03, 0.5)
	data, err := NewData(noisy, mask, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A single chain can settle with two codes merged, as a single layer
	// can: four chains, the one of highest joint log-likelihood kept.
	var s *LayersSampler
	var res *LayersResult
	best := math.Inf(-1)
	for seed := range uint64(4) {
		cfg := DefaultLayersConfig(4, 2)
		cfg.BurnIn, cfg.Samples, cfg.Seed, cfg.Init = 60, 40, seed+1, InitData
		cs, err := NewLayersSampler(context.Background(), data, cfg)
		if err != nil {
			t.Fatal(err)
		}
		cres, err := ranResult(cs.Run(context.Background(), nil), cs.Result)
		if err != nil {
			t.Fatal(err)
		}
		ll := 0.0
		for _, r := range cres.Layers {
			ll += r.Trace[len(r.Trace)-1].LogLik
		}
		if ll > best {
			s, res, best = cs, cres, ll
		}
	}
	p := &planted{u: u1}
	j := p.worstJaccard(res.Layers[0])
	t.Logf("layer 1: worst Jaccard %.3f; σ(λ) = %.3f, %.3f", j, sigmoid(s.Lambdas()[0]), sigmoid(s.Lambdas()[1]))
	if j < 0.95 {
		t.Errorf("layer 1 recovers the planted codes with worst Jaccard %.3f, want ≥ 0.95", j)
	}
	proto := res.Prototypes(1)
	for k := range 2 {
		best := 0.0
		for l := range 2 {
			agree := 0
			for j := range u1 {
				want := false
				for c := range u2 {
					want = want || u1[j][c] && u2[c][k]
				}
				if (proto[j*2+l] > 0.5) == want {
					agree++
				}
			}
			best = max(best, float64(agree)/float64(len(u1)))
		}
		if best < 1 {
			t.Errorf("planted top code %d: its best prototype agrees on %.2f of the genes, want all", k, best)
		}
	}
	miss, held := 0, 0
	for i := range clean.Rows() {
		for j := range clean.Cols() {
			if mask.Get(i, j) {
				continue
			}
			held++
			if res.Layers[0].Reconstruct(i, j) != clean.Get(i, j) {
				miss++
			}
		}
	}
	t.Logf("reconstruction error of the %d held-out entries: %.4f", held, float64(miss)/float64(held))
	if e := float64(miss) / float64(held); e > 0.01 {
		t.Errorf("reconstruction error of the held-out entries %.4f, want ≤ 0.01", e)
	}
	// σ(λ) estimates the fraction of each layer's data explained: 97% and
	// 88% (12% of layer 1's usage is flipped).
	for k, want := range []float64{0.97, 0.88} {
		if got := sigmoid(s.Lambdas()[k]); math.Abs(got-want) > 0.03 {
			t.Errorf("layer %d: σ(λ) = %.3f, want %.2f ± 0.03", k+1, got, want)
		}
	}
}

// layersRun is everything reproducible about a multi-layer run.
func layersRun(t *testing.T, s *LayersSampler, res *LayersResult) string {
	t.Helper()
	out := fmt.Sprint(s.sweep)
	for k, r := range res.Layers {
		tr := append([]SweepStats(nil), r.Trace...)
		for i := range tr {
			tr[i].Seconds = 0
		}
		c := s.layers[k].chains[0]
		out += fmt.Sprint(r.ZMean, r.UMean, math.Float64bits(r.Lambda), r.Samples, tr, c.z, c.u)
	}
	return out
}

// TestLayersDeterministicAndResumable requires bit-identical results for
// 1, 2 and 3 workers, and after a stop at any point of the schedule (in
// burn-in, in the first layer's samples, between layers, in the last
// layer's samples) and a restore into a fresh sampler with other workers.
func TestLayersDeterministicAndResumable(t *testing.T) {
	t.Parallel()
	u2 := [][]bool{{true, false, false}, {true, true, false}, {false, true, false}, {false, false, true}, {true, false, true}}
	_, noisy, mask, _ := plantedLayers(11, 260, 150, u2, 0.05, 0.05, 0.6)
	data, err := NewData(noisy, mask, 64)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultLayersConfig(5, 3, 2)
	cfg.BurnIn, cfg.Samples, cfg.Thin, cfg.Seed = 6, 4, 2, 9
	cfg.Layers[1].PriorU = FixedPrior(0.3)
	run := func(workers, stop int) (*LayersSampler, *LayersResult) {
		c := cfg
		c.Workers = workers
		s, err := NewLayersSampler(context.Background(), data, c)
		if err != nil {
			t.Fatal(err)
		}
		if stop > 0 {
			for range stop {
				if _, err := s.Step(); err != nil {
					t.Fatal(err)
				}
			}
			b, err := s.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			c.Workers = 3 - workers%2
			if s, err = NewLayersSampler(context.Background(), data, c); err != nil {
				t.Fatal(err)
			}
			if err := s.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
		}
		res, err := ranResult(s.Run(context.Background(), nil), s.Result)
		if err != nil {
			t.Fatal(err)
		}
		return s, res
	}
	ref, refRes := run(1, 0)
	want := layersRun(t, ref, refRes)
	if ref.Sweeps() != 6+3*4 {
		t.Fatalf("schedule of %d sweeps, want 18", ref.Sweeps())
	}
	for _, tc := range []struct{ workers, stop int }{{2, 0}, {3, 0}, {1, 3}, {2, 8}, {1, 10}, {2, 15}} {
		s, res := run(tc.workers, tc.stop)
		if got := layersRun(t, s, res); got != want {
			t.Errorf("%d workers, stopped after sweep %d: the run differs from an uninterrupted one on 1 worker", tc.workers, tc.stop)
		}
	}
	// A state of another configuration is refused and changes nothing.
	other := cfg
	other.Layers = other.Layers[:2]
	o, err := NewLayersSampler(context.Background(), data, other)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := o.MarshalBinary()
	if err := ref.UnmarshalBinary(b); err == nil {
		t.Error("a two-layer state restored into a three-layer sampler")
	}
	if got, _ := ref.Result(); layersRun(t, ref, got) != want {
		t.Error("a refused state changed the sampler")
	}
}

// TestOneLayerIsSampler: a single layer is the plain sampler with one
// start, bit for bit.
func TestOneLayerIsSampler(t *testing.T) {
	t.Parallel()
	p := newPlanted(4, 200, 90, 3, 0.4, 0.05)
	data, err := NewData(p.noisy, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	lc := DefaultLayersConfig(3)
	lc.BurnIn, lc.Samples, lc.Seed = 10, 10, 5
	ls, err := NewLayersSampler(context.Background(), data, lc)
	if err != nil {
		t.Fatal(err)
	}
	lres, err := ranResult(ls.Run(context.Background(), nil), ls.Result)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.L, cfg.BurnIn, cfg.Samples, cfg.Seed, cfg.Starts = 3, 10, 10, 5, 1
	s, res := runAll(t, data, cfg)
	// The layer is set to its MAP after its samples; the plain chain is not.
	s.toMAP()
	sameRun(t, "one layer", ls.layers[0], s, lres.Layers[0], res)
}

// TestLayersConfigRefused lists configurations the multi-layer model
// refuses.
func TestLayersConfigRefused(t *testing.T) {
	t.Parallel()
	data, err := NewData(NewMatrix(4, 4), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*LayersConfig)
	}{
		{"no layer", func(c *LayersConfig) { c.Layers = nil }},
		{"L too large", func(c *LayersConfig) { c.Layers[1].L = MaxL + 1 }},
		{"empirical prior above the data", func(c *LayersConfig) { c.Layers[1].PriorU = EmpiricalPrior() }},
		{"empirical top Z", func(c *LayersConfig) { c.PriorZ = EmpiricalPrior() }},
		{"no samples", func(c *LayersConfig) { c.Samples = 0 }},
	} {
		c := DefaultLayersConfig(3, 2)
		tc.edit(&c)
		if _, err := NewLayersSampler(context.Background(), data, c); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}
