package pipeline

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestGivenOver checks that a continued run takes from the command
// exactly the settings it chose: each TOML key moves its own field and
// no other, every key of FitConfig can be chosen, the zero Given takes
// the command's whole configuration and GivenKeys() none of it but the
// paths.
func TestGivenOver(t *testing.T) {
	run := DefaultFitConfig()
	run.Shards, run.Output = "old-shards", "old-run"
	cmd := FitConfig{Shards: "shards", Output: "run", L: LSizes{9}, Chains: 7, BurnIn: 11, Samples: 13, Thin: 3, Seed: 17,
		Holdout: 0.3, CellLevels: 8, GeneLevels: 8, Init: 2, Reseed: !run.Reseed, HoldFrom: 19, MaxBurnIn: 23, Starts: 29,
		StartSweeps: 31, CheckpointEvery: 37, CheckpointMinutes: 41, Threads: 43, FixedCodes: "fixed.gmt", Layers: LayerSizes{5, 3},
		LayerPriorU: LayerPriors{{}, {}}, KeepSamples: true}
	if err := cmd.PriorU.UnmarshalText([]byte("0.2")); err != nil {
		t.Fatal(err)
	}
	if err := cmd.PriorZ.UnmarshalText([]byte("0.3")); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Noise.UnmarshalText([]byte("symmetric")); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Housekeeping.UnmarshalText([]byte("off")); err != nil {
		t.Fatal(err)
	}
	if got := (Given{}).over(run, cmd); !reflect.DeepEqual(got, cmd) {
		t.Errorf("the zero Given took %+v, want the command's whole configuration", got)
	}
	paths := run
	paths.Shards, paths.Output = cmd.Shards, cmd.Output
	if got := GivenKeys().over(run, cmd); !reflect.DeepEqual(got, paths) {
		t.Errorf("GivenKeys() took %+v, want the run's configuration with the command's paths", got)
	}
	ft := reflect.TypeFor[FitConfig]()
	for _, key := range configKeys() {
		if _, ok := takeSetting[key]; !ok {
			t.Errorf("key %s cannot be given", key)
			continue
		}
		got := reflect.ValueOf(GivenKeys(key).over(run, cmd))
		for i := range ft.NumField() {
			k, _, _ := strings.Cut(ft.Field(i).Tag.Get("toml"), ",")
			want := reflect.ValueOf(run).Field(i)
			if k == key || slices.Contains([]string{"shards", "output"}, k) {
				want = reflect.ValueOf(cmd).Field(i)
			}
			if !reflect.DeepEqual(got.Field(i).Interface(), want.Interface()) {
				t.Errorf("given %s: %s = %v, want %v", key, ft.Field(i).Name, got.Field(i), want)
			}
		}
	}
}
