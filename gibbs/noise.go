package gibbs

import (
	"fmt"
	"math"
)

// Noise selects the likelihood of an observed entry x_nd given whether the
// Boolean product covers it (some code l has z_nl = u_ld = 1).
type Noise uint8

const (
	// Symmetric is the paper's model: P(x_nd = covered) = σ(λ), one error
	// rate for ones and zeros alike.
	Symmetric Noise = iota
	// Dropout has a rate for each kind of error, as single-cell data need:
	// a covered entry is a one with probability 1 − α (α: the dropout
	// rate), an uncovered entry with probability β (the background rate).
	// With α = β = σ(−λ) it is Symmetric.
	Dropout
)

var noiseNames = [...]string{Symmetric: "symmetric", Dropout: "dropout"}

// String returns "symmetric" or "dropout".
func (n Noise) String() string {
	if int(n) < len(noiseNames) {
		return noiseNames[n]
	}
	return fmt.Sprintf("Noise(%d)", n)
}

// MarshalText implements encoding.TextMarshaler.
func (n Noise) MarshalText() ([]byte, error) {
	if int(n) >= len(noiseNames) {
		return nil, fmt.Errorf("gibbs: unknown noise model %d", n)
	}
	return []byte(n.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (n *Noise) UnmarshalText(b []byte) error {
	for k, name := range noiseNames {
		if string(b) == name {
			*n = Noise(k)
			return nil
		}
	}
	return fmt.Errorf("noise model %q: want symmetric or dropout", b)
}

// rates are the parameters of a chain's likelihood: P(x = 1 | covered) and
// P(x = 1 | not covered), and for Symmetric the λ they come from.
type rates struct {
	lambda  float64 // Symmetric only
	on, off float64
	// With per-cell levels (depth.go): ρ, and the gain of level 0 and the
	// step between levels; on and off are then the means over the cells.
	rho, lift0, step float64
	// With per-gene levels (genelevels.go): the offset of gene level 0 and
	// the step between gene levels, added to the cell level's gain.
	gene0, geneStep float64
}

// symmetricRates returns the rates of the paper's model with dispersion λ.
func symmetricRates(lambda float64) rates {
	return rates{lambda: lambda, on: sigmoid(lambda), off: sigmoid(-lambda)}
}

// gains returns the log-likelihood change of an observed one (one) and of
// an observed zero (zero) when the entry becomes covered.
func (r rates) gains() (one, zero float64) {
	return math.Log(r.on) - math.Log(r.off), math.Log1p(-r.on) - math.Log1p(-r.off)
}

// tally holds the integer counts a sweep's λ or rate update and its
// log-likelihood need: the observed entries, the observed ones, and those
// that the state after the sweep covers and mispredicts.
type tally struct{ observed, ones, covered, miss int64 }

// split returns the observed entries by coverage and value: covered ones
// (true positives) and zeros (dropouts), uncovered ones (background) and
// zeros.
func (t tally) split() (covOnes, covZeros, uncOnes, uncZeros int64) {
	// miss = covered zeros + uncovered ones and ones = covered ones +
	// uncovered ones, so covered ones = (covered + ones − miss)/2.
	covOnes = (t.covered + t.ones - t.miss) / 2
	covZeros = t.covered - covOnes
	uncOnes = t.ones - covOnes
	uncZeros = t.observed - t.covered - uncOnes
	return
}

// update returns the rates after a sweep whose state has counts t: their
// maximum-likelihood values under noise, or old when fixed or nothing is
// observed.
func (n Noise) update(t tally, old rates, fixed bool) rates {
	if fixed || t.observed == 0 {
		return old
	}
	if n == Symmetric {
		return symmetricRates(mleLambda(t.observed-t.miss, t.observed, old.lambda))
	}
	covOnes, _, uncOnes, _ := t.split()
	uncovered := t.observed - t.covered
	// Each rate is its frequency, kept half an entry away from 0 and 1 so
	// that its logarithms stay finite; a rate with no entries keeps its
	// value.
	rate := func(k, n int64, old float64) float64 {
		if n == 0 {
			return old
		}
		return min(max(float64(k), 0.5), float64(n)-0.5) / float64(n)
	}
	on, off := rate(covOnes, t.covered, old.on), rate(uncOnes, uncovered, old.off)
	if t.covered > 0 && uncovered > 0 && on <= off {
		// Covering does not raise the chance of a one: the data carry no
		// signal under the model (λ = 0 in the symmetric one).
		on = float64(t.ones) / float64(t.observed)
		on = min(max(on, 0.5/float64(t.observed)), 1-0.5/float64(t.observed))
		off = on
	}
	return rates{on: on, off: off}
}

// logLik returns log p(X_obs | Z, U, rates) of a state with counts t.
func (n Noise) logLik(t tally, r rates) float64 {
	if n == Symmetric {
		return logLik(t.observed-t.miss, t.observed, r.lambda)
	}
	covOnes, covZeros, uncOnes, uncZeros := t.split()
	// The conversions forbid fusing into FMAs, which would change the
	// last bit with the build.
	term := func(k int64, p float64) float64 {
		if k == 0 {
			return 0
		}
		return float64(float64(k) * p)
	}
	return term(covOnes, math.Log(r.on)) + term(covZeros, math.Log1p(-r.on)) +
		term(uncOnes, math.Log(r.off)) + term(uncZeros, math.Log1p(-r.off))
}

// initialRates returns the rates of a chain's first sweep: λ's for
// Symmetric; for Dropout the configured ones, or else a covered entry a one
// with probability ½ and the background half the data's density.
func initialRates(cfg *Config, density float64) rates {
	if cfg.Noise == Symmetric {
		return symmetricRates(cfg.Lambda)
	}
	on, off := 1-cfg.Dropout, cfg.Background
	if cfg.Dropout == 0 {
		on = 0.5
	}
	if cfg.Background == 0 {
		off = min(max(density/2, 1e-6), 0.25)
	}
	return rates{on: on, off: off}
}

// mleLambda returns λ maximising σ(λ)^P σ(−λ)^(obs−P) over λ ≥ 0, with
// σ(λ) = P/obs clamped to [1/2, 1 − 1/(2·obs)]: λ is finite when every entry
// is predicted correctly, and 0 (the data carry no signal) when at most half
// are. Without observed entries λ is left unchanged.
func mleLambda(correct, observed int64, old float64) float64 {
	if observed == 0 {
		return old
	}
	p := float64(correct) / float64(observed)
	p = min(max(p, 0.5), 1-0.5/float64(observed))
	return math.Log(p) - math.Log1p(-p)
}

// logLik returns P·log σ(λ) + (obs−P)·log σ(−λ).
func logLik(correct, observed int64, lambda float64) float64 {
	// log σ(λ) = −softplus(−λ); softplus(t) = max(t, 0) + log1p(e^−|t|).
	sp := math.Log1p(math.Exp(-math.Abs(lambda)))
	logPos := -(max(-lambda, 0) + sp)
	logNeg := -(max(lambda, 0) + sp)
	// The conversions forbid fusing into FMAs (GOAMD64=v3, arm64), which
	// would change the last bit of the result with the build.
	return float64(float64(correct)*logPos) + float64(float64(observed-correct)*logNeg)
}
