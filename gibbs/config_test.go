package gibbs

import (
	"errors"
	"math"
	"testing"
)

// TestPerCodePriorsWithHousekeeping: a Fixed prior lists one probability,
// one per code of the L (the housekeeping code then takes p = 1/2), or one
// per code with the housekeeping code's last. The L alone were refused
// beside a housekeeping code ("PriorU has 4 probabilities, want 1 or L =
// 5"), so that per-program priors could not be used with scpipe fit's
// model for counts; other lengths are refused naming the field.
func TestPerCodePriorsWithHousekeeping(t *testing.T) {
	t.Parallel()
	logit := func(p float64) float64 { return math.Log(p) - math.Log1p(-p) }
	for _, tc := range []struct {
		p            []float64
		housekeeping bool
		want         []float64 // the codes' probabilities; nil: refused
	}{
		{[]float64{0.1, 0.1, 0.2, 0.2}, true, []float64{0.1, 0.1, 0.2, 0.2, 0.5}},
		{[]float64{0.1, 0.1, 0.2, 0.2, 0.3}, true, []float64{0.1, 0.1, 0.2, 0.2, 0.3}},
		{[]float64{0.3}, true, []float64{0.3, 0.3, 0.3, 0.3, 0.3}},
		{[]float64{0.1, 0.1, 0.2, 0.2}, false, []float64{0.1, 0.1, 0.2, 0.2}},
		{[]float64{0.1, 0.1, 0.2, 0.2, 0.3}, false, nil},
		{[]float64{0.1, 0.2, 0.3}, true, nil},
		{[]float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, true, nil},
	} {
		c := DefaultConfig()
		c.L, c.Housekeeping, c.PriorU = 4, tc.housekeeping, FixedPrior(tc.p...)
		err := c.Validate()
		var fe *FieldError
		if tc.want == nil {
			if !errors.As(err, &fe) || fe.Field != "PriorU" || !errors.Is(err, ErrConfig) {
				t.Errorf("%v (housekeeping %v): %v, want a refusal naming PriorU", tc.p, tc.housekeeping, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v (housekeeping %v): %v", tc.p, tc.housekeeping, err)
			continue
		}
		got := c.PriorU.logits(len(tc.want), 0.1)
		for l, p := range tc.want {
			if math.Abs(got[l]-logit(p)) > 1e-12 {
				t.Errorf("%v (housekeeping %v): code %d has logit %v, want %v (p = %v)", tc.p, tc.housekeeping, l, got[l], logit(p), p)
			}
		}
	}
}

// TestValidateNamesTheField: Validate's refusals name the Config field to
// blame, so that pipeline can name its own setting.
func TestValidateNamesTheField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		field string
		mod   func(*Config)
	}{
		{"L", func(c *Config) { c.L = 0 }},
		{"BurnIn", func(c *Config) { c.BurnIn = -1 }},
		{"Samples", func(c *Config) { c.Samples = MaxSweeps + 1 }},
		{"Thin", func(c *Config) { c.Thin = c.Samples + 1 }},
		{"CellLevels", func(c *Config) { c.CellLevels = 3 }},
		{"GeneLevels", func(c *Config) { c.GeneLevels = 16 }},
		{"Init", func(c *Config) { c.Init = 9 }},
		{"Starts", func(c *Config) { c.Starts = 0 }},
		{"StartSweeps", func(c *Config) { c.StartSweeps = c.BurnIn + 1 }},
		{"PriorZ", func(c *Config) { c.PriorZ = FixedPrior(1.5) }},
	} {
		c := DefaultConfig()
		tc.mod(&c)
		var fe *FieldError
		if err := c.Validate(); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: %v, want a refusal naming it", tc.field, err)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("DefaultConfig: %v", err)
	}
}
