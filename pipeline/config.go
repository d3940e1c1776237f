package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"scpipe/gibbs"
	"scpipe/internal/infile"
	"scpipe/internal/rundir"
	"scpipe/pipeline/internal/holdout"
)

// ErrConfig is wrapped by every error about an invalid fit configuration.
var ErrConfig = errors.New("invalid configuration")

// FitConfig is everything `scpipe fit` needs; it is written to RUN/config.toml
// so that a run can be reproduced exactly. Every field can be set in a TOML
// file (--config) under the name in its tag, and by the flag of the same name.
type FitConfig struct {
	Shards  string       `toml:"shards"`  // input shard folder
	Output  string       `toml:"output"`  // run directory
	L       LSizes       `toml:"L"`       // latent sizes: "5", "2..10" or "2,4,8"
	Chains  int          `toml:"chains"`  // independent chains per L
	BurnIn  int          `toml:"burn_in"` // discarded sweeps
	Samples int          `toml:"samples"` // sweeps after burn-in
	Thin    int          `toml:"thin"`    // keep every Thin-th sample
	Seed    uint64       `toml:"seed"`    // master seed; chain c of size L uses a seed derived from (Seed, L, c)
	PriorU  PriorSetting `toml:"prior_u"` // "auto", "uniform", "empirical" or a probability such as "0.05"
	PriorZ  PriorSetting `toml:"prior_z"` // likewise for Z
	Holdout float64      `toml:"holdout"` // fraction of observed entries hidden from every fit for model selection
	// Noise is the likelihood: "dropout" (separate dropout and background
	// rates, for single-cell data), "symmetric" (the paper's single λ) or
	// "auto": dropout for data binarised from counts, symmetric for binary
	// data and ratings (Resolve, when the shards are read; the run's
	// config.toml records the choice).
	Noise NoiseSetting `toml:"noise"`
	// CellLevels is the number of per-cell background levels of dropout
	// noise (1, 2, 4 or 8; symmetric noise has none and ignores it): a cell
	// that detects more genes has a higher background, so that no code is
	// spent on depth.
	CellLevels int `toml:"cell_levels"`
	// GeneLevels is the number of per-gene background levels of dropout
	// noise (1: none, 2, 4 or 8; ignored without per-cell levels, as
	// under symmetric noise): a gene detected in many cells whatever their
	// type has a higher background, so that no code is spent on it
	// (docs/real-data.md measures it). 0, which a run's config.toml
	// written before the setting existed reads as, is 1: those runs resume
	// without them.
	GeneLevels int `toml:"gene_levels"`
	// SamplesModel gives each sample of the shards (ingested from several
	// inputs) its own level of every gene, with per-gene levels: a
	// sample with more ambient RNA then takes no code of its own
	// (gibbs.Config.CellSamples). It does nothing for shards of one
	// sample. A sample is a technical grouping; a condition the study
	// compares must not be ingested as one. Omitted from config.toml when
	// off, so that runs started before it existed keep their identity and
	// resume without it.
	SamplesModel bool `toml:"samples_model,omitempty"`
	// Init is the chains' starting point: "cluster" seeds the codes from
	// cell types (bisecting k-means of up to 4000 cells); "data" seeds each
	// code from the genes of a random cell; "random" is the paper's
	// fair-coin start, which on sparse data such as single-cell expression
	// collapses to nearly empty codes.
	Init gibbs.Init `toml:"init"`
	// Housekeeping adds a code that every cell uses, beside the L codes: it
	// takes the genes detected everywhere (ribosomal, mitochondrial, …) so
	// that none of the L codes is spent on them. "auto" adds it for data
	// binarised from counts and not for binary data (Resolve).
	Housekeeping HousekeepingSetting `toml:"housekeeping"`
	// Reseed re-seeds, during the burn-in, every code that covers nothing
	// from the cells and genes the state leaves unexplained
	// (gibbs.Config.Reseed): without it a code that the start leaves
	// empty stays empty, and a planted program is lost (VALIDATION.md).
	// false, which a run's config.toml written before the setting existed
	// reads as, resumes those runs as they were.
	Reseed bool `toml:"reseed"`
	// HoldFrom is the sweep from which dropout noise's parameters (the
	// rates, ρ, the levels' grids and every cell's and gene's level) are
	// held at their estimates (gibbs.Config.HoldFrom), min(hold_from,
	// burn_in): the sweeps before it estimate them from the state after
	// each (an empirical-Bayes burn-in), and every later sweep draws from
	// the one posterior p(Z, U | X, θ̂). Symmetric noise re-estimates λ
	// after every sweep, as the paper does. 0, which a run's config.toml
	// written before the setting existed reads as, never holds them:
	// those runs resume as they were.
	HoldFrom int `toml:"hold_from"`
	// MaxBurnIn lets the burn-in of a fit with held parameters go on past
	// burn_in until its chain has settled: a window of sampling sweeps
	// whose log-likelihood trends, or whose halves differ, becomes burn-in
	// and is drawn again (gibbs.Config.MaxBurnIn), while the burn-in stays
	// within max(max_burn_in, burn_in) sweeps. 0 burns in burn_in sweeps
	// exactly.
	MaxBurnIn int `toml:"max_burn_in"`
	// Swaps adds to every sweep a move of each cell from one of its codes
	// to another in one step (gibbs.Config.Swaps), which single flips make
	// only through a state that uses both or neither. false, which a run's
	// config.toml written before the setting existed reads as, resumes
	// those runs as they were.
	Swaps bool `toml:"swaps"`
	// GeneSwaps adds to every sweep the same move for a quarter of the
	// genes, the housekeeping code among their codes
	// (gibbs.Config.GeneSwaps).
	GeneSwaps bool `toml:"gene_swaps"`
	// SplitMerge is the number of split–merge proposals each chain makes
	// before each burn-in sweep (gibbs.Config.SplitMerge): a code's cells
	// split between it and an unused code, two codes merged, or two codes'
	// cells divided afresh, with their genes, in one Metropolis–Hastings
	// step. 0, which a run's config.toml written before the setting
	// existed reads as, makes none.
	SplitMerge int `toml:"split_merge"`
	// ShareParams gives the chains of an L one set of held parameters
	// (params.go): estimated once, by a run of hold_from sweeps from a
	// seed of the L's own (RUN/Lnn/params.bin), and held by every chain of
	// the L (and of its consensus) from its first sweep, so that they
	// sample one posterior. Where nothing is held (symmetric noise, no
	// per-cell levels, hold_from = 0) it does nothing. Omitted from
	// config.toml when off, so that runs started before it resume.
	ShareParams bool `toml:"share_params,omitempty"`
	Starts      int  `toml:"starts"` // short chains per fit, the best by log-likelihood continued
	// StartSweeps is the length of those short chains.
	StartSweeps int `toml:"start_sweeps"`
	// CheckpointEvery writes a checkpoint every so many sweeps…
	CheckpointEvery int `toml:"checkpoint_every"`
	// …and CheckpointMinutes at least this often (whichever comes first).
	CheckpointMinutes float64 `toml:"checkpoint_minutes"`
	// Threads bounds the cores used (all of them by default).
	Threads int `toml:"threads"`
	// FixedCodes is a GMT file of known gene programs, or the folder of
	// a fit (RUN/L05/chain1) whose MAP codes to take: every fit holds
	// them as its first codes and infers the rest (L counts both). The
	// run keeps its own copy (fixed-codes.gmt), which resumes read.
	FixedCodes string `toml:"fixed_codes"`
	// Layers, when set, fits the multi-layer OrMachine (layers.go): layer
	// k factorises the usage Z of layer k−1, "7,4,2" from the data up.
	Layers LayerSizes `toml:"layers,omitempty"`
	// LayerPriorU gives each layer's codes a prior, "0.01,0.05,0.2"
	// (uniform, empirical for the first layer only, or one probability
	// each); without it the first layer takes prior_u and the others the
	// uniform prior.
	LayerPriorU LayerPriors `toml:"layer_prior_u,omitempty"`
	// KeepSamples keeps each fit's retained states in its folder
	// (rundir.SamplesFile), for the sample-averaged predictive of scpipe
	// evaluate (the paper's second estimate): about (N + D)·L/8 bytes a
	// sample, N + D more with levels. Single-layer fits in one process.
	KeepSamples bool `toml:"keep_samples,omitempty"`
	// ConsensusChains builds, at the recommended L only, a consensus of
	// that many chains (consensus.go): chains besides the run's own until
	// there are so many, their programs matched, those that more than
	// half of the chains found kept with their frequency, and a fit whose
	// codes are the kept programs held fixed (RUN/Lnn/consensus). 0,
	// which a run's config.toml written before the setting existed reads
	// as, builds none.
	ConsensusChains int `toml:"consensus_chains"`
}

