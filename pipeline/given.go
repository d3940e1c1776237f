package pipeline

import "slices"

// Given is the settings of a fit's configuration that its caller chose,
// by their TOML keys. Where a command continues a run (FitOptions.Resume,
// FitChain), the settings it chose are taken from its configuration and
// the others from the run's own (config.toml), read once under the run's
// lock. The zero Given is every setting: the caller's configuration is the
// whole of it.
type Given struct {
	only bool     // the caller chose keys only, not every setting
	keys []string // with only: the keys it chose
}

// GivenKeys is the Given of those keys only; with none, every setting is
// the run's.
func GivenKeys(keys ...string) Given {
	return Given{only: true, keys: slices.Clone(keys)}
}

// over returns the configuration of a run that a command continues:
// base, the run's own, with cmd's paths and the settings g names taken
// from cmd.
func (g Given) over(base, cmd FitConfig) FitConfig {
	if !g.only {
		return cmd
	}
	for _, k := range g.keys {
		if take, ok := takeSetting[k]; ok {
			take(&base, cmd)
		}
	}
	base.Shards, base.Output = cmd.Shards, cmd.Output
	return base
}

// takeSetting copies the setting of each TOML key from src to dst.
var takeSetting = map[string]func(dst *FitConfig, src FitConfig){
	"shards":             func(d *FitConfig, s FitConfig) { d.Shards = s.Shards },
	"output":             func(d *FitConfig, s FitConfig) { d.Output = s.Output },
	"L":                  func(d *FitConfig, s FitConfig) { d.L = s.L },
	"chains":             func(d *FitConfig, s FitConfig) { d.Chains = s.Chains },
	"burn_in":            func(d *FitConfig, s FitConfig) { d.BurnIn = s.BurnIn },
	"samples":            func(d *FitConfig, s FitConfig) { d.Samples = s.Samples },
	"thin":               func(d *FitConfig, s FitConfig) { d.Thin = s.Thin },
	"seed":               func(d *FitConfig, s FitConfig) { d.Seed = s.Seed },
	"prior_u":            func(d *FitConfig, s FitConfig) { d.PriorU = s.PriorU },
	"prior_z":            func(d *FitConfig, s FitConfig) { d.PriorZ = s.PriorZ },
	"holdout":            func(d *FitConfig, s FitConfig) { d.Holdout = s.Holdout },
	"noise":              func(d *FitConfig, s FitConfig) { d.Noise = s.Noise },
	"cell_levels":        func(d *FitConfig, s FitConfig) { d.CellLevels = s.CellLevels },
	"gene_levels":        func(d *FitConfig, s FitConfig) { d.GeneLevels = s.GeneLevels },
	"init":               func(d *FitConfig, s FitConfig) { d.Init = s.Init },
	"housekeeping":       func(d *FitConfig, s FitConfig) { d.Housekeeping = s.Housekeeping },
	"reseed":             func(d *FitConfig, s FitConfig) { d.Reseed = s.Reseed },
	"hold_from":          func(d *FitConfig, s FitConfig) { d.HoldFrom = s.HoldFrom },
	"max_burn_in":        func(d *FitConfig, s FitConfig) { d.MaxBurnIn = s.MaxBurnIn },
	"consensus_chains":   func(d *FitConfig, s FitConfig) { d.ConsensusChains = s.ConsensusChains },
	"samples_model":      func(d *FitConfig, s FitConfig) { d.SamplesModel = s.SamplesModel },
	"swaps":              func(d *FitConfig, s FitConfig) { d.Swaps = s.Swaps },
	"gene_swaps":         func(d *FitConfig, s FitConfig) { d.GeneSwaps = s.GeneSwaps },
	"split_merge":        func(d *FitConfig, s FitConfig) { d.SplitMerge = s.SplitMerge },
	"share_params":       func(d *FitConfig, s FitConfig) { d.ShareParams = s.ShareParams },
	"starts":             func(d *FitConfig, s FitConfig) { d.Starts = s.Starts },
	"start_sweeps":       func(d *FitConfig, s FitConfig) { d.StartSweeps = s.StartSweeps },
	"checkpoint_every":   func(d *FitConfig, s FitConfig) { d.CheckpointEvery = s.CheckpointEvery },
	"checkpoint_minutes": func(d *FitConfig, s FitConfig) { d.CheckpointMinutes = s.CheckpointMinutes },
	"threads":            func(d *FitConfig, s FitConfig) { d.Threads = s.Threads },
	"fixed_codes":        func(d *FitConfig, s FitConfig) { d.FixedCodes = s.FixedCodes },
	"layers":             func(d *FitConfig, s FitConfig) { d.Layers = s.Layers },
	"layer_prior_u":      func(d *FitConfig, s FitConfig) { d.LayerPriorU = s.LayerPriorU },
	"keep_samples":       func(d *FitConfig, s FitConfig) { d.KeepSamples = s.KeepSamples },
}
