package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"scpipe/gibbs"
	"scpipe/internal/rundir"
	"scpipe/pipeline/runsummary"

	"scpipe/simulate/simtest"
)

// TestConvergencePlanted fits small planted data and checks the
// convergence flag and its warning against what the chains found: where
// every chain's codes agree with chain 1's (agreement ≥ 0.99 and the same
// number of programs) the flag says yes and the log warns of nothing;
// where a chain disagrees (agreement < runsummary.MinAgreement) the flag says no and
// the log says so, naming the stable programs, as a warning at the
// recommended L. Each case must hold chains of
// the kind it is there for, so that the test cannot pass on nothing.
func TestConvergencePlanted(t *testing.T) {
	shards, _ := simtest.Shards(t, smallPlanted)
	for _, tc := range []struct {
		name          string
		configure     func(*FitConfig)
		agree, differ []int // the L whose chains must agree, and differ
		stable        map[int]int
	}{
		// The default start at the planted L = 4 finds the four programs in
		// both chains; at L = 5 chain 2 makes a fifth program of a few
		// genes that chain 1 leaves unused.
		{"default start", func(c *FitConfig) { c.L = LSizes{4, 5} }, []int{4}, []int{5}, map[int]int{4: 4, 5: 4}},
		// A fair-coin start and a dozen sweeps: the chains have not found
		// the programs, each has its own.
		{"fair coin, few sweeps", func(c *FitConfig) {
			c.L, c.Init, c.Starts, c.BurnIn, c.Samples, c.MaxBurnIn = LSizes{4}, gibbs.InitRandom, 1, 4, 8, 0
		}, nil, []int{4}, map[int]int{4: 0}},
	} {
		cfg := smallConfig(shards, filepath.Join(t.TempDir(), "run"))
		tc.configure(&cfg)
		var log bytes.Buffer
		rep, err := Fit(context.Background(), cfg, FitOptions{Log: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		byL := map[int][]rundir.SummaryRow{}
		for _, r := range rep.Summary {
			byL[r.L] = append(byL[r.L], r)
		}
		var agreed, differed []int
		for L, rows := range byL {
			said := func(level string) bool {
				return regexp.MustCompile(fmt.Sprintf(`level=%s msg="chains have not converged[^\n]* L=%d `, level, L)).MatchString(log.String())
			}
			warned := said("(WARN|INFO)")
			lowest, same := 1.0, true
			for _, r := range rows {
				lowest = min(lowest, r.Agreement)
				same = same && r.Programs == rows[0].Programs
			}
			switch {
			case lowest >= 0.99 && same:
				agreed = append(agreed, L)
				if rows[0].Converged != "yes" || warned {
					t.Errorf("%s, L = %d: the chains agree (%.3f) yet converged = %q, warned %v (R̂ within chains %v)",
						tc.name, L, lowest, rows[0].Converged, warned, rows[0].RHatWithin)
				}
			case lowest < runsummary.MinAgreement:
				differed = append(differed, L)
				if rows[0].Converged != "no" || !warned || rows[0].Recommended && !said("WARN") {
					t.Errorf("%s, L = %d: the chains disagree (%.3f) yet converged = %q, logged %v, warned %v (recommended %v)",
						tc.name, L, lowest, rows[0].Converged, warned, said("WARN"), rows[0].Recommended)
				}
			}
			for _, r := range rows {
				if want, ok := tc.stable[L]; ok && (r.StablePrograms != want || len(r.StableCodes) != want) {
					t.Errorf("%s, L = %d chain %d: %d stable programs, codes %v; want %d", tc.name, L, r.Chain, r.StablePrograms, r.StableCodes, want)
				}
			}
		}
		slices.Sort(agreed)
		slices.Sort(differed)
		if !slices.Equal(agreed, tc.agree) || !slices.Equal(differed, tc.differ) {
			t.Errorf("%s: chains agree at L = %v and differ at %v; the case is for %v and %v", tc.name, agreed, differed, tc.agree, tc.differ)
		}
	}
}
