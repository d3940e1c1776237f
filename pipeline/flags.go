package pipeline

import (
	"encoding"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"scpipe/internal/rundir"
)

// FitFlags is a fit's settings as a command was given them, parsed into a
// configuration once, here (Resolve): a --config file, then the flags
// given explicitly, by their names (a TOML key with - for _), as text.
type FitFlags struct {
	Shards, Output string
	File           string            // --config FILE ("": none)
	Set            map[string]string // the setting flags given, by name, as text
	// Continues is a command that continues a run (--resume, a chain
	// process): it takes the settings it was not given from the run's own
	// configuration.
	Continues bool
}

// FitFlagNames lists the flags that set a fit's configuration: the
// names FitFlags.Set takes.
func FitFlagNames() []string {
	var names []string
	for k := range parseSetting {
		if k != "shards" && k != "output" {
			names = append(names, strings.ReplaceAll(k, "_", "-"))
		}
	}
	slices.Sort(names)
	return names
}

// Resolve returns the configuration: the defaults, then f.File, then the
// flags of f.Set, and for a multi-layer fit the paper's settings where
// the single-layer defaults were left (layerDefaults). It returns the
// settings that the file and the flags gave, by their TOML keys, sorted:
// a command that continues a run takes the others from the run
// (GivenKeys). A zero Threads is for the command to fill.
func (f FitFlags) Resolve() (cfg FitConfig, given []string, err error) {
	cfg, given = DefaultFitConfig(), []string{}
	if f.File != "" {
		var keys []string
		if cfg, keys, err = LoadFitConfig(f.File, cfg); err != nil {
			return cfg, nil, err
		}
		given = append(given, keys...)
	}
	cfg.Shards, cfg.Output = f.Shards, f.Output
	names := make([]string, 0, len(f.Set))
	for name := range f.Set {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		key := strings.ReplaceAll(name, "-", "_")
		parse, ok := parseSetting[key]
		if !ok {
			return cfg, nil, fmt.Errorf("%w: --%s is not a setting of a fit", ErrConfig, name)
		}
		if err := parse(&cfg, f.Set[name]); err != nil {
			return cfg, nil, fmt.Errorf("--%s: %w", name, err)
		}
		given = append(given, key)
	}
	f.layerDefaults(&cfg)
	slices.Sort(given)
	return cfg, slices.Compact(given), nil
}

// layerDefaults gives a multi-layer fit the settings of the paper's
// model where the user left the single-layer defaults: the first layer's
// L, one start and no re-seeding (the auto model resolves to symmetric
// noise and no housekeeping code for any multi-layer fit). Settings given
// otherwise stay, for Validate to refuse with its reason.
func (f FitFlags) layerDefaults(cfg *FitConfig) {
	if len(cfg.Layers) == 0 {
		return
	}
	d := DefaultFitConfig()
	if _, set := f.Set["L"]; !set && cfg.L.String() == d.L.String() {
		cfg.L = LSizes{cfg.Layers[0]}
	}
	if _, set := f.Set["starts"]; !set && cfg.Starts == d.Starts {
		cfg.Starts = 1
	}
	if _, set := f.Set["reseed"]; !set && cfg.Reseed == d.Reseed {
		cfg.Reseed = false
	}
}

// Source names where the invalid setting of err (a SettingError) came
// from, given the settings Resolve reported: its flag when one gave it,
// else the --config file when it did, else the run's own config.toml,
// which a command that continues a run reads for the settings not given.
func (f FitFlags) Source(err error, given []string) error {
	var se *SettingError
	if !errors.As(err, &se) {
		return err
	}
	flag := strings.ReplaceAll(se.Key, "_", "-")
	_, set := f.Set[flag]
	switch {
	case set:
		return fmt.Errorf("--%s: %w", flag, err)
	case slices.Contains(given, se.Key) && f.File != "":
		return fmt.Errorf("config %s: %w", f.File, err)
	case f.Continues:
		return fmt.Errorf("%s: %w", filepath.Join(f.Output, rundir.ConfigFile), err)
	}
	return err
}

