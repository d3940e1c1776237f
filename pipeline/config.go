package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"scpipe/gibbs"
)

// ErrConfig is wrapped by every error about an invalid fit configuration.
var ErrConfig = errors.New("invalid configuration")

// FitConfig is everything `scpipe fit` needs; it is written to RUN/config.toml
// so that a run can be reproduced exactly. Every field can be set in a TOML
// file (--config) under the name in its tag, and by the flag of the same name.
type FitConfig struct {
	Shards  string  `toml:"shards"`  // input shard folder
	Output  string  `toml:"output"`  // run directory
	L       string  `toml:"L"`       // latent sizes: "5", "2..10" or "2,4,8"
	Chains  int     `toml:"chains"`  // independent chains per L
	BurnIn  int     `toml:"burn_in"` // discarded sweeps
	Samples int     `toml:"samples"` // sweeps after burn-in
	Thin    int     `toml:"thin"`    // keep every Thin-th sample
	Seed    uint64  `toml:"seed"`    // master seed; chain c of size L uses a seed derived from (Seed, L, c)
	PriorU  string  `toml:"prior_u"` // "uniform", "empirical" or a probability such as "0.05"
	PriorZ  string  `toml:"prior_z"` // likewise for Z
	Holdout float64 `toml:"holdout"` // fraction of observed entries hidden from every fit for model selection
	// Noise is the likelihood: "dropout" (separate dropout and background
	// rates, for single-cell data) or "symmetric" (the paper's single λ).
	Noise gibbs.Noise `toml:"noise"`
	// Init is the chains' starting point: "cluster" seeds the codes from
	// cell types (bisecting k-means of up to 4000 cells); "data" seeds each
	// code from the genes of a random cell; "random" is the paper's
	// fair-coin start, which on sparse data such as single-cell expression
	// collapses to nearly empty codes.
	Init gibbs.Init `toml:"init"`
	// Housekeeping adds a code that every cell uses, beside the L codes: it
	// takes the genes detected everywhere (ribosomal, mitochondrial, …) so
	// that none of the L codes is spent on them.
	Housekeeping bool `toml:"housekeeping"`
	Starts       int  `toml:"starts"` // short chains per fit, the best by log-likelihood continued
	// StartSweeps is the length of those short chains.
	StartSweeps int `toml:"start_sweeps"`
	// CheckpointEvery writes a checkpoint every so many sweeps…
	CheckpointEvery int `toml:"checkpoint_every"`
	// …and CheckpointMinutes at least this often (whichever comes first).
	CheckpointMinutes float64 `toml:"checkpoint_minutes"`
	// Threads bounds the cores used (all of them by default).
	Threads int `toml:"threads"`
}

// DefaultFitConfig returns the defaults of `scpipe fit`: the paper's
// single-cell analysis (L = 2..10, 25 burn-in sweeps then 100 samples),
// two chains (for the convergence checks), uniform priors, 1% of entries
// held out, dropout noise, codes seeded from cell types and a housekeeping
// code.
func DefaultFitConfig() FitConfig {
	return FitConfig{
		L:                 "2..10",
		Chains:            2,
		BurnIn:            25,
		Samples:           100,
		Thin:              1,
		Seed:              1,
		PriorU:            "uniform",
		PriorZ:            "uniform",
		Holdout:           0.01,
		Noise:             gibbs.Dropout,
		Init:              gibbs.InitCluster,
		Housekeeping:      true,
		Starts:            4,
		StartSweeps:       5,
		CheckpointEvery:   10,
		CheckpointMinutes: 5,
	}
}

// LoadFitConfig reads a TOML file over base: keys present in the file
// replace base's values; an unknown key is an error naming it.
func LoadFitConfig(path string, base FitConfig) (FitConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return base, fmt.Errorf("config: %w", err)
	}
	md, err := toml.Decode(string(data), &base)
	if err != nil {
		return base, fmt.Errorf("config %s: %w: %w", path, ErrConfig, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return base, fmt.Errorf("config %s: %w: unknown key %s (known keys: %s)", path, ErrConfig,
			strings.Join(keys, ", "), strings.Join(configKeys(), ", "))
	}
	return base, nil
}

// configKeys lists the TOML keys of FitConfig.
func configKeys() []string {
	var buf bytes.Buffer
	toml.NewEncoder(&buf).Encode(DefaultFitConfig())
	var keys []string
	for line := range strings.Lines(buf.String()) {
		if k, _, ok := strings.Cut(line, " = "); ok {
			keys = append(keys, strings.TrimSpace(k))
		}
	}
	return keys
}

