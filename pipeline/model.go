package pipeline

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"scpipe/gibbs"
	"scpipe/shard"
)

// NoiseSetting is fit's likelihood as configured: auto (autoNoise), which
// Resolve makes concrete, or a given gibbs.Noise. As text it is
// "auto", "symmetric" or "dropout".
type NoiseSetting struct {
	Auto  bool
	Noise gibbs.Noise // the likelihood, when not Auto
}

// autoNoise returns the likelihood chosen from the shards (Resolve).
func autoNoise() NoiseSetting { return NoiseSetting{Auto: true} }

// givenNoise returns the likelihood n, whatever the shards.
func givenNoise(n gibbs.Noise) NoiseSetting { return NoiseSetting{Noise: n} }

// String returns "auto" or the likelihood's name.
func (s NoiseSetting) String() string {
	if s.Auto {
		return "auto"
	}
	return s.Noise.String()
}

// MarshalText implements encoding.TextMarshaler.
func (s NoiseSetting) MarshalText() ([]byte, error) {
	if s.Auto {
		return []byte("auto"), nil
	}
	return s.Noise.MarshalText()
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *NoiseSetting) UnmarshalText(b []byte) error {
	if string(b) == "auto" {
		*s = autoNoise()
		return nil
	}
	var n gibbs.Noise
	if err := n.UnmarshalText(b); err != nil {
		return fmt.Errorf("noise model %q: want auto, symmetric or dropout", b)
	}
	*s = givenNoise(n)
	return nil
}

// HousekeepingSetting says whether a fit adds a housekeeping code: auto
// (autoHousekeeping), which Resolve makes concrete, or given. As
// text (--housekeeping) it is "auto", "on" or "off"; in TOML "auto", true
// or false, as in configurations written before it could be auto.
type HousekeepingSetting struct {
	Auto bool
	On   bool // when not Auto
}

// autoHousekeeping returns the housekeeping code chosen from the shards
// (Resolve).
func autoHousekeeping() HousekeepingSetting { return HousekeepingSetting{Auto: true} }

// GivenHousekeeping returns a housekeeping code when on, none otherwise,
// whatever the shards.
func GivenHousekeeping(on bool) HousekeepingSetting { return HousekeepingSetting{On: on} }

// String returns "auto", "on" or "off".
func (s HousekeepingSetting) String() string {
	switch {
	case s.Auto:
		return "auto"
	case s.On:
		return "on"
	}
	return "off"
}

// MarshalText implements encoding.TextMarshaler (for JSON; TOML takes
// MarshalTOML).
func (s HousekeepingSetting) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// MarshalTOML implements toml.Marshaler: a given setting is a TOML
// boolean, as in configurations written before it could be auto.
func (s HousekeepingSetting) MarshalTOML() ([]byte, error) {
	if s.Auto {
		return []byte(`"auto"`), nil
	}
	return []byte(strconv.FormatBool(s.On)), nil
}

// UnmarshalText implements encoding.TextUnmarshaler: "auto", "on" or
// "off", and "true" or "false", which the TOML decoder hands it for a
// boolean and scripts written for the flag's boolean days give.
func (s *HousekeepingSetting) UnmarshalText(b []byte) error {
	switch string(b) {
	case "auto":
		*s = autoHousekeeping()
	case "on", "true":
		*s = GivenHousekeeping(true)
	case "off", "false":
		*s = GivenHousekeeping(false)
	default:
		return fmt.Errorf("housekeeping %q: want auto, on or off", b)
	}
	return nil
}

// PriorSetting is a factor's prior as configured: auto (autoPrior), the
// prior that measured best for the likelihood (Resolve), or a given
// gibbs.Prior. As text it is "auto" or the prior's text ("uniform",
// "empirical", "0.05").
type PriorSetting struct {
	Auto  bool
	Prior gibbs.Prior // when not Auto
}

// autoPrior returns the prior chosen by the likelihood (Resolve).
func autoPrior() PriorSetting { return PriorSetting{Auto: true} }

// givenPrior returns the prior p, whatever the likelihood.
func givenPrior(p gibbs.Prior) PriorSetting { return PriorSetting{Prior: p} }

// Resolve returns the prior s stands for under noise: a given prior as it
// is; auto is the empirical prior under symmetric noise and the uniform
// one under dropout noise. Measured through `scpipe fit` (VALIDATION.md):
// on sparse completion (250 × 250, L = 5, 0.5% and 1% observed) with
// symmetric noise the empirical prior predicts the unobserved entries
// better than the uniform one; under dropout noise the two predict them
// alike (at chance), while on single-cell data the empirical prior
// recovers planted programs less well and finds no more PBMC marker sets,
// so dropout keeps the uniform prior that its single-cell tests were
// measured with.
func (s PriorSetting) Resolve(noise gibbs.Noise) gibbs.Prior {
	switch {
	case !s.Auto:
		return s.Prior
	case noise == gibbs.Dropout:
		return gibbs.Prior{}
	}
	return gibbs.EmpiricalPrior()
}

// String returns "auto" or the prior's text.
func (s PriorSetting) String() string {
	if s.Auto {
		return "auto"
	}
	return s.Prior.String()
}

// MarshalText implements encoding.TextMarshaler.
func (s PriorSetting) MarshalText() ([]byte, error) {
	if s.Auto {
		return []byte("auto"), nil
	}
	return s.Prior.MarshalText()
}

