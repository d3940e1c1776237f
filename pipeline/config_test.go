package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"scpipe/gibbs"
)

func TestParseLSpec(t *testing.T) {
	tests := []struct {
		spec string
		want []int
		ok   bool
	}{
		{"5", []int{5}, true},
		{"2..10", []int{2, 3, 4, 5, 6, 7, 8, 9, 10}, true},
		{"2,4,8", []int{2, 4, 8}, true},
		{" 8, 2..3 ,2", []int{2, 3, 8}, true},
		{"5..5", []int{5}, true},
		{"5..2", nil, false},
		{"0", nil, false},
		{"1..65", nil, false},
		{"", nil, false},
		{"a..3", nil, false},
		{"2..", nil, false},
		{"-1", nil, false},
	}
	for _, tt := range tests {
		got, err := ParseLSpec(tt.spec)
		if (err == nil) != tt.ok || !slices.Equal(got, tt.want) {
			t.Errorf("ParseLSpec(%q) = %v, %v; want %v (ok=%v)", tt.spec, got, err, tt.want, tt.ok)
		}
		if err != nil && (!errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.spec)) {
			t.Errorf("ParseLSpec(%q) error %q should wrap ErrConfig and quote the spec", tt.spec, err)
		}
	}
}

// TestLSizesText checks that L sizes read from text write back in their
// canonical form, as config.toml records them.
func TestLSizesText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"5", "5"}, {"2..10", "2..10"}, {"2,4,8", "2,4,8"}, {"8,2,3,4", "2..4,8"}, {" 3 , 3..4 ", "3..4"},
	} {
		var ls LSizes
		if err := ls.UnmarshalText([]byte(tt.in)); err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if got := ls.String(); got != tt.want {
			t.Errorf("%q: written as %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLoadFitConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.toml", "L = \"2,3\"\nchains = 4\nholdout = 0.05\n")
	c, _, err := LoadFitConfig(good, DefaultFitConfig())
	if err != nil {
		t.Fatal(err)
	}
	if c.L.String() != "2..3" || c.Chains != 4 || c.Holdout != 0.05 || c.BurnIn != DefaultFitConfig().BurnIn {
		t.Errorf("loaded %+v", c)
	}
	unknown := write("unknown.toml", "L = \"2\"\nchain = 4\n")
	if _, _, err := LoadFitConfig(unknown, DefaultFitConfig()); err == nil || !strings.Contains(err.Error(), "unknown key chain") || !strings.Contains(err.Error(), "unknown.toml") {
		t.Errorf("unknown key: %v", err)
	}
	badType := write("badtype.toml", "chains = \"four\"\n")
	if _, _, err := LoadFitConfig(badType, DefaultFitConfig()); err == nil || !errors.Is(err, ErrConfig) {
		t.Errorf("bad type: %v", err)
	}
}

func TestConfigRoundTrip(t *testing.T) {
	c := DefaultFitConfig()
	c.Shards, c.Output, c.L, c.Seed = "shards", "run", LSizes{3, 5}, 42
	c.PriorU, c.PriorZ = givenPrior(gibbs.FixedPrior(0.05)), givenPrior(gibbs.EmpiricalPrior())
	data, err := c.encodeTOML()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(p, data, 0o644)
	got, _, err := LoadFitConfig(p, FitConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("round trip: got %+v, want %+v", got, c)
	}
}

func TestShippedConfigs(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "configs", "*.toml"))
	if len(paths) == 0 {
		t.Fatal("no configs/*.toml shipped")
	}
	for _, p := range paths {
		c, _, err := LoadFitConfig(p, DefaultFitConfig())
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		c.Shards, c.Output = "s", "o"
		if _, err := c.Validate(); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestDefaultConfigFileIsTheDefaults checks configs/default.toml against
// DefaultFitConfig: docs/commands.md gives "defaults as in
// configs/default.toml", so the file must set every default, each to the
// value scpipe fit uses. Read over an empty configuration, a key missing
// from the file stays zero and shows.
func TestDefaultConfigFileIsTheDefaults(t *testing.T) {
	t.Parallel()
	got, _, err := LoadFitConfig(filepath.Join("..", "configs", "default.toml"), FitConfig{})
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultFitConfig()
	gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range gv.NumField() {
		if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) {
			t.Errorf("configs/default.toml: %s = %v, scpipe fit's default %v", gv.Type().Field(i).Tag.Get("toml"), gv.Field(i).Interface(), wv.Field(i).Interface())
		}
	}
}
