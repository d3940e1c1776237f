package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"scpipe/gibbs"
	"scpipe/internal/outlock"
	"scpipe/pipeline"
)

// Options configure a benchmark run. Start from DefaultOptions.
type Options struct {
	Sizes      []Size      // datasets, measured in order
	Ls         []int       // latent sizes to time on every dataset
	Workers    int         // sampler and stream workers (the -j of a fit)
	Warmup     int         // untimed sweeps before the timed ones, so the state settles
	Sweeps     int         // timed sweeps per (size, L)
	StreamReps int         // timed stream-once passes per (size, L), after one untimed pass
	Density    float64     // fraction of ones of the planted data
	Seed       uint64      // seed of the planted data and of the sampler
	Prior      string      // prior of Z and U as a fit takes it: "uniform" (a fit's default auto prior under its dropout noise), "empirical" or a probability
	Noise      gibbs.Noise // the likelihood (a fit's default: dropout)
	// Housekeeping adds a code every cell uses beside the L timed ones, as
	// a fit does by default.
	Housekeeping bool
	// CellLevels is the number of per-cell background levels of dropout
	// noise (a fit's default: 8).
	CellLevels int
	// GeneLevels is the number of per-gene background levels (a fit's
	// default: 1, none).
	GeneLevels int
	Work       string       // cache folder of generated datasets
	CPUProfile string       // if not empty, write a CPU profile of the measurements here
	Force      bool         // replace an existing CPUProfile file
	Kernel     string       // the sampler's kernel, one of gibbs.Kernels(); "": the fastest this CPU runs
	Cached     bool         // write generated datasets through the page cache (shard.CreateOptions.Cached)
	Command    string       // the command line, recorded in the report
	Log        *slog.Logger // progress lines; nil: none
}

// DefaultOptions returns the benchmark: the paper's 1.3M × 11k
// cells × genes at 7% ones, L = 2 and 10, every core, 5 warm-up and 5 timed
// sweeps, 3 timed stream passes, data cached under defaultWork.
func DefaultOptions() Options {
	sizes, _ := ParseSizes(DefaultSizes)
	fit := pipeline.DefaultFitConfig().Resolve(pipeline.CountData) // timed as on the paper's 1.3M cells of expression counts
	return Options{
		Sizes: sizes, Ls: []int{2, 10}, Workers: runtime.NumCPU(),
		Warmup: 5, Sweeps: 5, StreamReps: 3,
		Density: defaultDensity, Seed: 1, Work: defaultWork(),
		Prior: fit.PriorU.Resolve(fit.Noise.Noise).String(), Noise: fit.Noise.Noise, Housekeeping: fit.Housekeeping.On, CellLevels: fit.CellLevels,
		GeneLevels: fit.GeneLevels,
	}
}

// Validate reports the first invalid option, wrapping errOptions.
func (o Options) Validate() error {
	switch {
	case len(o.Sizes) == 0:
		return fmt.Errorf("%w: no sizes", errOptions)
	case len(o.Ls) == 0:
		return fmt.Errorf("%w: no latent sizes L", errOptions)
	case o.Workers < 1:
		return fmt.Errorf("%w: workers = %d, want at least 1", errOptions, o.Workers)
	case o.Warmup < 0:
		return fmt.Errorf("%w: warm-up sweeps = %d, want at least 0", errOptions, o.Warmup)
	case o.Sweeps < 1:
		return fmt.Errorf("%w: timed sweeps = %d, want at least 1", errOptions, o.Sweeps)
	case o.StreamReps < 1:
		return fmt.Errorf("%w: stream passes = %d, want at least 1", errOptions, o.StreamReps)
	case o.Work == "":
		return fmt.Errorf("%w: no work folder", errOptions)
	}
	if _, err := samplerPrior(o.Prior); err != nil {
		return err
	}
	if o.Kernel != "" && !slices.Contains(gibbs.Kernels(), o.Kernel) {
		return fmt.Errorf("%w: kernel %q: this build and CPU run %s", errOptions, o.Kernel, strings.Join(gibbs.Kernels(), ", "))
	}
	for _, L := range o.Ls {
		if L < 1 || L > gibbs.MaxL {
			return fmt.Errorf("%w: L = %d outside 1..%d", errOptions, L, gibbs.MaxL)
		}
	}
	for _, s := range o.Sizes {
		if _, err := plantedParams(s, o.Density, o.Seed); err != nil {
			return err
		}
	}
	if o.CPUProfile != "" && !o.Force {
		if _, err := os.Stat(o.CPUProfile); err == nil {
			return fmt.Errorf("%w: CPU profile %s already exists (use --force to replace it)", errOptions, o.CPUProfile)
		}
	}
	return nil
}