// DefaultFitConfig returns the defaults of `scpipe fit`: the paper's
// single-cell analysis (L = 2..10) with a burn-in of 100 sweeps that
// estimates the likelihood's parameters and then holds them, so that the
// 100 samples share one posterior, a burn-in run on while those samples
// still climb (at most 300 sweeps), two chains (for the convergence
// checks), the auto model (Resolve:
// for data binarised from counts, dropout noise with 8 per-cell and 8
// per-gene levels and a housekeeping code; for binary data and ratings, the paper's symmetric
// noise and no housekeeping code), the auto prior (uniform under dropout
// noise, empirical under symmetric noise: PriorSetting.Resolve), 1% of
// entries held out, codes seeded from cell types and idle codes re-seeded
// during the burn-in. gibbs.DefaultConfig
// says why they differ from the sampler's own.
func DefaultFitConfig() FitConfig {
	return FitConfig{
		L:                 LSizes{2, 3, 4, 5, 6, 7, 8, 9, 10},
		Chains:            2,
		BurnIn:            100,
		Samples:           100,
		Thin:              1,
		Seed:              1,
		PriorU:            autoPrior(),
		PriorZ:            autoPrior(),
		Holdout:           0.01,
		Noise:             autoNoise(),
		CellLevels:        8,
		GeneLevels:        8,
		SamplesModel:      true,
		Init:              gibbs.InitCluster,
		Housekeeping:      autoHousekeeping(),
		Reseed:            true,
		HoldFrom:          100,
		MaxBurnIn:         300,
		Swaps:             false,
		Starts:            4,
		StartSweeps:       5,
		CheckpointEvery:   10,
		CheckpointMinutes: 5,
		ConsensusChains:   5,
	}
}