// UnmarshalText implements encoding.TextUnmarshaler (case and spaces
// ignored, as gibbs.Prior's).
func (s *PriorSetting) UnmarshalText(b []byte) error {
	if strings.EqualFold(strings.TrimSpace(string(b)), "auto") {
		*s = autoPrior()
		return nil
	}
	var p gibbs.Prior
	if err := p.UnmarshalText(b); err != nil {
		return fmt.Errorf("prior %q: want auto, uniform, empirical or probabilities in (0, 1)", b)
	}
	*s = givenPrior(p)
	return nil
}

// DataKind is what the auto settings of a fit are resolved from: what the
// shards' entries were before they were binarised.
type DataKind uint8

const (
	// CountData are binarised counts, such as single-cell expression: the
	// single-cell model (dropout noise with per-cell levels, a
	// housekeeping code; the auto prior is then uniform).
	CountData DataKind = iota
	// BinaryData are binary to begin with (a 0/1 matrix, simulated
	// binary data) or ratings binarised at a threshold: the paper's model
	// (symmetric noise, no housekeeping code; the auto prior is then
	// empirical).
	BinaryData
)

// dataKindOf says what the shards with manifest m hold, and why, from
// the manifest's Source.Values (and, for shards written before it was
// recorded, from ratings' own fields): counts, or binary data. A manifest
// that records neither (older ingests of 10x, MTX, h5ad, and older
// simulations) resolves to counts, the single-cell model that was fit's
// only default then, so that such runs fit as they did.
func dataKindOf(m *shard.Manifest) (DataKind, string) {
	simulated := m.Source.Format == "simulate"
	switch {
	case m.Source.Values == shard.ValuesRatings || m.Ratings.Count > 0:
		return BinaryData, "ratings binarised at a threshold (" + m.Source.Format + ")"
	case m.Source.Values == shard.ValuesBinary && simulated:
		return BinaryData, "simulated binary data"
	case m.Source.Values == shard.ValuesBinary:
		return BinaryData, "no stored value of the input exceeds 1 (" + m.Source.Format + ")"
	case m.Source.Values == shard.ValuesCounts && simulated:
		return CountData, "simulated single-cell counts"
	case m.Source.Values == shard.ValuesCounts:
		return CountData, "the input holds counts (stored values above 1, " + m.Source.Format + ")"
	}
	return CountData, "the shards' manifest does not record the input's values (written before scpipe recorded them): the single-cell model, as before; give --noise symmetric --housekeeping off for binary data"
}

// Resolve returns c with its auto settings made concrete for data of kind
// k; given settings stay as they are.
func (c FitConfig) Resolve(k DataKind) FitConfig {
	if len(c.Layers) > 0 {
		// The multi-layer OrMachine is the paper's model whatever the data.
		k = BinaryData
	}
	if c.Noise.Auto {
		c.Noise = givenNoise(gibbs.Dropout)
		if k == BinaryData {
			c.Noise = givenNoise(gibbs.Symmetric)
		}
	}
	if c.Housekeeping.Auto {
		c.Housekeeping = GivenHousekeeping(k == CountData)
	}
	return c
}

// resolved reports whether c names its model: no setting is auto.
func (c FitConfig) resolved() bool { return !c.Noise.Auto && !c.Housekeeping.Auto }

// resolveModel returns the validated c resolved (Resolve) for the shards
// with manifest m, checked where the choice matters (a housekeeping code
// counts against gibbs.MaxL), and logs the model chosen and why.
func (c FitConfig) resolveModel(m *shard.Manifest, log *slog.Logger) (FitConfig, error) {
	auto := !c.resolved()
	k, why := dataKindOf(m)
	if len(c.Layers) > 0 {
		why = "a multi-layer fit: the paper's symmetric-noise model, with no housekeeping code"
	}
	c = c.Resolve(k)
	if err := c.checkHousekeeping(); err != nil {
		return c, err
	}
	if err := c.checkSampler(c.L); err != nil {
		return c, err
	}
	if c.SplitMerge > 0 && m.CellSamples() != nil && c.SamplesModel && c.Noise.Noise == gibbs.Dropout && c.CellLevels > 1 && c.GeneLevels > 1 {
		return c, &SettingError{Key: "split_merge", Msg: "split_merge = " + strconv.Itoa(c.SplitMerge) +
			": split–merge moves do not weigh several samples' gene levels yet; set split_merge = 0, or samples_model = false"}
	}
	if !auto {
		why = "given (--noise, --housekeeping or the configuration)"
	}
	attrs := []any{"noise", c.Noise, "housekeeping", c.Housekeeping.On, "prior_u", c.PriorU.Resolve(c.Noise.Noise), "prior_z", c.PriorZ.Resolve(c.Noise.Noise)}
	if c.Noise.Noise == gibbs.Dropout {
		attrs = append(attrs, "cell_levels", c.CellLevels, "gene_levels", c.GeneLevels)
	}
	if S := len(m.SampleNames()); S > 1 {
		attrs = append(attrs, "samples", S, "samples_model", c.samplesModelOn())
	}
	log.Info("model: "+why, attrs...)
	return c, nil
}

// samplesModelOn reports whether the fits give each sample its own gene
// levels (samples_model), as the sampler does: with per-gene levels of
// dropout noise only.
func (c FitConfig) samplesModelOn() bool {
	return c.SamplesModel && c.Noise.Noise == gibbs.Dropout && c.CellLevels > 1 && c.GeneLevels > 1 && len(c.Layers) == 0
}