// Result is the measurement of one (size, L).
type Result struct {
	Cells   int     `json:"cells"`
	Genes   int     `json:"genes"`
	Entries int64   `json:"entries"`
	Ones    int64   `json:"ones"`
	Density float64 `json:"density"`
	L       int     `json:"L"`
	Workers int     `json:"workers"`
	Warmup  int     `json:"warmup_sweeps"`
	Prior   string  `json:"prior"`

	// Dataset provenance: the cache folder, and whether this run generated it.
	Dataset         string  `json:"dataset"`
	Cached          bool    `json:"cached"`
	GenerateSeconds float64 `json:"generate_seconds,omitempty"`

	// Timed sweeps (Z step, U step, λ update, posterior accumulation).
	SweepSeconds         []float64 `json:"sweep_seconds"`
	SweepMedian          float64   `json:"sweep_median_seconds"`
	SweepMin             float64   `json:"sweep_min_seconds"`
	SweepMax             float64   `json:"sweep_max_seconds"`
	EntriesPerSec        float64   `json:"entries_per_second"`          // Entries / SweepMedian
	EntriesPerSecPerCore float64   `json:"entries_per_second_per_core"` // EntriesPerSec / Workers
	// CPUUtilisation is the process's CPU time over the timed sweeps divided
	// by wall time × Workers: well below 1 means the cores were shared with
	// other work (or the sampler idled), so the times are pessimistic.
	CPUUtilisation float64 `json:"cpu_utilisation"`
	// Dropout, Background, Accuracy and Flips describe the chain over the
	// timed sweeps (the last rates and accuracy, the median flips per
	// sweep): a settled chain has stable rates and few flips.
	Dropout    float64 `json:"dropout"`
	Background float64 `json:"background"`
	Accuracy   float64 `json:"accuracy"`
	Flips      int64   `json:"flips_per_sweep"`

	// Stream-once: a parallel popcount over every word of X and Xᵀ, timed
	// with a warm page cache in the same run.
	StreamBytes   int64     `json:"stream_bytes"`
	StreamSeconds []float64 `json:"stream_seconds"`
	StreamMedian  float64   `json:"stream_median_seconds"`
	StreamGBps    float64   `json:"stream_gb_per_second"` // StreamBytes / StreamMedian / 1e9
	Ratio         float64   `json:"sweep_over_stream"`    // SweepMedian / StreamMedian
	// RowOrderMedian is the median time of the same passes in RowOrder,
	// the order in which the sampler reads (a gene of Xᵀ visits every cell
	// block's file): its excess over StreamMedian is the cost of the access
	// pattern alone, without any arithmetic.
	RowOrderSeconds []float64 `json:"row_order_stream_seconds"`
	RowOrderMedian  float64   `json:"row_order_stream_median_seconds"`

	// Memory. StateBytes is the sampler's O((cells + genes)·L) state: the Z
	// and U bitsets and the 32-bit posterior counts. The others are read from
	// /proc/self/status (0 where unavailable): the anonymous resident memory
	// before the sampler was built, its peak over the sampler's life
	// (construction, warm-up, timed sweeps, stream passes), and the peak
	// resident set VmHWM over the same span, which also counts the mapped
	// shard pages of the page cache.
	StateBytes          int64 `json:"state_bytes"`
	BaselineAnonBytes   int64 `json:"baseline_anon_bytes"`
	PeakAnonBytes       int64 `json:"peak_anon_bytes"`
	AnonAboveStateBytes int64 `json:"anon_above_state_bytes"` // PeakAnonBytes − StateBytes
	PeakHWMBytes        int64 `json:"peak_hwm_bytes"`
	HWMReset            bool  `json:"hwm_reset"` // VmHWM was reset before this measurement (else it is the process's peak)
}

