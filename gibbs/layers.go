package gibbs

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"time"

	"scpipe/internal/splitmix"
)

// The multi-layer OrMachine (the paper's section 3.4): layer 0 factorises
// the data X into Z₀ and U₀, and layer k ≥ 1 factorises Z_{k−1} (cells ×
// L_{k−1}) into Z_k (cells × L_k) and U_k (L_{k−1} × L_k), each under the
// Symmetric likelihood with its own λ_k. Each layer is a Sampler whose data
// for k ≥ 1 are a copy of the layer below's Z, refreshed before each of its
// sweeps, and whose Z step (k below the top) also carries the likelihood of
// Z_k as the data of layer k+1 (Sampler.above). See doc.go for the
// conditionals.

// LayerSpec is one layer of a multi-layer OrMachine.
type LayerSpec struct {
	// L is the number of codes of the layer, 1 ≤ L ≤ MaxL.
	L int
	// PriorU is the prior of the layer's codes: Uniform or Fixed; Empirical
	// in the first layer only (the others' data change as they are fitted).
	PriorU Prior
	// Lambda is the layer's initial λ; 0 takes LayersConfig.Lambda.
	Lambda float64
}

// LayersConfig holds the parameters of a LayersSampler. Every layer uses
// the Symmetric likelihood; per-cell levels, housekeeping codes and
// multiple starts are not part of the multi-layer model.
type LayersConfig struct {
	// Layers lists the layers from the data up; Layers[0] factorises X.
	Layers []LayerSpec
	// PriorZ is the prior of the top layer's Z: Uniform or Fixed (Empirical
	// with a single layer only). The Z of a layer below the top has no
	// Bernoulli prior: the layer above generates it.
	PriorZ Prior
	// BurnIn sweeps of every layer, then Samples sweeps of each layer in
	// turn, from the data up, with the others held fixed; every Thin-th
	// sample sweep of a layer is retained.
	BurnIn, Samples, Thin int
	// Seed keys every random draw together with (layer, sweep, step,
	// variable).
	Seed uint64
	// Workers is the number of goroutines per step; 0 means GOMAXPROCS.
	// Results do not depend on it.
	Workers int
	// Lambda is every layer's initial dispersion λ > 0.
	Lambda float64
	// FixLambda holds every λ_k at Lambda: the burn-in is then an exact
	// MCMC sampler of p(Z₀, U₀, …, Z_K, U_K | X, λ).
	FixLambda bool
	// Init is the first layer's start (InitRandom, InitData or
	// InitCluster); the layers above start from a fair coin, as the
	// paper's do.
	Init Init
	// Kernel names the sweep kernel, as Config.Kernel.
	Kernel string
}

// DefaultLayersConfig returns the paper's multi-layer training for the
// given layer sizes: 100 burn-in sweeps of every layer, then 100 sample
// sweeps of each layer, λ starting at 1, uniform priors and a random start.
func DefaultLayersConfig(sizes ...int) LayersConfig {
	c := LayersConfig{BurnIn: 100, Samples: 100, Thin: 1, Seed: 1, Lambda: 1}
	for _, L := range sizes {
		c.Layers = append(c.Layers, LayerSpec{L: L})
	}
	return c
}

// layerConfig returns the single-layer Config of layer k.
func (c *LayersConfig) layerConfig(k int) Config {
	cfg := DefaultConfig()
	cfg.L, cfg.BurnIn, cfg.Samples, cfg.Thin = c.Layers[k].L, c.BurnIn, c.Samples, c.Thin
	cfg.Seed, cfg.Workers, cfg.Starts = layerSeed(c.Seed, k), c.Workers, 1
	cfg.PriorU, cfg.Noise, cfg.Lambda, cfg.FixLambda = c.Layers[k].PriorU, Symmetric, c.Lambda, c.FixLambda
	cfg.Init, cfg.Kernel = InitRandom, c.Kernel
	if c.Layers[k].Lambda != 0 {
		cfg.Lambda = c.Layers[k].Lambda
	}
	if k == 0 {
		cfg.Init = c.Init
	}
	if k == len(c.Layers)-1 {
		cfg.PriorZ = c.PriorZ
	}
	return cfg
}

// layerSeed returns the seed of layer k's streams; layer 0 uses the
// configured seed itself, so that one layer is a plain single-chain run.
func layerSeed(seed uint64, k int) uint64 {
	if k == 0 {
		return seed
	}
	return splitmix.Mix(seed ^ splitmix.Mix(uint64(k)<<32^0x4c61796572))
}