// parseSetting sets the setting of each TOML key from a flag's text.
var parseSetting = map[string]func(c *FitConfig, text string) error{
	"shards":           func(c *FitConfig, s string) error { c.Shards = s; return nil },
	"output":           func(c *FitConfig, s string) error { c.Output = s; return nil },
	"L":                func(c *FitConfig, s string) error { return text(&c.L, s) },
	"chains":           func(c *FitConfig, s string) error { return integer(&c.Chains, s) },
	"consensus_chains": func(c *FitConfig, s string) error { return integer(&c.ConsensusChains, s) },
	"burn_in":          func(c *FitConfig, s string) error { return integer(&c.BurnIn, s) },
	"samples":          func(c *FitConfig, s string) error { return integer(&c.Samples, s) },
	"thin":             func(c *FitConfig, s string) error { return integer(&c.Thin, s) },
	"seed":             func(c *FitConfig, s string) (err error) { c.Seed, err = strconv.ParseUint(s, 10, 64); return err },
	"prior_u":          func(c *FitConfig, s string) error { return text(&c.PriorU, s) },
	"prior_z":          func(c *FitConfig, s string) error { return text(&c.PriorZ, s) },
	"holdout":          func(c *FitConfig, s string) (err error) { c.Holdout, err = strconv.ParseFloat(s, 64); return err },
	"noise":            func(c *FitConfig, s string) error { return text(&c.Noise, s) },
	"cell_levels":      func(c *FitConfig, s string) error { return integer(&c.CellLevels, s) },
	"gene_levels":      func(c *FitConfig, s string) error { return integer(&c.GeneLevels, s) },
	"samples_model":    func(c *FitConfig, s string) (err error) { c.SamplesModel, err = strconv.ParseBool(s); return err },
	"init":             func(c *FitConfig, s string) error { return text(&c.Init, s) },
	"housekeeping":     func(c *FitConfig, s string) error { return text(&c.Housekeeping, s) },
	"reseed":           func(c *FitConfig, s string) (err error) { c.Reseed, err = strconv.ParseBool(s); return err },
	"hold_from":        func(c *FitConfig, s string) error { return integer(&c.HoldFrom, s) },
	"max_burn_in":      func(c *FitConfig, s string) error { return integer(&c.MaxBurnIn, s) },
	"swaps":            func(c *FitConfig, s string) (err error) { c.Swaps, err = strconv.ParseBool(s); return err },
	"gene_swaps":       func(c *FitConfig, s string) (err error) { c.GeneSwaps, err = strconv.ParseBool(s); return err },
	"split_merge":      func(c *FitConfig, s string) error { return integer(&c.SplitMerge, s) },
	"share_params":     func(c *FitConfig, s string) (err error) { c.ShareParams, err = strconv.ParseBool(s); return err },
	"starts":           func(c *FitConfig, s string) error { return integer(&c.Starts, s) },
	"start_sweeps":     func(c *FitConfig, s string) error { return integer(&c.StartSweeps, s) },
	"checkpoint_every": func(c *FitConfig, s string) error { return integer(&c.CheckpointEvery, s) },
	"checkpoint_minutes": func(c *FitConfig, s string) (err error) {
		c.CheckpointMinutes, err = strconv.ParseFloat(s, 64)
		return err
	},
	"threads":       func(c *FitConfig, s string) error { return integer(&c.Threads, s) },
	"fixed_codes":   func(c *FitConfig, s string) error { c.FixedCodes = s; return nil },
	"layers":        func(c *FitConfig, s string) error { return text(&c.Layers, s) },
	"layer_prior_u": func(c *FitConfig, s string) error { return text(&c.LayerPriorU, s) },
	"keep_samples":  func(c *FitConfig, s string) (err error) { c.KeepSamples, err = strconv.ParseBool(s); return err },
}

func text(dst encoding.TextUnmarshaler, s string) error { return dst.UnmarshalText([]byte(s)) }

func integer(dst *int, s string) (err error) {
	*dst, err = strconv.Atoi(s)
	return err
}