// Machine describes where a report was measured.
type Machine struct {
	CPU        string `json:"cpu"`
	Cores      int    `json:"cores"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	MemBytes   int64  `json:"mem_bytes"`
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
}

// Report is the outcome of Run.
type Report struct {
	Command    string    `json:"command,omitempty"`
	Started    time.Time `json:"started"`
	Machine    Machine   `json:"machine"`
	Warmup     int       `json:"warmup_sweeps"`
	Sweeps     int       `json:"timed_sweeps"`
	StreamReps int       `json:"stream_passes"`
	Prior      string    `json:"prior"`
	// Kernel is the sampler kernel measured, and Kernels those this build
	// and CPU run (fastest first).
	Kernel  string   `json:"kernel"`
	Kernels []string `json:"kernels"`
	// LoadBefore and LoadAfter are the 1-minute load averages at the start
	// and end: above the worker count, other processes were competing.
	LoadBefore float64  `json:"load_before"`
	LoadAfter  float64  `json:"load_after"`
	Results    []Result `json:"results"`
}

// Run generates (or reuses) the planted dataset of every size, then for
// each size and L builds a sampler as a fit does (data-seeded codes, one
// start, o.Workers workers), runs o.Warmup untimed sweeps, times
// o.StreamReps stream-once passes over X and Xᵀ and o.Sweeps sweeps, and
// returns the measurements. Datasets are generated before any measurement
// so that the CPU profile and memory peaks see only the sampler.
// Cancelling ctx stops the run between sweeps with ctx's error.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	kernel := o.Kernel
	if kernel == "" {
		kernel = gibbs.Kernels()[0]
	}
	gen := make(map[Size]float64) // seconds spent generating each dataset in this run
	rep := &Report{Command: o.Command, Started: time.Now().UTC(), Machine: machine(),
		Warmup: o.Warmup, Sweeps: o.Sweeps, StreamReps: o.StreamReps, Prior: o.Prior, LoadBefore: loadAvg(),
		Kernel: kernel, Kernels: gibbs.Kernels()}
	// Generate every missing dataset first, so that the measurements (and
	// the CPU profile) see only the sampler; each dataset is then opened
	// just for its own measurements, so that its memory is not counted
	// against another's.
	for _, s := range o.Sizes {
		d, err := openDataset(ctx, o.Work, s, o.Density, o.Seed, o.Workers, o.Cached, nil, log)
		if err != nil {
			return nil, err
		}
		if d.genSecond > 0 { // a size listed twice is generated once
			gen[s] = d.genSecond
		}
		if err := d.shards.Close(); err != nil {
			return nil, fmt.Errorf("bench: closing %s: %w", d.dir, err)
		}
	}
	stopProfile, err := startProfile(o.CPUProfile)
	if err != nil {
		return nil, err
	}
	mem := startSampler()
	defer mem.close()
	for _, s := range o.Sizes {
		d, err := openDataset(ctx, o.Work, s, o.Density, o.Seed, o.Workers, o.Cached, nil, log)
		if err != nil {
			stopProfile()
			return nil, err
		}
		d.cached, d.genSecond = gen[s] == 0, gen[s]
		for _, L := range o.Ls {
			r, err := measure(ctx, d, L, o, mem, log)
			if err != nil {
				d.shards.Close()
				stopProfile()
				return nil, err
			}
			rep.Results = append(rep.Results, r)
		}
		if err := d.shards.Close(); err != nil {
			stopProfile()
			return nil, fmt.Errorf("bench: closing %s: %w", d.dir, err)
		}
	}
	if err := stopProfile(); err != nil {
		return nil, err
	}
	rep.LoadAfter = loadAvg()
	return rep, nil
}

// measure times one (dataset, L).
func measure(ctx context.Context, d *dataset, L int, o Options, mem *memSampler, log *slog.Logger) (Result, error) {
	m := d.shards.Manifest()
	r := Result{
		Cells: m.Cells, Genes: m.Genes, Entries: int64(m.Cells) * int64(m.Genes), Ones: m.Ones, Density: m.Density,
		L: L, Workers: o.Workers, Warmup: o.Warmup, Prior: o.Prior,
		Dataset: d.dir, Cached: d.cached, GenerateSeconds: d.genSecond,
		StateBytes: StateBytes(Size{m.Cells, m.Genes}, L),
	}
	labels := func(phase string) pprof.LabelSet {
		return pprof.Labels("phase", phase, "size", Size{m.Cells, m.Genes}.String(), "L", strconv.Itoa(L))
	}
	// Start from a clean heap so that the peak is the sampler's, not what
	// generation or the previous measurement left for the collector.
	runtime.GC()
	debug.FreeOSMemory()
	if st, err := readStatus(); err == nil {
		r.BaselineAnonBytes = st.RssAnon
	}
	r.HWMReset = resetPeak()
	mem.reset()

	cfg := gibbs.DefaultConfig()
	cfg.L, cfg.Seed, cfg.Workers = L, o.Seed, o.Workers
	cfg.Init, cfg.Starts, cfg.Kernel = gibbs.InitData, 1, o.Kernel
	cfg.PriorZ, _ = samplerPrior(o.Prior) // validated by Options.Validate
	cfg.PriorU, cfg.Noise, cfg.CellLevels, cfg.GeneLevels, cfg.Housekeeping = cfg.PriorZ, o.Noise, o.CellLevels, o.GeneLevels, o.Housekeeping
	cfg.BurnIn, cfg.Samples, cfg.Thin = o.Warmup, o.Sweeps, 1 // timed sweeps are sample sweeps, as most of a fit's are
	var s *gibbs.Sampler
	var err error
	pprof.Do(ctx, labels("setup"), func(ctx context.Context) {
		s, err = gibbs.NewSampler(ctx, gibbs.Data{X: d.shards.X(), XT: d.shards.XT()}, cfg)
	})
	if err != nil {
		return r, fmt.Errorf("bench: sampler for %v at L = %d: %w", Size{m.Cells, m.Genes}, L, err)
	}
	log.Info("warming up", "cells", m.Cells, "genes", m.Genes, "L", L, "sweeps", o.Warmup)
	for i := range o.Warmup {
		var st gibbs.SweepStats
		pprof.Do(ctx, labels("warmup"), func(context.Context) { st, err = s.Step() })
		if err != nil {
			return r, fmt.Errorf("bench: warm-up sweep %d: %w", i, err)
		}
		log.Info("warm-up sweep", "L", L, "sweep", i, "seconds", st.Seconds, "dropout", st.Dropout, "background", st.Background, "flips", st.Flips, "accuracy", st.Accuracy)
		if err := ctx.Err(); err != nil {
			return r, err
		}
	}

	// Stream-once, after an untimed pass that warms the page cache (the
	// sampler has read every page already, but another process may not
	// have) and checks, by counting ones, that every word is read; the
	// timed passes only read. File and row order alternate so that both see
	// the same conditions.
	x, xt := d.shards.X(), d.shards.XT()
	for i := range o.StreamReps + 1 {
		work := readOnly
		if i == 0 {
			work = countOnes
		}
		for _, order := range []Order{FileOrder, RowOrder} {
			var res []StreamResult
			start := time.Now()
			pprof.Do(ctx, labels("stream-"+order.String()), func(ctx context.Context) { res, err = Stream(ctx, o.Workers, order, work, x, xt) })
			sec := time.Since(start).Seconds()
			if err != nil {
				return r, fmt.Errorf("bench: streaming X and Xᵀ: %w", err)
			}
			if work == countOnes && (res[0].Ones != m.Ones || res[1].Ones != m.Ones) {
				return r, fmt.Errorf("bench: streaming %s counted %d ones in X and %d in Xᵀ, manifest says %d", d.dir, res[0].Ones, res[1].Ones, m.Ones)
			}
			r.StreamBytes = res[0].Bytes + res[1].Bytes
			switch {
			case i == 0:
			case order == FileOrder:
				r.StreamSeconds = append(r.StreamSeconds, sec)
			default:
				r.RowOrderSeconds = append(r.RowOrderSeconds, sec)
			}
		}
	}
	r.StreamMedian = median(r.StreamSeconds)
	r.RowOrderMedian = median(r.RowOrderSeconds)
	r.StreamGBps = float64(r.StreamBytes) / r.StreamMedian / 1e9
	log.Info("streamed X and Xᵀ", "bytes", r.StreamBytes, "median_seconds", r.StreamMedian, "GB/s", r.StreamGBps, "row_order_median_seconds", r.RowOrderMedian)

	var flips []int64
	cpu0, wall0 := cpuSeconds(), time.Now()
	for i := range o.Sweeps {
		var st gibbs.SweepStats
		start := time.Now()
		pprof.Do(ctx, labels("timed"), func(context.Context) { st, err = s.Step() })
		sec := time.Since(start).Seconds()
		mem.sample()
		if err != nil {
			return r, fmt.Errorf("bench: timed sweep %d: %w", i, err)
		}
		r.SweepSeconds = append(r.SweepSeconds, sec)
		r.Dropout, r.Background, r.Accuracy = st.Dropout, st.Background, st.Accuracy
		flips = append(flips, st.Flips)
		log.Info("timed sweep", "L", L, "sweep", i, "seconds", sec, "dropout", st.Dropout, "background", st.Background, "flips", st.Flips, "accuracy", st.Accuracy)
		if err := ctx.Err(); err != nil {
			return r, err
		}
	}
	if wall := time.Since(wall0).Seconds(); wall > 0 {
		r.CPUUtilisation = (cpuSeconds() - cpu0) / (wall * float64(o.Workers))
	}
	slices.Sort(flips)
	r.Flips = flips[len(flips)/2]
	r.SweepMedian = median(r.SweepSeconds)
	r.SweepMin, r.SweepMax = slices.Min(r.SweepSeconds), slices.Max(r.SweepSeconds)
	r.EntriesPerSec = float64(r.Entries) / r.SweepMedian
	r.EntriesPerSecPerCore = r.EntriesPerSec / float64(o.Workers)
	r.Ratio = r.SweepMedian / r.StreamMedian

	if peak, ok := mem.peak(); ok {
		r.PeakAnonBytes = peak
		r.AnonAboveStateBytes = peak - r.StateBytes
	}
	if st, err := readStatus(); err == nil {
		r.PeakHWMBytes = st.VmHWM
	}
	runtime.KeepAlive(s)
	return r, nil
}

// samplerPrior parses a fit's prior setting.
func samplerPrior(s string) (gibbs.Prior, error) {
	var pr gibbs.Prior
	if err := pr.UnmarshalText([]byte(s)); err != nil {
		return pr, fmt.Errorf("%w: %w", errOptions, err)
	}
	return pr, nil
}

// StateBytes returns the size of the sampler's state for one chain of a
// size × L fit: Z and U as L bitsets over cells and genes, and the posterior
// counts, one uint32 per (cell, code) and (gene, code).
func StateBytes(s Size, L int) int64 {
	bitsets := int64((s.Cells+63)/64+(s.Genes+63)/64) * int64(L) * 8
	counts := (int64(s.Cells) + int64(s.Genes)) * int64(L) * 4
	return bitsets + counts
}

// median returns the median of xs (the mean of the middle two for an even
// count); xs must not be empty. xs is not modified.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// startProfile starts a CPU profile into path (nothing when path is empty),
// written under a temporary name (outlock.TempFile) and installed by the
// returned stop function.
func startProfile(path string) (func() error, error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := outlock.TempFile(path, "tmp")
	if err != nil {
		return nil, fmt.Errorf("bench: creating CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("bench: starting CPU profile: %w", err)
	}
	stopped := false
	return func() error {
		if stopped {
			return nil
		}
		stopped = true
		pprof.StopCPUProfile()
		err := f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = outlock.Install(f.Name(), path, true)
		}
		if err != nil {
			os.Remove(f.Name())
			return fmt.Errorf("bench: writing CPU profile %s: %w", path, err)
		}
		return nil
	}, nil
}
