package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// tinyOptions is a benchmark small enough for a unit test.
func tinyOptions(t *testing.T) Options {
	o := DefaultOptions()
	o.Sizes = []Size{{300, 200}, {130, 70}}
	o.Ls = []int{2, 3}
	o.Workers, o.Warmup, o.Sweeps, o.StreamReps = 2, 1, 3, 2
	o.Work = t.TempDir()
	o.Log = discard()
	return o
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// TestRunReportIsConsistent runs the benchmark on tiny sizes and checks that
// every field is present and agrees with the sizes and the other fields.
func TestRunReportIsConsistent(t *testing.T) {
	o := tinyOptions(t)
	o.CPUProfile = filepath.Join(t.TempDir(), "cpu.pprof")
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != len(o.Sizes)*len(o.Ls) {
		t.Fatalf("%d results, want %d", len(rep.Results), len(o.Sizes)*len(o.Ls))
	}
	if rep.Machine.Cores < 1 || rep.Machine.GoVersion == "" || rep.Kernel == "" || len(rep.Kernels) == 0 || rep.Sweeps != o.Sweeps || rep.Warmup != o.Warmup {
		t.Errorf("report header: %+v", rep)
	}
	k := 0
	for _, s := range o.Sizes {
		for _, L := range o.Ls {
			r := rep.Results[k]
			k++
			if r.Cells != s.Cells || r.Genes != s.Genes || r.L != L || r.Workers != o.Workers || r.Entries != s.Entries() {
				t.Errorf("result %d is %d×%d L=%d -j%d, want %v L=%d", k, r.Cells, r.Genes, r.L, r.Workers, s, L)
			}
			if r.Cached || r.GenerateSeconds <= 0 {
				t.Errorf("%v L=%d: first run should generate (cached %v, %v s)", s, L, r.Cached, r.GenerateSeconds)
			}
			if r.Ones <= 0 || !near(r.Density, float64(r.Ones)/float64(r.Entries)) {
				t.Errorf("%v: ones %d, density %v", s, r.Ones, r.Density)
			}
			if len(r.SweepSeconds) != o.Sweeps || len(r.StreamSeconds) != o.StreamReps {
				t.Errorf("%v L=%d: %d sweeps and %d stream passes timed", s, L, len(r.SweepSeconds), len(r.StreamSeconds))
			}
			if !(r.SweepMin > 0 && r.SweepMin <= r.SweepMedian && r.SweepMedian <= r.SweepMax) {
				t.Errorf("%v L=%d: sweep seconds min %v median %v max %v", s, L, r.SweepMin, r.SweepMedian, r.SweepMax)
			}
			if !near(r.EntriesPerSec, float64(r.Entries)/r.SweepMedian) || !near(r.EntriesPerSecPerCore*float64(r.Workers), r.EntriesPerSec) {
				t.Errorf("%v L=%d: entries/s %v, per core %v, from %d entries in %v s", s, L, r.EntriesPerSec, r.EntriesPerSecPerCore, r.Entries, r.SweepMedian)
			}
			// X: cells rows of ceil(genes/64) words; Xᵀ: genes rows of one
			// segment per cell block (one block at these sizes).
			wantBytes := 8 * (int64(s.Cells)*int64((s.Genes+63)/64) + int64(s.Genes)*int64((s.Cells+63)/64))
			if r.StreamBytes != wantBytes {
				t.Errorf("%v: stream read %d bytes, want %d", s, r.StreamBytes, wantBytes)
			}
			if !(r.StreamMedian > 0) || !near(r.StreamGBps, float64(r.StreamBytes)/r.StreamMedian/1e9) || !near(r.Ratio, r.SweepMedian/r.StreamMedian) {
				t.Errorf("%v L=%d: stream %v s, %v GB/s, ratio %v", s, L, r.StreamMedian, r.StreamGBps, r.Ratio)
			}
			if len(r.RowOrderSeconds) != o.StreamReps || !(r.RowOrderMedian > 0) {
				t.Errorf("%v L=%d: row-order stream %v", s, L, r.RowOrderSeconds)
			}
			if r.StateBytes != StateBytes(s, L) || r.StateBytes <= 0 {
				t.Errorf("%v L=%d: state %d bytes, want %d", s, L, r.StateBytes, StateBytes(s, L))
			}
			if !(r.Background > 0 && r.Dropout > 0 && r.Background < 1-r.Dropout && r.Accuracy > 0.5 && r.Accuracy <= 1) {
				t.Errorf("%v L=%d: dropout %v, background %v, accuracy %v", s, L, r.Dropout, r.Background, r.Accuracy)
			}
			if runtime.GOOS == "linux" {
				if r.PeakAnonBytes <= 0 || r.PeakHWMBytes < r.PeakAnonBytes || r.AnonAboveStateBytes != r.PeakAnonBytes-r.StateBytes {
					t.Errorf("%v L=%d: peak anon %d, VmHWM %d, above state %d, state %d", s, L, r.PeakAnonBytes, r.PeakHWMBytes, r.AnonAboveStateBytes, r.StateBytes)
				}
				if r.CPUUtilisation <= 0 {
					t.Errorf("%v L=%d: CPU utilisation %v", s, L, r.CPUUtilisation)
				}
			}
		}
	}
	if fi, err := os.Stat(o.CPUProfile); err != nil || fi.Size() == 0 {
		t.Errorf("CPU profile: %v", err)
	}

	// A second run reuses the cached datasets, and refuses to replace the
	// profile without Force.
	if _, err := Run(context.Background(), o); !errors.Is(err, errOptions) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("second run onto an existing profile: %v, want an error suggesting --force", err)
	}
	o.Force, o.Sizes, o.Ls = true, o.Sizes[:1], o.Ls[:1]
	again, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if r := again.Results[0]; !r.Cached || r.GenerateSeconds != 0 || r.Ones != rep.Results[0].Ones {
		t.Errorf("second run: cached %v, generate %v s, ones %d, want the cached %d ones", r.Cached, r.GenerateSeconds, r.Ones, rep.Results[0].Ones)
	}
}