func (c *LayersConfig) validate() error {
	if len(c.Layers) == 0 {
		return fmt.Errorf("%w: no layer", ErrConfig)
	}
	for k, l := range c.Layers {
		if l.L < 1 || l.L > MaxL {
			return fmt.Errorf("%w: layer %d has L = %d outside 1..%d", ErrConfig, k+1, l.L, MaxL)
		}
		if k > 0 && l.PriorU.Kind == Empirical {
			return fmt.Errorf("%w: layer %d's codes have the empirical prior, which only the first layer (fixed data) can have", ErrConfig, k+1)
		}
	}
	if len(c.Layers) > 1 && c.PriorZ.Kind == Empirical {
		return fmt.Errorf("%w: the top layer's Z has the empirical prior, which only a single layer can have", ErrConfig)
	}
	for k := range c.Layers {
		if _, err := c.layerConfig(k).resolve(); err != nil {
			return fmt.Errorf("layer %d: %w", k+1, err)
		}
	}
	return nil
}

// LayersSampler runs the multi-layer OrMachine: every layer's sweep in
// turn, from the data up, during burn-in; then each layer's sample sweeps
// in turn with the others held fixed, each sampled layer set to its MAP
// (posterior mean ≥ ½) before the next is sampled. It is not safe for
// concurrent use.
type LayersSampler struct {
	cfg    LayersConfig
	layers []*Sampler
	// x and xt are the data of layer k ≥ 1 (index k): a copy of Z_{k−1}
	// by cells and by codes.
	x, xt []*Matrix
	sweep int
}

// NewLayersSampler checks data against cfg and returns a LayersSampler at
// sweep 0. Layer k's draws are keyed by a seed derived from (cfg.Seed, k).
// It stops, returning ctx.Err(), when ctx is done between layers.
func NewLayersSampler(ctx context.Context, data Data, cfg LayersConfig) (*LayersSampler, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	K := len(cfg.Layers)
	s := &LayersSampler{cfg: cfg, x: make([]*Matrix, K), xt: make([]*Matrix, K)}
	for k := range K {
		d := data
		if k > 0 {
			below := s.layers[k-1]
			s.x[k], s.xt[k] = NewMatrix(below.n, below.l), NewMatrix(below.l, below.n)
			copyCodes(s.x[k], s.xt[k], below.chains[0].z, below.l)
			d = Data{X: s.x[k], XT: s.xt[k]}
		}
		ls, err := NewSampler(ctx, d, cfg.layerConfig(k))
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", k+1, err)
		}
		if k < K-1 {
			ls.above = make([]uint64, ls.nw*ls.l)
		}
		s.layers = append(s.layers, ls)
	}
	return s, nil
}

// copyCodes writes the interleaved codes z (L bitsets over rows) into x
// (rows × L) and xt (L × rows).
func copyCodes(x, xt *Matrix, z []uint64, L int) {
	for l := range L {
		row := xt.Segment(l, 0)
		for w := range row {
			row[w] = z[w*L+l]
		}
	}
	for n := range x.Rows() {
		var word uint64
		for l := range L {
			word |= (z[n/64*L+l] >> uint(n%64) & 1) << uint(l)
		}
		x.Segment(n, 0)[0] = word
	}
}

// booleanProduct sets dst (interleaved like z, over L_below codes) to
// OR_j z_j ∧ u_jl: z holds the rows' L codes interleaved, and u code j's
// bitset over the L_below codes of the layer below (one word, u[j]).
func booleanProduct(dst, z, u []uint64, L, Lbelow int) {
	for w := range len(z) / L {
		zw := z[w*L : w*L+L]
		out := dst[w*Lbelow : w*Lbelow+Lbelow]
		clear(out)
		for j, bitsJ := range zw {
			for m := u[j]; m != 0; m &= m - 1 {
				out[bits.TrailingZeros64(m)] |= bitsJ
			}
		}
	}
}

// Layers returns the number of layers.
func (s *LayersSampler) Layers() int { return len(s.layers) }

// Sweep returns the number of completed sweeps of the schedule.
func (s *LayersSampler) Sweep() int { return s.sweep }

// Sweeps returns the length of the schedule: BurnIn sweeps of every layer,
// then Samples sweeps of each layer in turn.
func (s *LayersSampler) Sweeps() int { return s.cfg.BurnIn + len(s.layers)*s.cfg.Samples }

// Kernel returns the name of the sweep kernel.
func (s *LayersSampler) Kernel() string { return s.layers[0].Kernel() }

