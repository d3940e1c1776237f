package gibbs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"
)

// refState is the state of the plain reference sampler.
type refState struct {
	z, u  [][]bool // N × L, D × L
	noise Noise
	rates rates
}

// unpack converts interleaved bitsets of rows × L codes to rows of bools.
func unpack(words []uint64, rows, L int) [][]bool {
	out := make([][]bool, rows)
	for i := range out {
		out[i] = make([]bool, L)
		for l := range L {
			out[i][l] = words[i/64*L+l]>>uint(i%64)&1 != 0
		}
	}
	return out
}

// column returns column j of a rows × cols boolean matrix.
func column(m [][]bool, j int) []bool {
	c := make([]bool, len(m))
	for i := range m {
		c[i] = m[i][j]
	}
	return c
}

// refSweep is one sweep of Algorithm 2 of the paper written plainly, with
// Algorithm 1 for the conditionals and the sampler's keyed random numbers.
// The codes in clamped (bit l) are left on in every cell.
func refSweep(st *refState, x, obs [][]bool, logitZ, logitU []float64, seed uint64, sweep int, fix bool, clamped uint64) {
	L := len(logitZ)
	one, zero := st.rates.gains()
	update := func(own [][]bool, other [][]bool, data, seen [][]bool, logit []float64, key uint64, fixed uint64) {
		for i := range own {
			for l := range L {
				if fixed>>uint(l)&1 != 0 {
					continue
				}
				var c float64
				if st.noise == Symmetric {
					acc := refCondSum(l, own[i], other, data[i], seen[i])
					c = float64(st.rates.lambda * float64(acc))
				} else {
					ones, all := refCondCounts(l, own[i], other, data[i], seen[i])
					c = float64(one*float64(ones)) + float64(zero*float64(all-ones))
				}
				c += logit[l]
				if own[i][l] {
					c = -c
				}
				if c >= 0 || uniformAt(key, uint64(i*L+l)) < math.Exp(c) {
					own[i][l] = !own[i][l]
				}
			}
		}
	}
	update(st.z, st.u, x, obs, logitZ, streamKey(seed, sweep, stepZ), clamped)
	xt, obsT := make([][]bool, len(x[0])), make([][]bool, len(x[0]))
	for d := range xt {
		xt[d], obsT[d] = column(x, d), column(obs, d)
	}
	update(st.u, st.z, xt, obsT, logitU, streamKey(seed, sweep, stepU), 0)
	var t tally
	for n := range x {
		for d := range x[n] {
			if obs[n][d] {
				t.observed++
				if x[n][d] {
					t.ones++
				}
			}
		}
		miss, covered := refMismatch(st.z[n], st.u, x[n], obs[n])
		t.miss += miss
		t.covered += covered
	}
	st.rates = st.noise.update(t, st.rates, fix)
}

// toBools returns m as rows of bools.
func toBools(m BitMatrix) [][]bool {
	out := make([][]bool, m.Rows())
	for i := range out {
		out[i] = make([]bool, m.Cols())
		for j := range out[i] {
			out[i][j] = bitAt(m, i, j)
		}
	}
	return out
}

