package gibbs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"scpipe/internal/mpi"
)

// localReducer is a member of an in-process group (mpi.Local) as a
// Reducer.
type localReducer struct{ c mpi.Comm }

func (r localReducer) SumInt64(v []int64) error { return r.c.SumInt64(context.Background(), v) }

func (r localReducer) GatherBytes(root int, b []byte) ([][]byte, error) {
	return r.c.GatherBytes(context.Background(), root, b)
}

// localReducers returns the n members of an in-process group.
func localReducers(n int) []Reducer {
	var rs []Reducer
	for _, c := range mpi.Local(n) {
		rs = append(rs, localReducer{c})
	}
	return rs
}

// ranResult returns the summary of a run that ended with err: run's error,
// else result's.
func ranResult[R any](err error, result func() (R, error)) (R, error) {
	if err != nil {
		var zero R
		return zero, err
	}
	return result()
}

// runParts runs a fit split over len(bounds)−1 processes of a Local group
// (process k owns cells bounds[k] … bounds[k+1]−1), gathering after the
// last sweep, and returns each process's sampler and the result of the
// whole fit in the first (nil in the others, which have none).
func runParts(t *testing.T, data Data, cfg Config, bounds []int) ([]*Sampler, []*Result) {
	t.Helper()
	comms := localReducers(len(bounds) - 1)
	ss, rs, errs := make([]*Sampler, len(comms)), make([]*Result, len(comms)), make([]error, len(comms))
	var wg sync.WaitGroup
	for k, comm := range comms {
		wg.Go(func() {
			q, err := NewPartSampler(context.Background(), data, cfg, Part{Lo: bounds[k], Hi: bounds[k+1], Reduce: comm})
			if err != nil {
				errs[k] = err
				return
			}
			ss[k] = q.s
			errs[k] = q.Run(context.Background(), func(st SweepStats) error {
				if st.Sweep+1 == q.Sweeps() {
					return q.Gather()
				}
				return nil
			})
			if errs[k] != nil || k > 0 {
				return
			}
			whole, err := q.Whole()
			if err == nil {
				rs[k], err = whole.Result()
			}
			errs[k] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return ss, rs
}

// TestPartsMatchOneProcess requires a fit split over 1, 2 and 3 processes
// to give, in every process, the single process's chain bit for bit: the
// posterior means, rates, trace, final state and retained samples, for
// both likelihoods, with and without a mask, a housekeeping code and
// several starts.
func TestPartsMatchOneProcess(t *testing.T) {
	t.Parallel()
	const n, d, seg = 450, 300, 64
	p := newPlanted(11, n, d, 4, 0.4, 0.08)
	r := &testRNG{s: 12}
	mask := randomMatrix(r, n, d, 0.85, 0)
	cases := []struct {
		name   string
		masked bool
		edit   func(*Config)
	}{
		{"symmetric", false, func(*Config) {}},
		{"symmetric, masked, 3 starts", true, func(c *Config) { c.Starts, c.StartSweeps = 3, 2 }},
		{"dropout, housekeeping", false, func(c *Config) { c.Noise, c.Housekeeping, c.L = Dropout, true, 4 }},
		// Without cell levels every U row folds the housekeeping code,
		// whose observed entries come from the process's mask.
		{"dropout, masked, housekeeping", true, func(c *Config) { c.Noise, c.Housekeeping, c.L = Dropout, true, 4 }},
		{"dropout, masked, empirical priors", true, func(c *Config) {
			c.Noise, c.PriorU, c.PriorZ = Dropout, EmpiricalPrior(), EmpiricalPrior()
		}},
		{"data start, masked, 2 starts", true, func(c *Config) { c.Init, c.Starts, c.StartSweeps = InitData, 2, 2 }},
		{"cluster start, dropout, housekeeping", false, func(c *Config) {
			c.Init, c.Noise, c.Housekeeping, c.L = InitCluster, Dropout, true, 4
		}},
		{"fit defaults: 8 cell levels, cluster start, housekeeping, 2 starts", false, func(c *Config) {
			c.Init, c.Noise, c.CellLevels, c.Housekeeping, c.L, c.Starts, c.StartSweeps = InitCluster, Dropout, 8, true, 4, 2, 2
		}},
		{"4 cell levels, masked, random start", true, func(c *Config) {
			c.Noise, c.CellLevels = Dropout, 4
		}},
		{"8 cell and 4 gene levels, masked, cluster start, housekeeping, 2 starts", true, func(c *Config) {
			c.Init, c.Noise, c.CellLevels, c.GeneLevels, c.Housekeeping, c.L, c.Starts, c.StartSweeps = InitCluster, Dropout, 8, 4, true, 4, 2, 2
		}},
		// From a random start the first window of samples still climbs
		// and is discarded (checked below).
		{"8 cell and 4 gene levels held from sweep 3, random start, a window discarded", true, func(c *Config) {
			c.Init, c.Noise, c.CellLevels, c.GeneLevels, c.Housekeeping, c.L = InitRandom, Dropout, 8, 4, true, 4
			c.HoldFrom, c.MaxBurnIn = 3, 5+10*4
		}},
		{"swaps, 8 cell and 8 gene levels held from sweep 2, masked", true, func(c *Config) {
			c.Init, c.Noise, c.CellLevels, c.GeneLevels, c.Housekeeping, c.L = InitCluster, Dropout, 8, 8, true, 6
			c.HoldFrom, c.Swaps = 2, true
		}},
		{"swaps, symmetric", false, func(c *Config) { c.L, c.Swaps = 6, true }},
		// Three samples whose boundaries (cells 100 and 300) fall inside
		// words and inside processes.
		{"samples, 8 cell and 4 gene levels, masked, cluster start, housekeeping, 2 starts", true, func(c *Config) {
			c.Init, c.Noise, c.CellLevels, c.GeneLevels, c.Housekeeping, c.L, c.Starts, c.StartSweeps = InitCluster, Dropout, 8, 4, true, 4, 2, 2
			c.CellSamples = threeSamples(n)
		}},
		{"samples, swaps, 8 cell and 8 gene levels held from sweep 2", false, func(c *Config) {
			c.Init, c.Noise, c.CellLevels, c.GeneLevels, c.Housekeeping, c.L = InitCluster, Dropout, 8, 8, true, 6
			c.HoldFrom, c.Swaps, c.CellSamples = 2, true, threeSamples(n)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var m BitMatrix
			if tc.masked {
				m = mask
			}
			data, err := NewData(p.noisy, m, seg)
			if err != nil {
				t.Fatal(err)
			}
			cfg := DefaultConfig()
			cfg.L, cfg.BurnIn, cfg.Samples, cfg.Thin, cfg.Starts, cfg.Workers = 4, 5, 4, 1, 1, 2
			cfg.KeepSamples = true
			tc.edit(&cfg)
			one, res := runAll(t, data, cfg)
			if strings.Contains(tc.name, "a window discarded") && one.BurnIn() == cfg.BurnIn {
				t.Errorf("burn-in of %d sweeps: the case needs a window of samples discarded", one.BurnIn())
			}
			for _, bounds := range [][]int{{0, n}, {0, 192, n}, {0, 64, 320, n}} {
				ss, rs := runParts(t, data, cfg, bounds)
				whole := ss[0].part.whole
				sameRun(t, fmt.Sprintf("%d processes, the first", len(ss)), one, whole, res, rs[0])
				if !reflect.DeepEqual(one.zCount, whole.zCount) || !reflect.DeepEqual(one.uCount, whole.uCount) {
					t.Errorf("%d processes: the first's posterior counts differ", len(ss))
				}
				for k := range ss {
					name := fmt.Sprintf("%d processes, process %d", len(ss), k)
					sameCells(t, name, one, ss[k])
					if k > 0 && (rs[k] != nil || ss[k].part.whole != nil) {
						t.Errorf("%s: holds the whole fit after Gather", name)
					}
				}
			}
		})
	}
}

// sameCells requires process s of a partitioned fit to hold the state of
// its own cells only, and that state to be the single process one's: its
// words of Z and levels (of every chain and retained sample), Z's
// posterior counts and, with levels, its cells' counts of ones and
// entries.
func sameCells(t *testing.T, name string, one, s *Sampler) {
	t.Helper()
	lo, hi := s.cellRange()
	L := s.l
	w0, w1 := lo/64*L, (hi+63)/64*L
	cells := func(a, b []uint8) bool { return a == nil && b == nil || reflect.DeepEqual(a[lo:hi], b) }
	if len(s.chains) != len(one.chains) || len(s.kept) != len(one.kept) {
		t.Fatalf("%s: %d chains and %d samples, want %d and %d", name, len(s.chains), len(s.kept), len(one.chains), len(one.kept))
	}
	for i, c := range s.chains {
		if !reflect.DeepEqual(one.chains[i].z[w0:w1], c.z) || !cells(one.chains[i].level, c.level) {
			t.Errorf("%s: chain %d's Z or levels over cells [%d, %d) differ", name, i, lo, hi)
		}
	}
	for i, k := range s.kept {
		if !reflect.DeepEqual(one.kept[i].z[w0:w1], k.z) || !cells(one.kept[i].level, k.level) {
			t.Errorf("%s: retained sample %d's Z or levels over cells [%d, %d) differ", name, i, lo, hi)
		}
	}
	if !reflect.DeepEqual(one.zCount[lo*L:hi*L], s.zCount) {
		t.Errorf("%s: Z's posterior counts over cells [%d, %d) differ", name, lo, hi)
	}
	if s.cellOnes != nil && (!reflect.DeepEqual(one.cellOnes[lo:hi], s.cellOnes) || !reflect.DeepEqual(one.cellObs[lo:hi], s.cellObs)) {
		t.Errorf("%s: the cells' counts over [%d, %d) differ", name, lo, hi)
	}
	if len(s.cellStep) > hi-lo || len(s.ones) > max(s.dw, (hi+63)/64-lo/64) {
		t.Errorf("%s: buffers of %d and %d words for %d cells", name, len(s.cellStep), len(s.ones), hi-lo)
	}
	for _, c := range s.chains {
		if len(c.liftBlock) > MaxCellLevelBits*((hi+63)/64-lo/64)+8 {
			t.Errorf("%s: lift planes of %d words for %d cells", name, len(c.liftBlock), hi-lo)
		}
	}
}

// TestPartRefusals lists what a partitioned fit refuses.
func TestPartRefusals(t *testing.T) {
	t.Parallel()
	p := newPlanted(3, 200, 100, 2, 0.4, 0.05)
	data, err := NewData(p.noisy, nil, 64)
	if err != nil {
		t.Fatal(err)
	}
	red := localReducers(1)[0]
	cfg := DefaultConfig()
	for _, tc := range []struct {
		name string
		cfg  Config
		part Part
	}{
		{"no reducer", cfg, Part{Lo: 0, Hi: 200}},
		{"empty range", cfg, Part{Lo: 64, Hi: 64, Reduce: red}},
		{"not a cell block", cfg, Part{Lo: 0, Hi: 100, Reduce: red}},
		{"past the cells", cfg, Part{Lo: 128, Hi: 256, Reduce: red}},
	} {
		if _, err := NewPartSampler(context.Background(), data, tc.cfg, tc.part); !errors.Is(err, errPart) {
			t.Errorf("%s: got %v, want an error wrapping errPart", tc.name, err)
		}
	}
	// Moves that need every cell in one process.
	for _, tc := range []struct {
		field string
		set   func(*Config)
	}{
		{"GeneSwaps", func(c *Config) { c.GeneSwaps = true }},
		{"SplitMerge", func(c *Config) { c.SplitMerge = 1 }},
	} {
		c := cfg
		tc.set(&c)
		_, err := NewPartSampler(context.Background(), data, c, Part{Lo: 0, Hi: 128, Reduce: red})
		if fe := (*FieldError)(nil); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s in a part: got %v, want it refused", tc.field, err)
		}
	}
}

// TestPartWholeNeedsGather checks that a process's whole fit is refused
// until its cells have been gathered after the last sweep.
func TestPartWholeNeedsGather(t *testing.T) {
	t.Parallel()
	p := newPlanted(4, 130, 70, 2, 0.4, 0.05)
	data, err := NewData(p.noisy, nil, 64)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.BurnIn, cfg.Samples, cfg.Starts = 1, 1, 1
	s, err := NewPartSampler(context.Background(), data, cfg, Part{Lo: 0, Hi: 130, Reduce: localReducers(1)[0]})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Whole(); !errors.Is(err, errPart) {
		t.Fatalf("Whole without Gather: got %v, want an error wrapping errPart", err)
	}
	if err := s.Gather(); err != nil {
		t.Fatal(err)
	}
	w, err := s.Whole()
	if err == nil {
		_, err = w.Result()
	}
	if err != nil {
		t.Fatalf("Result after Gather: %v", err)
	}
}

// BenchmarkPartSweep compares a sweep of one process with the same sweep
// as the only process of a partitioned fit (the U step decided code by
// code, with a reduction per code that a group of one makes free), on one
// worker after ten warm-up sweeps, as BenchmarkSweep. The last size has
// few cells and many genes: its sweep is the floor of a process's sweep,
// the work on every gene that each process repeats however few cells it
// has.
func BenchmarkPartSweep(b *testing.B) {
	for _, sz := range [][3]int{{100000, 2000, 2}, {100000, 2000, 10}, {640, 20000, 10}} {
		n, d, L := sz[0], sz[1], sz[2]
		data := sparsePlanted(uint64(n+L), n, d, L, 0.07, 0.01)
		for _, part := range []bool{false, true} {
			b.Run(fmt.Sprintf("N%d/D%d/L%d/part=%v", n, d, L, part), func(b *testing.B) {
				cfg := DefaultConfig()
				cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers = L, 1<<30, 1, 1, 1
				cfg.PriorZ, cfg.PriorU, cfg.Init = EmpiricalPrior(), EmpiricalPrior(), InitData
				s, err := NewSampler(context.Background(), data, cfg)
				if part {
					var q *PartSampler
					q, err = NewPartSampler(context.Background(), data, cfg, Part{Lo: 0, Hi: n, Reduce: localReducers(1)[0]})
					if err == nil {
						s = q.s
					}
				}
				if err != nil {
					b.Fatal(err)
				}
				timeSweeps(b, s, 10, n, d, 1)
			})
		}
	}
}

// stepParts runs sweeps sweeps on every sampler of ss at once (one
// goroutine each, as processes).
func stepParts(t *testing.T, ss []*PartSampler, sweeps int) {
	t.Helper()
	errs := make([]error, len(ss))
	var wg sync.WaitGroup
	for k, q := range ss {
		wg.Go(func() {
			for range sweeps {
				if _, err := q.s.Step(); err != nil {
					errs[k] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// newParts returns the samplers of a fit split at bounds.
func newParts(t *testing.T, data Data, cfg Config, bounds []int) []*PartSampler {
	t.Helper()
	comms := localReducers(len(bounds) - 1)
	ss, errs := make([]*PartSampler, len(comms)), make([]error, len(comms))
	var wg sync.WaitGroup
	for k, comm := range comms {
		wg.Go(func() {
			ss[k], errs[k] = NewPartSampler(context.Background(), data, cfg, Part{Lo: bounds[k], Hi: bounds[k+1], Reduce: comm})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return ss
}

// TestPartCheckpoints stops a fit of 2 processes mid-way, checkpoints it
// in pieces (MarshalShared and each process's MarshalPart, no Gather),
// and resumes it on 3 processes and on one: both finish as the
// uninterrupted single process does; with per-cell levels, and with
// per-gene levels too (replicated in every process, in the shared piece).
func TestPartCheckpoints(t *testing.T) {
	t.Parallel()
	for _, geneBits := range []int{0, 2} {
		t.Run(fmt.Sprintf("gene level bits %d", geneBits), func(t *testing.T) {
			t.Parallel()
			testPartCheckpoints(t, geneBits)
		})
	}
}

// testPartCheckpoints is TestPartCheckpoints with geneBits.
func testPartCheckpoints(t *testing.T, geneBits int) {
	const n, d = 450, 300
	p := newPlanted(21, n, d, 4, 0.4, 0.08)
	data, err := NewData(p.noisy, randomMatrix(&testRNG{s: 22}, n, d, 0.9, 0), 64)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.StartSweeps, cfg.Workers = 4, 4, 5, 2, 2, 2
	cfg.Noise, cfg.CellLevels, cfg.Housekeeping, cfg.Init, cfg.KeepSamples = Dropout, 4, true, InitCluster, true
	cfg.GeneLevels = 1 << geneBits
	one, res := runAll(t, data, cfg)

	two := newParts(t, data, cfg, []int{0, 256, n})
	stepParts(t, two, 6) // past the starts and into the samples
	shared := two[1].MarshalShared()
	var parts [][]byte
	for _, s := range two {
		_, _, b := s.MarshalPart()
		parts = append(parts, b)
	}
	restore := func(s interface {
		UnmarshalBinary([]byte) error
		UnmarshalPart([]byte) (int, int, error)
	}) {
		if err := s.UnmarshalBinary(shared); err != nil {
			t.Fatal(err)
		}
		for _, b := range parts {
			if _, _, err := s.UnmarshalPart(b); err != nil {
				t.Fatal(err)
			}
		}
	}
	three := newParts(t, data, cfg, []int{0, 64, 320, n})
	for _, s := range three {
		restore(s)
	}
	stepParts(t, three, cfg.BurnIn+cfg.Samples-6)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for k, s := range three {
		wg.Go(func() { errs[k] = s.Gather() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	whole, err := three[0].Whole()
	if err != nil {
		t.Fatal(err)
	}
	r0, err := whole.Result()
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, "2 processes resumed on 3", one, whole, res, r0)
	for k, q := range three {
		sameCells(t, fmt.Sprintf("2 processes resumed on 3, process %d", k), one, q.s)
		if k == 0 {
			continue
		}
		if _, err := q.Whole(); !errors.Is(err, errPart) {
			t.Errorf("Whole of process %d after Gather: got %v, want an error wrapping errPart", k, err)
		}
	}
	// The first's gathered state restores on any number of processes.
	final, err := whole.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	reencode := func(b []byte) []byte { // with the trace's seconds zero
		s, err := NewSampler(context.Background(), data, cfg)
		if err == nil {
			err = s.UnmarshalBinary(b)
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := range s.trace {
			s.trace[i].Seconds = 0
		}
		return s.encode(false)
	}
	if b, err := one.MarshalBinary(); err != nil || !bytes.Equal(reencode(b), reencode(final)) {
		t.Errorf("the gathered state's encoding differs from the single process's (%v)", err)
	}
	for _, q := range newParts(t, data, cfg, []int{0, 192, n}) {
		if err := q.UnmarshalBinary(final); err != nil {
			t.Fatal(err)
		}
		sameCells(t, "the gathered state restored on 2 processes", one, q.s)
	}
	single, err := NewSampler(context.Background(), data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	restore(single)
	r, err := ranResult(single.Run(context.Background(), nil), single.Result)
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, "2 processes resumed on one", one, single, res, r)

	// A part of another sweep or configuration is refused.
	other := cfg
	other.Seed++
	stranger, err := NewSampler(context.Background(), data, other)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := stranger.UnmarshalPart(parts[0]); !errors.Is(err, errState) {
		t.Errorf("a part of another configuration: got %v, want errState", err)
	}
	if _, _, err := single.UnmarshalPart(parts[0]); !errors.Is(err, errState) {
		t.Errorf("a part of another sweep: got %v, want errState", err)
	}
}

// threeSamples returns the samples of n cells: cells [0, 100) the first,
// [100, 300) the second, the rest the third.
func threeSamples(n int) []uint16 {
	cs := make([]uint16, n)
	for i := range cs {
		cs[i] = uint16(min(i/100, 1) + min(i/300, 1))
	}
	return cs
}
