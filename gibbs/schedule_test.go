package gibbs

import "testing"

// TestSchedule pins the burn-in's schedule of the configurations in use:
// the package's default, scpipe fit's (dropout noise with 8 cell and 8
// gene levels, 4 starts of 5 sweeps, re-seeding), the same with held
// parameters and a settling burn-in, and a fixed-parameter chain.
func TestSchedule(t *testing.T) {
	t.Parallel()
	fit := Config{L: 4, Thin: 1, Lambda: 1, BurnIn: 25, Samples: 100, Starts: 4, StartSweeps: 5, Reseed: true, Noise: Dropout, CellLevels: 8, GeneLevels: 8}
	held := fit
	held.BurnIn, held.HoldFrom, held.MaxBurnIn = 50, 50, 200
	fixed := fit
	fixed.FixLambda, fixed.Starts = true, 1
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"DefaultConfig", DefaultConfig(), "starts kept after 10; burn-in 100"},
		{"scpipe fit", fit, "starts kept after 5; re-seeding before [5 10]; gene levels from 12; burn-in 25"},
		{"held, settling", held, "starts kept after 5; re-seeding before [5 10]; gene levels from 25; held from 50; burn-in 50 to 200 until settled"},
		{"fixed, one start", fixed, "re-seeding before [1 6]; gene levels from 12; parameters fixed; burn-in 25"},
	} {
		r, err := tc.cfg.resolve()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := newSchedule(r).String(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
