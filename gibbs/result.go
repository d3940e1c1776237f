package gibbs

import (
	"errors"
	"fmt"
	"math"
)

// errNoSamples is returned when a posterior summary or a sample average is
// asked for before any sample has been retained (or, for the sample average,
// when Config.KeepSamples was off).
var errNoSamples = errors.New("gibbs: no retained samples")

// Result is the posterior summary of a run.
type Result struct {
	// N cells, D genes and L codes: the sampler's, the housekeeping code
	// (the last) among them.
	N, D, L int
	// ZMean[n*L+l] is the posterior mean of z_nl, UMean[d*L+l] that of u_ld,
	// averaged over the retained samples.
	ZMean, UMean []float64
	// Housekeeping says whether code L−1 is a housekeeping code
	// (Config.Housekeeping), which Codes lists apart.
	Housekeeping bool
	// Samples is the number of retained samples behind the means.
	Samples int
	// Noise is the likelihood the chain ran with.
	Noise Noise
	// Lambda is λ after the last sweep (Symmetric; NaN under Dropout), and
	// Dropout and Background the rates P(x = 0 | covered) and P(x = 1 |
	// not covered) after it; the plug-in predictive uses them.
	Lambda              float64
	Dropout, Background float64
	// CellDropout and CellBackground are each cell's rates (with per-cell
	// levels, Config.CellLevels > 1; nil otherwise).
	CellDropout, CellBackground []float64
	// GeneLift is each gene's offset to the gain of a covered one, log
	// P(x = 1 | covered)/P(x = 1 | not covered) (with per-gene levels,
	// Config.GeneLevels > 1; nil otherwise): the rates of cell n and
	// gene d are those of the gain log(1 − CellDropout[n]) −
	// log CellBackground[n] + GeneLift[d] under the cell's ρ =
	// CellDropout[n]/(1 − CellBackground[n]) (EntryRates). CellDropout and
	// CellBackground are then those of a gene of offset 0.
	GeneLift []float64
	// With samples (Config.CellSamples, cellsamples.go) each gene has an
	// offset in each sample: SampleGeneLift[s][d], for the cells of
	// sample CellSamples[n] = s; GeneLift is then their mean over the
	// cells.
	SampleGeneLift [][]float64
	CellSamples    []uint16
	// Trace has one entry per sweep run so far.
	Trace []SweepStats

	kept []keptSample
}

// Result returns the posterior summary of the samples retained so far.
func (s *Sampler) Result() (*Result, error) {
	if s.retained == 0 {
		return nil, errNoSamples
	}
	c := s.chains[0]
	r := &Result{N: s.n, D: s.d, L: s.l, Housekeeping: s.cfg.Housekeeping, Samples: s.retained, Noise: s.cfg.Noise, Lambda: math.NaN(),
		Dropout: 1 - c.rates.on, Background: c.rates.off,
		Trace: append([]SweepStats(nil), s.trace...), kept: s.kept}
	if s.cfg.Noise == Symmetric {
		r.Lambda = c.rates.lambda
	}
	if c.level != nil {
		r.CellDropout, r.CellBackground = make([]float64, s.n), make([]float64, s.n)
		for n, k := range c.level {
			on, off := c.rates.cellRates(k)
			r.CellDropout[n], r.CellBackground[n] = 1-on, off
		}
	}
	if c.geneLevel != nil {
		r.GeneLift = make([]float64, s.d)
		for d, k := range c.geneLevel[:s.d] {
			r.GeneLift[d] = c.rates.geneLift(k)
		}
	}
	if s.smp != nil {
		s.sampleResult(r, c)
	}
	r.ZMean = means(s.zCount, s.retained)
	r.UMean = means(s.uCount, s.retained)
	return r, nil
}

// Codes returns the posterior means of the Config's L codes, U's (genes
// × L) and Z's (cells × L), and of the housekeeping code's u (one per
// gene; nil without one), whose z are all 1.
func (r *Result) Codes() (L int, uMean, zMean, housekeeping []float64) {
	if !r.Housekeeping {
		return r.L, r.UMean, r.ZMean, nil
	}
	uMean, housekeeping = dropLastCol(r.UMean, r.L)
	zMean, _ = dropLastCol(r.ZMean, r.L)
	return r.L - 1, uMean, zMean, housekeeping
}

// dropLastCol splits the rows × L matrix m into its first L−1 columns and
// its last.
func dropLastCol(m []float64, L int) (rest, last []float64) {
	rows := len(m) / L
	rest, last = make([]float64, 0, rows*(L-1)), make([]float64, rows)
	for i := range rows {
		rest = append(rest, m[i*L:i*L+L-1]...)
		last[i] = m[i*L+L-1]
	}
	return rest, last
}

func means(count []uint32, n int) []float64 {
	out := make([]float64, len(count))
	for i, c := range count {
		out[i] = float64(c) / float64(n)
	}
	return out
}

// zMAP reports whether z_nl is on in the MAP estimate (posterior mean ≥ 1/2).
func (r *Result) zMAP(n, l int) bool { return r.ZMean[n*r.L+l] >= 0.5 }