// Step runs one sweep of the schedule; it returns errDone after the last.
// Its statistics are the schedule's Sweep and Phase, and the statistics of
// the layers swept (SweepStats.Layers, from the first layer swept): every
// layer during burn-in, the sampled one afterwards.
func (s *LayersSampler) Step() (SweepStats, error) {
	if s.sweep >= s.Sweeps() {
		return SweepStats{}, errDone
	}
	start := time.Now()
	st := SweepStats{Sweep: s.sweep, Phase: BurnIn}
	lo, hi := 0, len(s.layers)
	if s.sweep >= s.cfg.BurnIn {
		st.Phase = Sample
		lo = (s.sweep - s.cfg.BurnIn) / s.cfg.Samples
		hi = lo + 1
	}
	for k := lo; k < hi; k++ {
		s.prepare(k)
		ls, err := s.layers[k].Step()
		if err != nil {
			return st, fmt.Errorf("layer %d: %w", k+1, err)
		}
		st.Layers = append(st.Layers, ls)
		if st.Phase == Sample && s.layers[k].sweep == s.layers[k].Sweeps() {
			s.layers[k].toMAP()
		}
	}
	s.sweep++
	st.Seconds = time.Since(start).Seconds()
	return st, nil
}

// prepare gives layer k the current state of its neighbours: its data, a
// copy of the Z below (k ≥ 1), and the Boolean product and λ of the layer
// above (below the top).
func (s *LayersSampler) prepare(k int) {
	ls := s.layers[k]
	if k > 0 {
		below := s.layers[k-1]
		copyCodes(s.x[k], s.xt[k], below.chains[0].z, below.l)
		ls.obsOnes = int64(s.x[k].Count())
	}
	if k+1 < len(s.layers) {
		up := s.layers[k+1]
		c := up.chains[0]
		booleanProduct(ls.above, c.z, c.u, up.l, ls.l)
		ls.aboveGain = c.rates.lambda
	}
}

// toMAP sets the chain's Z and U to their MAP (posterior mean ≥ ½), keeping
// its λ: the layers sampled later see this layer fixed at its MAP.
func (s *Sampler) toMAP() {
	c := s.chains[0]
	mapBits := func(dst []uint64, count []uint32) {
		clear(dst)
		for i, k := range count {
			if 2*int(k) >= s.retained {
				r, l := i/s.l, i%s.l
				dst[r/64*s.l+l] |= 1 << uint(r%64)
			}
		}
	}
	mapBits(c.z, s.zCount)
	mapBits(c.u, s.uCount)
}

// Run runs the remaining sweeps, calling onSweep (if not nil) after each
// with Step's statistics; Result then gives the posterior summary.
// Cancellation and callback errors stop it between sweeps, as Sampler.Run.
func (s *LayersSampler) Run(ctx context.Context, onSweep func(SweepStats) error) error {
	for s.sweep < s.Sweeps() {
		if err := ctx.Err(); err != nil {
			return err
		}
		st, err := s.Step()
		if err != nil {
			return err
		}
		if onSweep != nil {
			if err := onSweep(st); err != nil {
				return fmt.Errorf("gibbs: sweep %d callback: %w", st.Sweep, err)
			}
		}
	}
	return nil
}

// LayersResult is the posterior summary of a multi-layer run.
type LayersResult struct {
	// Layers[k] summarises layer k: its Z (cells × L_k), its U (L_{k−1}
	// × L_k, or genes × L₀), its λ and its trace.
	Layers []*Result
}

// Result returns the posterior summary; every layer must have retained a
// sample.
func (s *LayersSampler) Result() (*LayersResult, error) {
	r := &LayersResult{}
	for k, ls := range s.layers {
		res, err := ls.Result()
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", k+1, err)
		}
		r.Layers = append(r.Layers, res)
	}
	return r, nil
}

// Prototypes returns, for every code l of layer k, the probability that
// each datum (gene) is on when z_k is the one-hot vector of l, the code fed
// forward through the MAP codes of layers k, k−1, …, 0: out[d*L_k+l]. At
// layer k the units below are on with probability σ(±λ_k) as code l's MAP
// switches them on or off; through each lower layer m the probability
// that unit d is on is σ(−λ_m) + (σ(λ_m) − σ(−λ_m))·(1 − ∏_i (1 − p_i
// u_m,di)), treating the units of the layer above as independent. That is
// exact for k ≤ 1 (the units of the layer below a one-hot z are
// independent) and a mean-field approximation above.
func (r *LayersResult) Prototypes(k int) []float64 {
	top := r.Layers[k]
	D := r.Layers[0].D
	out := make([]float64, D*top.L)
	for l := range top.L {
		p := make([]float64, top.D)
		for i := range p {
			p[i] = onProb(top.uMAP(i, l), top.Lambda)
		}
		for m := k - 1; m >= 0; m-- {
			lay := r.Layers[m]
			q := make([]float64, lay.D)
			for d := range q {
				off := 1.0
				for i, pi := range p {
					if lay.uMAP(d, i) {
						off *= 1 - pi
					}
				}
				q[d] = sigmoid(-lay.Lambda) + (sigmoid(lay.Lambda)-sigmoid(-lay.Lambda))*(1-off)
			}
			p = q
		}
		for d, v := range p {
			out[d*top.L+l] = v
		}
	}
	return out
}

