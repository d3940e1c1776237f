package gibbs

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxL is the largest number of latent codes a Sampler supports: a row's codes
// are held in one uint64.
const MaxL = 64

// MaxSweeps bounds BurnIn and Samples (and a start's sweeps): a trillion
// sweeps, thirty years at a millisecond each, and far from the sums of
// them overflowing an int (BurnIn 9e18 with Samples 10 000 panicked
// making the trace).
const MaxSweeps = 1 << 40

// ErrConfig is wrapped by the errors that report an invalid Config.
var ErrConfig = errors.New("gibbs: invalid config")

// FieldError is an invalid field of a Config, named as Config names it, so
// that a caller that takes the settings by other names (pipeline's TOML
// keys) can say which of its own is wrong. It wraps ErrConfig.
type FieldError struct {
	Field string // the Config field: BurnIn, PriorU, …
	Msg   string // what is wrong, after the field's name: "= -1 outside 0..1099511627776"
}

func (e *FieldError) Error() string { return ErrConfig.Error() + ": " + e.Field + " " + e.Msg }

// Unwrap returns ErrConfig.
func (e *FieldError) Unwrap() error { return ErrConfig }

// fieldError returns a *FieldError for field.
func fieldError(field, format string, a ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

// PriorKind selects how a Prior sets the Bernoulli probabilities of a factor.
type PriorKind uint8

const (
	// Uniform is p = 1/2 for every variable: the prior drops out of the
	// conditionals.
	Uniform PriorKind = iota
	// Fixed uses the probabilities in Prior.P: one value for every code, or
	// one per code.
	Fixed
	// Empirical sets p = q for every code, where q solves
	// 1 − (1 − q²)^L = density and density is the fraction of ones among the
	// observed entries (the paper's empirical Bayes choice).
	Empirical
)

// Prior is the independent Bernoulli prior of one factor matrix (Z or U).
// The zero value is Uniform.
type Prior struct {
	Kind PriorKind
	// P holds a Fixed prior's probabilities, each in (0, 1): one for
	// every code; or one per code of the L, the housekeeping code (when
	// there is one) taking p = 1/2, its prior dropping out; or one for
	// each of the L codes and the housekeeping code, its last.
	P []float64
}

// FixedPrior returns a Fixed prior: one probability for all codes, or one per code.
func FixedPrior(p ...float64) Prior { return Prior{Kind: Fixed, P: p} }

// EmpiricalPrior returns the empirical Bayes prior.
func EmpiricalPrior() Prior { return Prior{Kind: Empirical} }

// Init selects how a chain's Z and U are initialised.
type Init uint8

const (
	// InitRandom sets every z_nl and u_ld by a fair coin, as the paper does.
	InitRandom Init = iota
	// InitData sets Z to zero and seeds each code of U from a cell: of 16
	// cells drawn at random (keyed by the chain's seed), the first whose
	// observed ones not covered by earlier codes reach the candidates' mean
	// count; the code is set to those uncovered ones. On sparse data (such as
	// single-cell expression) a random start's codes explain nothing and the
	// chain collapses towards the empty factorisation; seeded codes avoid it.
	InitData
	// InitCluster sets Z to zero and seeds the codes from cell types: it
	// clusters up to 4000 cells (drawn with the chain's seed) by bisecting
	// spherical k-means on their ones, weighted by inverse detection
	// frequency, always splitting the largest cluster and never leaving
	// one below 1% of the cells (or 10), and seeds code l with the genes
	// distinctive of cluster l (see seedClusters). A code seeded from one
	// cell, as InitData does, follows that cell's depth as much as its
	// type; a cluster's distinctive genes follow the type.
	InitCluster
)

var initNames = [...]string{InitRandom: "random", InitData: "data", InitCluster: "cluster"}

// String returns "random", "data" or "cluster".
func (i Init) String() string {
	if int(i) < len(initNames) {
		return initNames[i]
	}
	return fmt.Sprintf("Init(%d)", i)
}

// MarshalText implements encoding.TextMarshaler.
func (i Init) MarshalText() ([]byte, error) {
	if int(i) >= len(initNames) {
		return nil, fmt.Errorf("gibbs: unknown init %d", i)
	}
	return []byte(i.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (i *Init) UnmarshalText(b []byte) error {
	for k, name := range initNames {
		if string(b) == name {
			*i = Init(k)
			return nil
		}
	}
	return fmt.Errorf("init %q: want cluster, data or random", b)
}

// Config holds the parameters of a Sampler. Start from DefaultConfig.
type Config struct {
	// L is the number of latent codes, fixed and free, not counting the
	// housekeeping code: 1 ≤ L ≤ MaxL, and L < MaxL with one.
	L int
	// BurnIn sweeps are run before Samples sweeps; every Thin-th sample sweep
	// is retained (contributes to the posterior means). Samples/Thin ≥ 1.
	BurnIn, Samples, Thin int
	// Seed keys every random draw together with (sweep, step, variable).
	Seed uint64
	// Workers is the number of goroutines per step; 0 means GOMAXPROCS.
	// Results do not depend on it.
	Workers int
	// PriorZ and PriorU are the priors of Z (cells × codes) and U (genes × codes).
	PriorZ, PriorU Prior
	// Noise is the likelihood of an entry given the Boolean product.
	Noise Noise
	// Lambda is the initial dispersion λ > 0 of the Symmetric likelihood,
	// used by the first sweep.
	Lambda float64
	// Dropout and Background are the initial rates α and β of the Dropout
	// likelihood, in [0, 1); 0 leaves them to the sampler: α = ½ and β half
	// the data's density. Background must be below 1 − Dropout.
	Dropout, Background float64
	// FixLambda holds the likelihood's parameters (λ, or α and β) at their
	// initial values instead of setting them to their maximum-likelihood
	// values after every sweep. With it the sampler is an exact MCMC
	// sampler of p(Z, U | X, λ) (or of p(Z, U | X, α, β)).
	FixLambda bool
	// HoldFrom, when positive, ends the estimation of the likelihood's
	// parameters at sweep HoldFrom: λ or the rates, and with levels ρ,
	// the levels' grids and every cell's and gene's level, are set to
	// their maximum-likelihood values given the state after each of sweeps
	// 0 … HoldFrom−1 (an empirical-Bayes burn-in) and held at the last of
	// them from then on. The later sweeps are then an exact MCMC sampler
	// of p(Z, U | X, θ̂), and every retained state is drawn under the same
	// θ̂ (HoldFrom ≤ BurnIn). 0 sets them after every sweep, as the paper
	// sets λ.
	HoldFrom int
	// Params, when not nil, gives the Dropout likelihood's parameters (with
	// per-cell levels): another fit's, once held there (Sampler.HeldParams),
	// held here from the first sweep. Chains that share them sample one
	// posterior. Not with FixLambda or HoldFrom.
	Params *Params
	// MaxBurnIn, when above BurnIn (with HoldFrom > 0 or Params), lets the burn-in
	// go on past BurnIn until the chain has settled under the held
	// parameters, at most MaxBurnIn sweeps in all: a window of Samples
	// sampling sweeps whose log-likelihood trends, or whose halves
	// disagree, becomes burn-in and Samples more are drawn (settle.go).
	// 0 (or BurnIn) burns in BurnIn sweeps exactly.
	MaxBurnIn int
	// KeepSamples retains every retained (thinned) state, so that
	// Result.Predict can average the likelihood over samples.
	KeepSamples bool
	// Init selects the initial state of every chain.
	Init Init
	// CellLevels gives the Dropout likelihood per-cell background levels
	// (the Symmetric likelihood has none and ignores them): 1 (or 0) for
	// one background for every cell, or 2, 4 or 8: a cell that detects more genes has a higher
	// background and a smaller gain per detected gene (depth.go). A sweep
	// then updates U before Z, so that the Z step's per-cell counts
	// describe the sweep's final state, from which the levels are set;
	// and a chain's Z starts with a Z step given its first U.
	CellLevels int
	// GeneLevels gives each gene a background level too (ignored without
	// per-cell levels): 1 (or 0) for none, or 2, 4 or 8: a gene detected in many
	// cells whatever codes they use sits at a higher background, where
	// covering its ones gains less (genelevels.go). The levels are first
	// set after sweep BurnIn/2 (HoldFrom/2 with a hold), once the codes
	// have formed; until then every gene's offset is 0.
	GeneLevels int
	// Housekeeping adds a code that every cell uses, beside the L codes
	// (the sampler's last, code L, whose z are clamped to 1): it collects
	// the genes detected everywhere (ribosomal, mitochondrial, …), at the
	// covered rate, so that no other code is spent on them. Result lists it
	// apart from the L codes (Result.Codes).
	Housekeeping bool
	// Reseed re-seeds, during the burn-in, every code that covers nothing
	// (no gene, or no cell uses it) from the observed ones the state leaves
	// unexplained, or by splitting a code that holds two programs
	// (reseed.go): twice, five sweeps apart, from the sweep the starts'
	// best is kept (sweep 1 with one start), where five burn-in sweeps
	// still follow (Schedule lists them). A code that no move of a single
	// bit can grow thus takes a program the start missed; the sampling
	// sweeps are unchanged.
	Reseed bool
	// Swaps adds to every sweep, before its Z step, a proposal for each
	// cell to move from one of its codes to one it does not use in a
	// single step (swap.go): a move that single flips make only through
	// a state that uses both or neither, which with large programs the
	// chain rarely reaches.
	Swaps bool
	// GeneSwaps adds to every U step the same move for a quarter of the
	// genes, before their flips: from one of the gene's codes, the
	// housekeeping code among them, to one it is not in. Under the uniform
	// prior on U a gene that the housekeeping code holds is otherwise
	// never given to one program: while that code covers the gene, the
	// gene's other codes decide no entry, so their Metropolised flips (of
	// logit 0) turn them all on and all off together, sweep after sweep,
	// and the housekeeping code never meets a state in which one program
	// alone holds the gene. It needs every cell in one process
	// (NewSampler refuses a Part).
	GeneSwaps bool
	// SplitMerge is the number of split–merge proposals made on each
	// chain before each burn-in sweep (splitmerge.go), 0 for none: a move
	// that splits a code's cells between it and an unused code, merges
	// two codes, or divides two codes' cells afresh, with their genes, in
	// one Metropolis–Hastings step. The sampling sweeps make none, so
	// that each code keeps its program while its states are averaged.
	// It needs every cell in one process (no Part), and does not weigh
	// samples' gene levels (CellSamples) yet.
	SplitMerge int
	// Starts chains are run for the first StartSweeps burn-in sweeps from
	// seeds derived from Seed; the one with the highest log-likelihood is
	// kept and continued. Starts = 1 runs a single chain keyed by Seed.
	Starts, StartSweeps int
	// Kernel names the sweep kernel, one of Kernels; "" picks the fastest
	// this build and CPU run (the first). Every kernel gives bit-identical
	// results, so the choice only measures one against another.
	Kernel string
	// CellSamples, when not nil, gives each cell's sample, 0 … S−1: a
	// technical grouping (library, lane, donor) whose cells form one
	// contiguous run, the samples in order. With per-gene levels and two
	// samples or more each sample has its own level of every gene, its
	// own background profile (cellsamples.go), so that a sample with more
	// ambient RNA does not take a code of its own. A condition the study
	// compares (treated against control) must not be declared a sample.
	// Without per-gene levels it is ignored.
	CellSamples []uint16
	// FixedCodes are codes of U held at given genes and never sampled:
	// prior knowledge (known gene programs, the codes of another fit),
	// around which the other codes are inferred. Each names its own
	// column of U, one of the L codes. They count in L.
	FixedCodes []FixedCode
}

// FixedCode is a column of U held fixed: u_ld = 1 for the listed genes d
// and 0 for the others, in every state of every chain.
type FixedCode struct {
	Code  int   // the column of U, 0 ≤ Code < L
	Genes []int // the genes the code switches on, each in 0 … D−1
}

// DefaultConfig returns the paper's sampler: L = 2, 100 burn-in and 100
// sample sweeps, seed 1, uniform priors, the Symmetric likelihood with λ
// starting at 1 and re-estimated after each sweep, the paper's random
// initialisation, 4 starts of 10 sweeps, one background for every cell,
// no housekeeping code, and the fastest kernel.
//
// They are the paper's model, for binary data of any kind, and stay so:
// the package's tests and pinned digests start from them. `scpipe fit`
// (pipeline.DefaultFitConfig) changes what single-cell expression needs:
// for data binarised from counts the Dropout likelihood with 8 per-cell
// background levels (a cell's depth would otherwise take codes) and 8
// per-gene ones (a high-baseline gene would otherwise join the codes most
// cells use) and a housekeeping code (binary data keep this package's model: the auto
// model, pipeline.DataKindOf), codes seeded from cell types
// (InitCluster; a random start collapses on sparse data), L = 2..10,
// 4 starts of 5 sweeps (every start is swept, so starts of 10 would cost
// 40 sweeps), and for the Dropout likelihood the parameters estimated in
// the burn-in and held from sweep 100 (HoldFrom), with a burn-in that
// runs on, to at most 300 sweeps, while the samples still climb
// (MaxBurnIn).
func DefaultConfig() Config {
	return Config{
		L:           2,
		BurnIn:      100,
		Samples:     100,
		Thin:        1,
		Seed:        1,
		Lambda:      1,
		Starts:      4,
		StartSweeps: 10,
	}
}

// config is a Config in the sampler's own units, derived once by
// Config.resolve: L counts the housekeeping code (the last), and the
// levels are given by the bits of a level's index. Its L shadows
// Config.L.
type config struct {
	Config
	L                            int
	CellLevelBits, GeneLevelBits int
}

// Validate reports the first invalid setting of c, as NewSampler would,
// wrapping ErrConfig: a *FieldError where one field is to blame. The
// fixed codes' genes are checked against the data by NewSampler alone.
func (c Config) Validate() error {
	_, err := c.resolve()
	return err
}

// resolve checks c and returns it in the sampler's units.
func (c Config) resolve() (config, error) {
	r := config{Config: c, L: c.L}
	if c.Housekeeping {
		r.L++
	}
	bits := func(name string, levels int) (int, error) {
		for b := range MaxCellLevelBits + 1 {
			if levels == 1<<b {
				return b, nil
			}
		}
		if levels == 0 {
			return 0, nil
		}
		return 0, fieldError(name, "= %d: want 1, 2, 4 or 8", levels)
	}
	if c.L < 1 || r.L > MaxL {
		return r, fieldError("L", "= %d outside 1..%d (%d with a housekeeping code)", c.L, MaxL, MaxL-1)
	}
	var err error
	if r.CellLevelBits, err = bits("CellLevels", c.CellLevels); err != nil {
		return r, err
	}
	if r.GeneLevelBits, err = bits("GeneLevels", c.GeneLevels); err != nil {
		return r, err
	}
	if c.Noise != Dropout {
		r.CellLevelBits = 0
	}
	if r.CellLevelBits == 0 {
		r.GeneLevelBits = 0
	}
	return r, r.validate()
}

func (c *config) validate() error {
	switch {
	case c.BurnIn < 0 || c.BurnIn > MaxSweeps:
		return fieldError("BurnIn", "= %d outside 0..%d", c.BurnIn, MaxSweeps)
	case c.Samples < 1 || c.Samples > MaxSweeps:
		return fieldError("Samples", "= %d outside 1..%d", c.Samples, MaxSweeps)
	case c.Thin < 1 || c.Thin > c.Samples:
		return fieldError("Thin", "= %d outside 1..%d, the sample sweeps: it would retain no sample", c.Thin, c.Samples)
	case c.Workers < 0:
		return fieldError("Workers", "= %d is negative", c.Workers)
	case c.SplitMerge < 0 || c.SplitMerge > maxSplitMerge:
		return fieldError("SplitMerge", "= %d outside 0..%d proposals a sweep", c.SplitMerge, maxSplitMerge)
	case !(c.Lambda > 0) || math.IsInf(c.Lambda, 0):
		return fmt.Errorf("%w: initial Lambda = %v is not a positive finite number", ErrConfig, c.Lambda)
	case c.Noise > Dropout:
		return fieldError("Noise", "= %d: want dropout or symmetric", c.Noise)
	case !(c.Dropout >= 0 && c.Dropout < 1) || !(c.Background >= 0 && c.Background < 1):
		return fmt.Errorf("%w: initial Dropout = %v and Background = %v must be in [0, 1)", ErrConfig, c.Dropout, c.Background)
	case c.Dropout > 0 && c.Background > 0 && c.Background >= 1-c.Dropout:
		return fmt.Errorf("%w: initial Background = %v is not below 1 − Dropout = %v: covering an entry must raise its chance of being a one", ErrConfig, c.Background, 1-c.Dropout)
	case c.Init > InitCluster:
		return fieldError("Init", "= %d: want cluster, data or random", c.Init)
	case c.Starts < 1:
		return fieldError("Starts", "= %d: need at least 1", c.Starts)
	case c.Starts > 1 && (c.StartSweeps < 1 || c.StartSweeps > c.BurnIn):
		return fieldError("StartSweeps", "= %d outside 1..%d, the burn-in sweeps, with %d starts (at most the burn-in, or one start)", c.StartSweeps, c.BurnIn, c.Starts)
	case c.HoldFrom < 0 || c.HoldFrom > c.BurnIn:
		return fieldError("HoldFrom", "= %d outside 0..%d, the burn-in sweeps: the sampling sweeps must share one likelihood", c.HoldFrom, c.BurnIn)
	case c.MaxBurnIn != 0 && (c.MaxBurnIn < c.BurnIn || c.MaxBurnIn > MaxSweeps):
		return fieldError("MaxBurnIn", "= %d outside %d..%d (from the burn-in to the most sweeps)", c.MaxBurnIn, c.BurnIn, MaxSweeps)
	case c.MaxBurnIn > c.BurnIn && c.HoldFrom == 0 && c.Params == nil:
		return fieldError("MaxBurnIn", "= %d needs HoldFrom or Params: a chain whose parameters move every sweep has no level to settle at", c.MaxBurnIn)
	}
	if err := checkCellSamples(c.CellSamples); err != nil {
		return err
	}
	if err := checkKernel(c.Kernel); err != nil {
		return err
	}
	if err := c.checkFixedCodes(); err != nil {
		return err
	}
	for _, p := range []struct {
		name string
		pr   Prior
	}{{"PriorZ", c.PriorZ}, {"PriorU", c.PriorU}} {
		switch p.pr.Kind {
		case Uniform, Empirical:
		case Fixed:
			if n := len(p.pr.P); n != 1 && n != c.Config.L && n != c.L {
				want := fmt.Sprintf("1 or L = %d", c.L)
				if c.Housekeeping {
					want = fmt.Sprintf("1, L = %d (the housekeeping code's p = 1/2) or %d (the housekeeping code's last)", c.Config.L, c.L)
				}
				return fieldError(p.name, "has %d probabilities, want %s", n, want)
			}
			for _, q := range p.pr.P {
				if !(q > 0 && q < 1) {
					return fieldError(p.name, "probability %v outside (0, 1)", q)
				}
			}
		default:
			return fieldError(p.name, "has unknown kind %d", p.pr.Kind)
		}
	}
	return nil
}

// empiricalQ solves 1 − (1 − q²)^L = density for q, clamped to [1e-6, 1 − 1e-6]
// so that its logit stays finite.
func empiricalQ(density float64, L int) float64 {
	density = min(max(density, 0), 1)
	q := math.Sqrt(1 - math.Pow(1-density, 1/float64(L)))
	return min(max(q, 1e-6), 1-1e-6)
}

// String returns the prior as MarshalText writes it.
func (pr Prior) String() string {
	b, err := pr.MarshalText()
	if err != nil {
		return fmt.Sprintf("Prior(%d)", pr.Kind)
	}
	return string(b)
}

// MarshalText implements encoding.TextMarshaler: "uniform", "empirical",
// or the Fixed probabilities separated by commas ("0.05", "0.1,0.3").
func (pr Prior) MarshalText() ([]byte, error) {
	switch pr.Kind {
	case Uniform:
		return []byte("uniform"), nil
	case Empirical:
		return []byte("empirical"), nil
	case Fixed:
		var b []byte
		for i, p := range pr.P {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, p, 'g', -1, 64)
		}
		return b, nil
	}
	return nil, fmt.Errorf("gibbs: unknown prior kind %d", pr.Kind)
}

// UnmarshalText implements encoding.TextUnmarshaler, reading what
// MarshalText writes (case and spaces ignored). Probabilities must lie in
// (0, 1).
func (pr *Prior) UnmarshalText(text []byte) error {
	s := strings.ToLower(strings.TrimSpace(string(text)))
	switch s {
	case "uniform":
		*pr = Prior{}
		return nil
	case "empirical":
		*pr = EmpiricalPrior()
		return nil
	}
	var ps []float64
	for part := range strings.SplitSeq(s, ",") {
		p, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || !(p > 0 && p < 1) {
			return fmt.Errorf("prior %q: want uniform, empirical or probabilities in (0, 1)", text)
		}
		ps = append(ps, p)
	}
	*pr = FixedPrior(ps...)
	return nil
}

// logits returns logit(p_l) for l < L under prior pr; a code past the
// Fixed probabilities given, the housekeeping code beside L given ones,
// takes p = 1/2.
func (pr Prior) logits(L int, density float64) []float64 {
	out := make([]float64, L)
	for l := range out {
		var p float64
		switch pr.Kind {
		case Uniform:
			p = 0.5
		case Fixed:
			p = 0.5
			if len(pr.P) == 1 {
				p = pr.P[0]
			} else if l < len(pr.P) {
				p = pr.P[l]
			}
		case Empirical:
			p = empiricalQ(density, L)
		}
		out[l] = math.Log(p) - math.Log1p(-p)
	}
	return out
}