// LoadFitConfig reads a TOML file over base: keys present in the file
// replace base's values, and are returned; an unknown key is an error
// naming it.
func LoadFitConfig(path string, base FitConfig) (FitConfig, []string, error) {
	data, err := infile.ReadFile(path)
	if err != nil {
		return base, nil, fmt.Errorf("config: %w", err)
	}
	return decodeFitConfig(data, path, base)
}

// decodeFitConfig is LoadFitConfig of the TOML data, named path in
// errors.
func decodeFitConfig(data []byte, path string, base FitConfig) (FitConfig, []string, error) {
	md, err := toml.Decode(string(data), &base)
	if err != nil {
		return base, nil, fmt.Errorf("config %s: %w: %w", path, ErrConfig, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return base, nil, fmt.Errorf("config %s: %w: unknown key %s (known keys: %s)", path, ErrConfig,
			strings.Join(keys, ", "), strings.Join(configKeys(), ", "))
	}
	var keys []string
	for _, k := range md.Keys() {
		keys = append(keys, k.String())
	}
	return base, keys, nil
}

// storedConfig reads the configuration of the run directory run, whose
// lock the caller holds: nil when it has none (a run not yet started).
func storedConfig(run string) (*FitConfig, error) {
	c, _, err := LoadFitConfig(filepath.Join(run, rundir.ConfigFile), FitConfig{})
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("fit: %w", err)
	}
	return &c, nil
}