// TestSamplerMatchesReferenceSweep runs the bit-packed sampler and the plain
// reference side by side and requires identical states after every sweep.
func TestSamplerMatchesReferenceSweep(t *testing.T) {
	t.Parallel()
	cases := []struct {
		n, d, L, seg int
		masked, fix  bool
		noise        Noise
		housekeeping bool
	}{
		{1, 1, 1, 0, false, false, Symmetric, false},
		{3, 3, 2, 0, true, true, Symmetric, false},
		{70, 130, 3, 64, false, false, Symmetric, false},
		{70, 130, 3, 64, true, false, Symmetric, false},
		{129, 65, 2, 128, true, false, Symmetric, false},
		{64, 200, 5, 0, false, false, Symmetric, false},
		{200, 64, 10, 64, true, false, Symmetric, false},
		{1, 1, 1, 0, false, false, Dropout, false},
		{3, 3, 2, 0, true, true, Dropout, false},
		{70, 130, 3, 64, false, false, Dropout, false},
		{129, 65, 2, 128, true, false, Dropout, false},
		{200, 64, 10, 64, true, false, Dropout, false},
		{70, 130, 3, 64, false, false, Dropout, true},
		{200, 64, 10, 64, true, false, Symmetric, true},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%dx%d/L%d/seg%d/masked=%v/%v/housekeeping=%v", tc.n, tc.d, tc.L, tc.seg, tc.masked, tc.noise, tc.housekeeping), func(t *testing.T) {
			t.Parallel()
			r := &testRNG{s: uint64(tc.n*7 + tc.d*13 + tc.L)}
			x := randomMatrix(r, tc.n, tc.d, 0.35, tc.seg)
			var mask BitMatrix
			if tc.masked {
				mask = randomMatrix(r, tc.n, tc.d, 0.6, tc.seg)
			}
			data, err := NewData(x, mask, tc.seg)
			if err != nil {
				t.Fatal(err)
			}
			cfg := DefaultConfig()
			cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers = tc.L, 4, 4, 1, 3
			cfg.FixLambda, cfg.Lambda, cfg.Noise, cfg.Housekeeping = tc.fix, 1.3, tc.noise, tc.housekeeping
			if tc.housekeeping {
				cfg.L-- // and the housekeeping code
			}
			cfg.PriorZ, cfg.PriorU = EmpiricalPrior(), FixedPrior(0.3)
			s, err := NewSampler(context.Background(), data, cfg)
			if err != nil {
				t.Fatal(err)
			}
			obs := make([][]bool, tc.n)
			for i := range obs {
				obs[i] = make([]bool, tc.d)
				for j := range obs[i] {
					obs[i][j] = mask == nil || bitAt(mask, i, j)
				}
			}
			c := s.chains[0]
			ref := &refState{z: unpack(c.z, tc.n, tc.L), u: unpack(c.u, tc.d, tc.L), noise: cfg.Noise, rates: c.rates}
			xb := toBools(x)
			for sweep := range s.Sweeps() {
				if _, err := s.Step(); err != nil {
					t.Fatal(err)
				}
				refSweep(ref, xb, obs, s.logitZ, s.logitU, cfg.Seed, sweep, cfg.FixLambda, s.clamped)
				c := s.chains[0]
				if !reflect.DeepEqual(unpack(c.z, tc.n, tc.L), ref.z) || !reflect.DeepEqual(unpack(c.u, tc.d, tc.L), ref.u) {
					t.Fatalf("sweep %d: state differs from the reference sampler", sweep)
				}
				if c.rates != ref.rates {
					t.Fatalf("sweep %d: rates %+v, reference %+v", sweep, c.rates, ref.rates)
				}
			}
			if _, err := s.Step(); !errors.Is(err, errDone) {
				t.Fatalf("Step after the last sweep: %v, want errDone", err)
			}
		})
	}
}