// onProb returns σ(λ) when on, else σ(−λ).
func onProb(on bool, lambda float64) float64 {
	if on {
		return sigmoid(lambda)
	}
	return sigmoid(-lambda)
}

const layersMagic = "scpLAYER"

// layersVersion is the encoding's version.
const layersVersion = 1

// MarshalBinary encodes the full state: the schedule's sweep and every
// layer's state (Sampler.MarshalBinary). A LayersSampler built from the
// same data and LayersConfig and given these bytes continues exactly as
// this one would.
func (s *LayersSampler) MarshalBinary() ([]byte, error) {
	b := []byte(layersMagic)
	b = binary.LittleEndian.AppendUint64(b, layersVersion)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s.layers)))
	b = binary.LittleEndian.AppendUint64(b, uint64(s.sweep))
	for _, ls := range s.layers {
		part, err := ls.MarshalBinary()
		if err != nil {
			return nil, err
		}
		b = binary.LittleEndian.AppendUint64(b, uint64(len(part)))
		b = append(b, part...)
	}
	return b, nil
}

// UnmarshalBinary replaces the state by one encoded by MarshalBinary. The
// sampler must have been built from the same data and configuration
// (Workers may differ); otherwise it returns an error wrapping errState
// and leaves the sampler unchanged.
func (s *LayersSampler) UnmarshalBinary(data []byte) error {
	if len(data) < len(layersMagic) || string(data[:len(layersMagic)]) != layersMagic {
		return fmt.Errorf("%w: missing magic %q", errState, layersMagic)
	}
	r := &stateReader{b: data[len(layersMagic):]}
	if v := r.u64(); r.err == nil && v != layersVersion {
		return fmt.Errorf("%w: multi-layer version %d, want %d", errState, v, layersVersion)
	}
	if v := r.u64(); r.err == nil && v != uint64(len(s.layers)) {
		return fmt.Errorf("%w: %d layers, this sampler has %d", errState, v, len(s.layers))
	}
	sweep := r.count(s.Sweeps())
	parts := make([][]byte, len(s.layers))
	for k := range parts {
		n := r.count(len(r.b))
		if r.err != nil {
			return r.err
		}
		parts[k], r.b = r.b[:n], r.b[n:]
	}
	if r.err != nil {
		return r.err
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", errState, len(r.b))
	}
	backup := make([][]byte, len(s.layers))
	for k, ls := range s.layers {
		backup[k], _ = ls.MarshalBinary()
	}
	restore := func(upTo int) {
		for k := range upTo {
			_ = s.layers[k].UnmarshalBinary(backup[k]) // it was this sampler's own state
		}
	}
	for k, ls := range s.layers {
		err := ls.UnmarshalBinary(parts[k])
		if err == nil && ls.sweep != s.layerSweeps(k, sweep) {
			err = fmt.Errorf("%w: layer %d is at sweep %d, the schedule's sweep %d needs %d", errState, k+1, ls.sweep, sweep, s.layerSweeps(k, sweep))
		}
		if err != nil {
			restore(k + 1)
			return fmt.Errorf("layer %d: %w", k+1, err)
		}
	}
	s.sweep = sweep
	return nil
}

// layerSweeps returns how many sweeps layer k has run after t sweeps of
// the schedule.
func (s *LayersSampler) layerSweeps(k, t int) int {
	burn := min(t, s.cfg.BurnIn)
	sampled := min(max(t-s.cfg.BurnIn-k*s.cfg.Samples, 0), s.cfg.Samples)
	return burn + sampled
}

// Lambdas returns each layer's current λ.
func (s *LayersSampler) Lambdas() []float64 {
	out := make([]float64, len(s.layers))
	for k, ls := range s.layers {
		out[k] = ls.chains[0].rates.lambda
	}
	return out
}