// EncodeTOML returns c as TOML.
func (c FitConfig) EncodeTOML() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("# scpipe fit: resolved configuration (scpipe fit --config this-file reproduces the run)\n")
	err := toml.NewEncoder(&buf).Encode(c)
	return buf.Bytes(), err
}

// Validate checks every field and returns the latent sizes to fit.
func (c FitConfig) Validate() ([]int, error) {
	Ls, err := ParseLSpec(c.L)
	if err != nil {
		return nil, err
	}
	bad := func(format string, a ...any) ([]int, error) {
		return nil, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, a...)...)
	}
	switch {
	case c.Shards == "":
		return bad("no shard folder given")
	case c.Output == "":
		return bad("no run directory given (-o RUN)")
	case c.Chains < 1:
		return bad("chains = %d: need at least 1", c.Chains)
	case c.BurnIn < 0:
		return bad("burn_in = %d is negative", c.BurnIn)
	case c.Samples < 1:
		return bad("samples = %d: need at least 1", c.Samples)
	case c.Thin < 1 || c.Thin > c.Samples:
		return bad("thin = %d outside 1..samples (%d)", c.Thin, c.Samples)
	case !(c.Holdout >= 0 && c.Holdout < 1):
		return bad("holdout = %v outside [0, 1)", c.Holdout)
	case c.Noise != gibbs.Symmetric && c.Noise != gibbs.Dropout:
		return bad("noise = %v: want dropout or symmetric", c.Noise)
	case c.Init > gibbs.InitCluster:
		return bad("init = %v: want cluster, data or random", c.Init)
	case c.Housekeeping && Ls[len(Ls)-1] >= MaxL:
		return bad("L = %d with a housekeeping code needs %d codes, more than %d (lower L or set housekeeping = false)", Ls[len(Ls)-1], Ls[len(Ls)-1]+1, MaxL)
	case c.Starts < 1:
		return bad("starts = %d: need at least 1", c.Starts)
	case c.Starts > 1 && (c.StartSweeps < 1 || c.StartSweeps > c.BurnIn):
		return bad("start_sweeps = %d outside 1..burn_in (%d) with %d starts (set --start-sweeps at most --burn-in, or --starts 1)", c.StartSweeps, c.BurnIn, c.Starts)
	case c.CheckpointEvery < 1:
		return bad("checkpoint_every = %d: need at least 1", c.CheckpointEvery)
	case !(c.CheckpointMinutes > 0):
		return bad("checkpoint_minutes = %v must be positive", c.CheckpointMinutes)
	case c.Threads < 0:
		return bad("threads = %d is negative", c.Threads)
	}
	for _, p := range []struct{ name, v string }{{"prior_u", c.PriorU}, {"prior_z", c.PriorZ}} {
		if _, _, err := ParsePrior(p.v); err != nil {
			return bad("%s: %v", p.name, err)
		}
	}
	return Ls, nil
}

// MaxL is the largest latent size scpipe fits.
const MaxL = 64

// ParseLSpec parses a set of latent sizes: "5", "2..10" (inclusive) or a
// comma list "2,4,8"; the result is sorted and without repeats.
func ParseLSpec(spec string) ([]int, error) {
	bad := func(why string) ([]int, error) {
		return nil, fmt.Errorf("%w: L spec %q: %s (examples: 5, 2..10, 2,4,8)", ErrConfig, spec, why)
	}
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return bad("empty")
	}
	var Ls []int
	for part := range strings.SplitSeq(spec, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "..")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			return bad(fmt.Sprintf("%q is not a whole number", lo))
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil {
				return bad(fmt.Sprintf("%q is not a whole number", hi))
			}
			if b < a {
				return bad(fmt.Sprintf("range %d..%d runs backwards", a, b))
			}
		}
		if a < 1 || b > MaxL {
			return bad(fmt.Sprintf("L must be in 1..%d", MaxL))
		}
		for L := a; L <= b; L++ {
			Ls = append(Ls, L)
		}
	}
	slices.Sort(Ls)
	return slices.Compact(Ls), nil
}

// ParsePrior parses a prior setting: "uniform", "empirical", or a
// probability in (0, 1). It returns the kind and the probability.
func ParsePrior(s string) (kind string, p float64, err error) {
	switch s = strings.ToLower(strings.TrimSpace(s)); s {
	case "uniform", "empirical":
		return s, 0, nil
	}
	p, err = strconv.ParseFloat(s, 64)
	if err != nil || !(p > 0 && p < 1) {
		return "", 0, fmt.Errorf("prior %q: want uniform, empirical or a probability in (0, 1)", s)
	}
	return "fixed", p, nil
}