// uMAP reports whether u_ld is on in the MAP estimate (posterior mean ≥ 1/2).
func (r *Result) uMAP(d, l int) bool { return r.UMean[d*r.L+l] >= 0.5 }

// Reconstruct reports whether x_nd is on in the Boolean product of the MAP
// estimates of Z and U.
func (r *Result) Reconstruct(n, d int) bool {
	for l := range r.L {
		if r.zMAP(n, l) && r.uMAP(d, l) {
			return true
		}
	}
	return false
}

// Method selects how Result predicts P(x_nd = 1).
type Method uint8

const (
	// PlugIn plugs the expected coverage c = 1 − ∏_l(1 − ẑ_nl·û_ld) of the
	// posterior means into the likelihood, as the paper's fast path does:
	// P(x_nd = 1) = σ(λ·(2c − 1)) with the final λ (Symmetric), or
	// β + (1 − α − β)·c with the final rates (Dropout).
	PlugIn Method = iota
	// SampleMean averages p(x_nd = 1 | Z⁽ˢ⁾, U⁽ˢ⁾) over the retained
	// samples, each with its own parameters: 1 − α⁽ˢ⁾ where some code covers
	// (n, d), β⁽ˢ⁾ elsewhere (σ(±λ⁽ˢ⁾) under Symmetric). It needs
	// Config.KeepSamples.
	SampleMean
)

// entry is one matrix entry: a cell (row of X) and a gene (column of X).
type entry struct{ Cell, Gene int }

// Predict returns P(x_nd = 1) under method.
func (r *Result) Predict(n, d int, method Method) (float64, error) {
	var p [1]float64
	_, err := r.predictEntries(p[:0], []entry{{n, d}}, method)
	return p[0], err
}

// predictEntries appends P(x = 1) for each entry to dst and returns it.
func (r *Result) predictEntries(dst []float64, entries []entry, method Method) ([]float64, error) {
	for _, e := range entries {
		if uint(e.Cell) >= uint(r.N) || uint(e.Gene) >= uint(r.D) {
			return dst, fmt.Errorf("gibbs: entry (%d, %d) outside %d × %d", e.Cell, e.Gene, r.N, r.D)
		}
	}
	switch method {
	case PlugIn:
		for _, e := range entries {
			dst = append(dst, r.plugIn(e.Cell, e.Gene))
		}
		return dst, nil
	case SampleMean:
		if len(r.kept) == 0 {
			return dst, fmt.Errorf("%w: sample-averaged prediction needs Config.KeepSamples", errNoSamples)
		}
		for _, e := range entries {
			g := e.Gene
			if r.CellSamples != nil {
				g += int(r.CellSamples[e.Cell]) * r.D
			}
			dst = append(dst, sampleMean(r.kept, r.L, e.Cell, e.Gene, g))
		}
		return dst, nil
	}
	return dst, fmt.Errorf("gibbs: unknown prediction method %d", method)
}

// plugIn is the plug-in predictive of (n, d). The explicit conversions
// forbid fused multiply-adds, so that every build rounds alike.
func (r *Result) plugIn(n, d int) float64 {
	prod := 1.0
	for l := range r.L {
		prod *= 1 - float64(r.ZMean[n*r.L+l]*r.UMean[d*r.L+l])
	}
	if r.Noise == Symmetric {
		return sigmoid(r.Lambda * (1 - float64(2*prod)))
	}
	if r.GeneLift != nil {
		lift := r.GeneLift[d]
		if r.SampleGeneLift != nil {
			lift = r.SampleGeneLift[r.CellSamples[n]][d]
		}
		on, off := EntryRates(r.CellDropout[n], r.CellBackground[n], lift)
		return off + float64((on-off)*(1-prod))
	}
	if r.CellBackground != nil {
		return r.CellBackground[n] + float64((1-r.CellDropout[n]-r.CellBackground[n])*(1-prod))
	}
	return r.Background + float64((1-r.Dropout-r.Background)*(1-prod))
}

// covered reports whether some code l has z_nl = u_ld = 1 in the interleaved
// bitsets z and u.
func covered(z, u []uint64, L, n, d int) bool {
	zw, zb := z[n/64*L:n/64*L+L], uint(n%64)
	uw, ub := u[d/64*L:d/64*L+L], uint(d%64)
	for l := range L {
		if (zw[l]>>zb)&(uw[l]>>ub)&1 != 0 {
			return true
		}
	}
	return false
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// EntryRates returns P(x = 1 | covered) and P(x = 1 | not covered) of an
// entry whose cell has rates dropout and background (those of a gene of
// offset 0) and whose gene has offset lift (Result.GeneLift): the cell's
// gain raised by lift, under the cell's ρ.
func EntryRates(dropout, background, lift float64) (on, off float64) {
	rho := dropout / (1 - background)
	g := math.Log1p(-dropout) - math.Log(background) + lift
	off = levelBackground(rho, g)
	return 1 - rho*(1-off), off
}