func TestReportWriters(t *testing.T) {
	o := tinyOptions(t)
	o.Sizes, o.Ls = o.Sizes[1:], []int{4}
	o.Command = "scpipe bench --size 130x70 --L 4"
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("JSON does not parse back: %v\n%s", err, js.String())
	}
	if back.Command != o.Command || len(back.Results) != 1 || back.Results[0].SweepMedian != rep.Results[0].SweepMedian ||
		back.Results[0].StreamBytes != rep.Results[0].StreamBytes {
		t.Errorf("JSON round trip lost fields: %+v", back)
	}
	var tab bytes.Buffer
	if err := rep.WriteTable(&tab); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"130×70", "sweep/stream", "row-order s", "peak anon", "machine:", "1 warm-up + 3 timed sweeps", "prior of Z and U uniform"} {
		if !strings.Contains(tab.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tab.String())
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	existing := filepath.Join(t.TempDir(), "cpu.pprof")
	if err := os.WriteFile(existing, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		edit    func(*Options)
		mention string
	}{
		{"no sizes", func(o *Options) { o.Sizes = nil }, "no sizes"},
		{"no L", func(o *Options) { o.Ls = nil }, "no latent sizes"},
		{"L zero", func(o *Options) { o.Ls = []int{2, 0} }, "L = 0"},
		{"L too big", func(o *Options) { o.Ls = []int{65} }, "L = 65"},
		{"workers", func(o *Options) { o.Workers = 0 }, "workers"},
		{"warm-up", func(o *Options) { o.Warmup = -1 }, "warm-up"},
		{"sweeps", func(o *Options) { o.Sweeps = 0 }, "timed sweeps"},
		{"stream passes", func(o *Options) { o.StreamReps = 0 }, "stream passes"},
		{"density", func(o *Options) { o.Density = 1.5 }, "density"},
		{"work", func(o *Options) { o.Work = "" }, "work folder"},
		{"prior", func(o *Options) { o.Prior = "1.5" }, "prior"},
		{"profile exists", func(o *Options) { o.CPUProfile = existing }, "already exists"},
		{"kernel", func(o *Options) { o.Kernel = "avx9000" }, `kernel "avx9000"`},
	}
	for _, tt := range tests {
		o := DefaultOptions()
		tt.edit(&o)
		err := o.Validate()
		if !errors.Is(err, errOptions) || !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("%s: Validate() = %v, want errOptions mentioning %q", tt.name, err, tt.mention)
		}
	}
	o := DefaultOptions()
	if err := o.Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	o.CPUProfile, o.Force = existing, true
	if err := o.Validate(); err != nil {
		t.Errorf("existing profile with Force: %v", err)
	}
}

func TestDefaultOptionsArePapers(t *testing.T) {
	t.Parallel()
	o := DefaultOptions()
	if len(o.Sizes) != 1 || o.Sizes[0] != (Size{paperCells, paperGenes}) || o.Sizes[0].Entries() < 1.4e10 {
		t.Errorf("default sizes %v, want the paper's 1.3M × 11k", o.Sizes)
	}
	if len(o.Ls) != 2 || o.Ls[0] != 2 || o.Ls[1] != 10 || o.Density != 0.07 {
		t.Errorf("defaults: L %v, density %v", o.Ls, o.Density)
	}
}

func TestStateBytesAndMedian(t *testing.T) {
	t.Parallel()
	// 1.3M cells and 11k genes at L = 2: 2·(20313 + 172) words of bits plus
	// 2·1,311,000 counts of 4 bytes.
	if got, want := StateBytes(Size{paperCells, paperGenes}, 2), int64(2*(20313+172)*8+2*1_311_000*4); got != want {
		t.Errorf("StateBytes = %d, want %d", got, want)
	}
	for _, tt := range []struct {
		xs   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		in := append([]float64(nil), tt.xs...)
		if got := median(tt.xs); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.xs, got, tt.want)
		}
		if !slices.Equal(in, tt.xs) {
			t.Errorf("median modified its input: %v", tt.xs)
		}
	}
}

func TestRunCancelled(t *testing.T) {
	o := tinyOptions(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, o); !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a cancelled context = %v, want context.Canceled", err)
	}
}

// TestLoadNote checks that the table says other processes shared the
// cores only when the load average says so: it printed the remark after
// every run, a load of 1.6 on two cores at -j 2 included.
func TestLoadNote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		before, after float64
		workers       []int
		shared        bool
	}{
		{1.61, 1.61, []int{2}, false},
		{0.2, 2.5, []int{2}, true},
		{6.5, 1.0, []int{2, 4}, true},
		{3.5, 3.9, []int{2, 4}, false},
	} {
		got := loadNote(tc.before, tc.after, tc.workers)
		if shared := strings.Contains(got, "other processes shared the cores"); shared != tc.shared || !strings.Contains(got, "load average") {
			t.Errorf("loadNote(%v, %v, -j %v) = %q, want the remark %v", tc.before, tc.after, tc.workers, got, tc.shared)
		}
	}
}
