package pipeline

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFitFlags: the defaults, then the --config file, then the flags
// given, each parsed once; the settings given are reported by key; a
// multi-layer fit takes the paper's settings where the defaults were
// left; and a refused setting is named by where it came from.
func TestFitFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(file, []byte("L = \"3,5\"\nchains = 3\nburn_in = 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := FitFlags{Shards: "s", Output: filepath.Join(dir, "run"), File: file, Set: map[string]string{"L": "4", "holdout": "0.25", "seed": "9", "reseed": "false"}}
	cfg, given, err := f.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.L.String() != "4" || cfg.Chains != 3 || cfg.BurnIn != 7 || cfg.Holdout != 0.25 || cfg.Seed != 9 || cfg.Reseed || cfg.Shards != "s" {
		t.Errorf("resolved %+v", cfg)
	}
	if want := []string{"L", "burn_in", "chains", "holdout", "reseed", "seed"}; !slices.Equal(given, want) {
		t.Errorf("given %q, want %q", given, want)
	}
	layers, _, err := FitFlags{Set: map[string]string{"layers": "6,3"}}.Resolve()
	if err != nil || layers.L.String() != "6" || layers.Starts != 1 || layers.Reseed {
		t.Errorf("--layers 6,3: L=%s starts=%d reseed=%v (%v), want the first layer's L, one start, no re-seeding", layers.L, layers.Starts, layers.Reseed, err)
	}
	if _, _, err := (FitFlags{Set: map[string]string{"prior-u": "bad"}}).Resolve(); err == nil || !strings.HasPrefix(err.Error(), "--prior-u: ") {
		t.Errorf("--prior-u bad: %v, want an error naming the flag", err)
	}
	bad := &SettingError{Key: "burn_in", Msg: "burn_in = -1"}
	for _, tc := range []struct {
		f    FitFlags
		want string
	}{
		{FitFlags{Set: map[string]string{"burn-in": "-1"}, File: file}, "--burn-in: "},
		{FitFlags{File: file}, "config " + file + ": "},
		{FitFlags{Output: "run", Continues: true}, filepath.Join("run", "config.toml") + ": "},
		{FitFlags{}, "invalid configuration: "},
	} {
		if got := tc.f.Source(bad, given).Error(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%+v: %q, want it to start %q", tc.f, got, tc.want)
		}
	}
}