// configKeys lists the TOML keys of FitConfig, from its fields' tags: an
// encoding leaves out the omitempty keys at their zero values.
func configKeys() []string {
	t := reflect.TypeFor[FitConfig]()
	keys := make([]string, 0, t.NumField())
	for f := range t.Fields() {
		if k, _, _ := strings.Cut(f.Tag.Get("toml"), ","); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// encodeTOML returns c as TOML.
func (c FitConfig) encodeTOML() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("# scpipe fit: resolved configuration (scpipe fit --config this-file reproduces the run)\n")
	err := toml.NewEncoder(&buf).Encode(c)
	return buf.Bytes(), err
}

// maxChains is the most chains per L a run accepts: each chain is a fit
// of its own, with its folder, and the run lists every chain before it
// starts. A thousand is more than any job array of one run holds.
const maxChains = 1000

// maxStarts is the most short chains a fit starts from: the sampler holds
// every start's state at once, and seeds each (a clustering of up to 4000
// cells, seconds) before its first sweep.
const maxStarts = 64

// SettingError is an invalid setting of a fit's configuration, named by
// its TOML key, so that a command can say where the setting came from
// (a flag, its --config file, the run's own config.toml). It wraps
// ErrConfig.
type SettingError struct {
	Key string // TOML key: samples, burn_in, …
	Msg string // what is wrong, starting with the key: "samples = 0: need at least 1"
}

func (e *SettingError) Error() string { return ErrConfig.Error() + ": " + e.Msg }

// Unwrap returns ErrConfig.
func (e *SettingError) Unwrap() error { return ErrConfig }

// Validate checks every field and returns the latent sizes to fit. The
// settings the sampler takes are checked by the sampler's own check
// (gibbs.Config.Validate, through checkSampler); Validate adds the run's.
func (c FitConfig) Validate() ([]int, error) {
	Ls := []int(c.L)
	if len(Ls) == 0 {
		return nil, fmt.Errorf("%w: no latent size L given (examples: 5, 2..10, 2,4,8)", ErrConfig)
	}
	bad := func(key, format string, a ...any) ([]int, error) {
		return nil, &SettingError{Key: key, Msg: fmt.Sprintf(format, a...)}
	}
	switch {
	case c.Shards == "":
		return bad("shards", "no shard folder given")
	case c.Output == "":
		return bad("output", "no run directory given (-o RUN)")
	case c.Chains < 1 || c.Chains > maxChains:
		return bad("chains", "chains = %d outside 1..%d", c.Chains, maxChains)
	case c.ConsensusChains != 0 && (c.ConsensusChains < 2 || c.ConsensusChains > maxChains):
		return bad("consensus_chains", "consensus_chains = %d: 0 (no consensus) or 2..%d", c.ConsensusChains, maxChains)
	case !(c.Holdout >= 0 && c.Holdout < 1):
		return bad("holdout", "holdout = %v outside [0, 1)", c.Holdout)
	case c.HoldFrom < 0 || c.HoldFrom > gibbs.MaxSweeps:
		return bad("hold_from", "hold_from = %d outside 0..%d", c.HoldFrom, gibbs.MaxSweeps)
	case c.MaxBurnIn < 0 || c.MaxBurnIn > gibbs.MaxSweeps:
		return bad("max_burn_in", "max_burn_in = %d outside 0..%d", c.MaxBurnIn, gibbs.MaxSweeps)
	case c.Starts < 1 || c.Starts > maxStarts:
		return bad("starts", "starts = %d outside 1..%d", c.Starts, maxStarts)
	case c.CheckpointEvery < 1:
		return bad("checkpoint_every", "checkpoint_every = %d: need at least 1", c.CheckpointEvery)
	case len(c.Layers) > 0 && c.Samples > gibbs.MaxSweeps/len(c.Layers):
		return bad("samples", "samples = %d with %d layers: at most %d sweeps in all", c.Samples, len(c.Layers), gibbs.MaxSweeps)
	case !(c.CheckpointMinutes > 0):
		return bad("checkpoint_minutes", "checkpoint_minutes = %v must be positive", c.CheckpointMinutes)
	case c.Threads != 0: // 0: every core
		if err := CheckThreads(c.Threads); err != nil {
			return nil, err
		}
	}
	if err := c.checkHousekeeping(); err != nil {
		return nil, err
	}
	if err := c.validateLayers(Ls); err != nil {
		return nil, err
	}
	for _, p := range []struct {
		name string
		pr   gibbs.Prior
	}{{"prior_u", c.PriorU.Prior}, {"prior_z", c.PriorZ.Prior}} {
		if n := len(p.pr.P); n > 1 && Ls[0] != Ls[len(Ls)-1] {
			return bad(p.name, "%s: %d probabilities: give one, or one per code with a single L", p.name, n)
		}
	}
	if err := c.checkSampler(Ls); err != nil {
		return nil, err
	}
	return Ls, nil
}

// samplerKeys names the settings of gibbs.Config by the keys that set
// them.
var samplerKeys = map[string]string{
	"L": "L", "BurnIn": "burn_in", "Samples": "samples", "Thin": "thin", "Workers": "threads",
	"Noise": "noise", "Init": "init", "Starts": "starts", "StartSweeps": "start_sweeps",
	"CellLevels": "cell_levels", "GeneLevels": "gene_levels", "PriorU": "prior_u", "PriorZ": "prior_z",
	"CellSamples": "samples_model", "SplitMerge": "split_merge", "GeneSwaps": "gene_swaps",
}

// checkSampler refuses what the sampler would refuse of the fits of
// sizes Ls, by the sampler's own check, before a run is touched: the
// fit's settings are checked in one place, and a fit refused for them
// writes nothing.
// While the data have still to decide whether a housekeeping code is fitted
// (auto), a setting is refused only if it is refused either way;
// resolveModel checks again with the model chosen.
func (c FitConfig) checkSampler(Ls []int) error {
	for _, L := range Ls {
		sc := samplerConfig(c, L, 1)
		err := sc.Validate()
		if err != nil && c.Housekeeping.Auto {
			sc.Housekeeping = !sc.Housekeeping
			if sc.Validate() == nil {
				err = nil
			}
		}
		var fe *gibbs.FieldError
		if errors.As(err, &fe) && samplerKeys[fe.Field] != "" {
			key := samplerKeys[fe.Field]
			return &SettingError{Key: key, Msg: key + " " + fe.Msg}
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	return nil
}

// checkHousekeeping refuses a given housekeeping code beside the largest
// L when the two make more codes than the sampler holds.
func (c FitConfig) checkHousekeeping() error {
	if top := c.L[len(c.L)-1]; c.Housekeeping.On && !c.Housekeeping.Auto && top >= gibbs.MaxL {
		return fmt.Errorf("%w: L = %d with a housekeeping code needs %d codes, more than %d (lower L or set housekeeping = false)", ErrConfig, top, top+1, gibbs.MaxL)
	}
	return nil
}

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
		if a < 1 || b > gibbs.MaxL {
			return bad(fmt.Sprintf("L must be in 1..%d", gibbs.MaxL))
		}
		for L := a; L <= b; L++ {
			Ls = append(Ls, L)
		}
	}
	slices.Sort(Ls)
	return slices.Compact(Ls), nil
}

// LSizes is a sorted set of latent sizes without repeats; as text it is
// "5", "2..10" or "2,4,8" (ParseLSpec).
type LSizes []int

// MarshalText writes the sizes as ranges and single values: "2..10",
// "2,4,8", "2..4,8".
func (ls LSizes) MarshalText() ([]byte, error) {
	var b []byte
	for i := 0; i < len(ls); {
		j := i
		for j+1 < len(ls) && ls[j+1] == ls[j]+1 {
			j++
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(ls[i]), 10)
		if j > i {
			b = append(b, ".."...)
			b = strconv.AppendInt(b, int64(ls[j]), 10)
		}
		i = j + 1
	}
	return b, nil
}

// UnmarshalText parses the sizes with ParseLSpec.
func (ls *LSizes) UnmarshalText(text []byte) error {
	v, err := ParseLSpec(string(text))
	if err != nil {
		return err
	}
	*ls = v
	return nil
}

// String returns the sizes as MarshalText writes them.
func (ls LSizes) String() string {
	b, _ := ls.MarshalText()
	return string(b)
}

// threads resolves a Threads or Workers setting once, where a command's
// options enter the package: n, or every core GOMAXPROCS lets the process
// use when n is 0. What runs below takes the count as it is.
func threads(n int) int {
	if n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

// holdoutSpec is the entries the run of c hides from its fits.
func (c FitConfig) holdoutSpec() holdout.Spec {
	return holdout.Spec{Seed: c.Seed, Frac: c.Holdout}
}

// maxThreads is the most workers (-j, threads) a command accepts: 16 per
// core of this machine, and at least 64. More only add contention, and
// each worker blocked in a system call holds an OS thread, of which a Go
// program may have 10 000 before it dies.
func maxThreads() int { return max(64, 16*runtime.NumCPU()) }

// CheckThreads is the one check of a thread count given to a command (-j,
// SCPIPE_THREADS, a fit configuration's threads key): from 1 to
// maxThreads. It refuses others with a SettingError of key threads, which
// the command says where it came from.
func CheckThreads(n int) error {
	if n < 1 || n > maxThreads() {
		return &SettingError{Key: "threads", Msg: fmt.Sprintf("threads = %d outside 1..%d (16 × the %d cores of this machine, at least 64)",
			n, maxThreads(), runtime.NumCPU())}
	}
	return nil
}