// runAll runs a fresh sampler to completion.
func runAll(t *testing.T, data Data, cfg Config) (*Sampler, *Result) {
	t.Helper()
	s, err := NewSampler(context.Background(), data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ranResult(s.Run(context.Background(), nil), s.Result)
	if err != nil {
		t.Fatal(err)
	}
	return s, res
}

// sameRun compares everything reproducible about two runs.
func sameRun(t *testing.T, name string, a, b *Sampler, ra, rb *Result) {
	t.Helper()
	strip := func(tr []SweepStats) []SweepStats {
		out := append([]SweepStats(nil), tr...)
		for i := range out {
			out[i].Seconds = 0
		}
		return out
	}
	switch {
	case !reflect.DeepEqual(ra.ZMean, rb.ZMean) || !reflect.DeepEqual(ra.UMean, rb.UMean):
		t.Errorf("%s: posterior means differ", name)
	case math.Float64bits(ra.Lambda) != math.Float64bits(rb.Lambda) || ra.Dropout != rb.Dropout ||
		ra.Background != rb.Background || ra.Samples != rb.Samples:
		t.Errorf("%s: λ %v vs %v, rates %v/%v vs %v/%v, samples %d vs %d", name, ra.Lambda, rb.Lambda,
			ra.Dropout, ra.Background, rb.Dropout, rb.Background, ra.Samples, rb.Samples)
	case fmt.Sprint(strip(ra.Trace)) != fmt.Sprint(strip(rb.Trace)): // NaN λ under Dropout defeats DeepEqual
		t.Errorf("%s: traces differ", name)
	case !reflect.DeepEqual(a.chains[0].z, b.chains[0].z) || !reflect.DeepEqual(a.chains[0].u, b.chains[0].u):
		t.Errorf("%s: final states differ", name)
	case !reflect.DeepEqual(a.kept, b.kept):
		t.Errorf("%s: retained samples differ", name)
	}
}

// TestDeterministicAcrossWorkersAndSegments requires bit-identical results
// for 1, 2 and 7 workers and for several segmentations of X and XT.
func TestDeterministicAcrossWorkersAndSegments(t *testing.T) {
	t.Parallel()
	p := newPlanted(5, 450, 300, 4, 0.5, 0.1)
	r := &testRNG{s: 6}
	maskWhole := randomMatrix(r, 450, 300, 0.8, 0)
	cfg := DefaultConfig()
	cfg.L, cfg.BurnIn, cfg.Samples, cfg.Thin, cfg.Starts, cfg.StartSweeps = 4, 8, 6, 2, 3, 3
	cfg.KeepSamples = true
	type run struct {
		s   *Sampler
		res *Result
	}
	base := map[Init]run{}
	for _, seg := range []int{0, 64, 192} {
		data := segmentedCopy(t, p.noisy, maskWhole, 450, 300, seg)
		for _, init := range []Init{InitRandom, InitData} {
			for _, w := range []int{1, 2, 7} {
				cfg.Workers, cfg.Init = w, init
				s, res := runAll(t, data, cfg)
				b, ok := base[init]
				if !ok {
					base[init] = run{s, res}
					continue
				}
				sameRun(t, fmt.Sprintf("init %d, segments %d, workers %d", init, seg, w), b.s, s, b.res, res)
			}
		}
	}
}

// TestCountedData checks that a sampler over Counted data runs exactly as
// one that counts for itself, with and without a mask and per-cell levels,
// that the counts are taken once and shared, and that Counted refuses an
// XT that is not X's transpose.
func TestCountedData(t *testing.T) {
	t.Parallel()
	p := newPlanted(31, 260, 150, 3, 0.25, 0.04)
	mask := randomMatrix(&testRNG{s: 32}, 260, 150, 0.8, 0)
	for _, tc := range []struct {
		masked bool
		levels int
	}{{false, 0}, {true, 0}, {true, 3}} {
		var m BitMatrix
		if tc.masked {
			m = mask
		}
		data, err := NewData(p.noisy, m, 64)
		if err != nil {
			t.Fatal(err)
		}
		counted, err := data.Counted(3)
		if err != nil {
			t.Fatal(err)
		}
		cfg := DefaultConfig()
		cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.StartSweeps, cfg.Workers = 2, 4, 4, 2, 2, 2
		cfg.Noise, cfg.CellLevels, cfg.Init, cfg.Housekeeping = Dropout, 1<<tc.levels, InitCluster, true
		a, resA := runAll(t, data, cfg)
		b, resB := runAll(t, counted, cfg)
		name := fmt.Sprintf("masked %v, levels %d", tc.masked, tc.levels)
		sameRun(t, name, a, b, resA, resB)
		if runDigest(a, resA) != runDigest(b, resB) {
			t.Errorf("%s: digests differ", name)
		}
		c, _ := counted.count(1, true)
		if c != counted.counts || c.ones != a.obsOnes || c.observed != a.observed {
			t.Errorf("%s: counts %+v taken again or not the sampler's (%d ones, %d observed)", name, c, a.obsOnes, a.observed)
		}
	}
	data, err := NewData(p.noisy, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	data.XT = randomMatrix(&testRNG{s: 33}, 150, 260, 0.3, 0)
	if _, err := data.Counted(2); !errors.Is(err, errShape) {
		t.Errorf("Counted of an XT that is not X's transpose: %v, want errShape", err)
	}
}
