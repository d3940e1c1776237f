package gibbs

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// TestCellLevelsMatchEnumeration runs long chains with fixed per-cell
// levels and rates on a 3 × 3 problem and compares the sample averages of
// the predictive and the marginals with the enumerated posterior, whose
// likelihood gives each cell its level's rates.
func TestCellLevelsMatchEnumeration(t *testing.T) {
	t.Parallel()
	const n, d, L = 3, 3, 2
	xbits := [][]bool{{true, true, false}, {true, true, false}, {false, true, true}}
	obs := [][]bool{{true, true, false}, {false, true, true}, {true, true, true}}
	data := tinyData(t, xbits, obs)
	pz, pu := []float64{0.35, 0.55}, []float64{0.6, 0.3}
	cfg := DefaultConfig()
	cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers, cfg.Seed = L, 1000, 150000, 1, 1, 7
	if testing.Short() {
		cfg.Samples = 50000
	}
	cfg.Noise, cfg.CellLevels, cfg.FixLambda, cfg.KeepSamples = Dropout, 4, true, true
	cfg.PriorZ, cfg.PriorU = FixedPrior(pz...), FixedPrior(pu...)
	s, err := NewSampler(context.Background(), data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Cells at levels 0, 3 and 1: backgrounds far apart.
	c := s.chains[0]
	c.rates = rates{rho: 0.55, lift0: 0.4, step: 0.6}
	copy(c.level, []uint8{0, 3, 1})
	s.setLiftPlanes(c)
	res, err := ranResult(s.Run(context.Background(), nil), s.Result)
	if err != nil {
		t.Fatal(err)
	}
	perCell := func(r rates) []rates {
		out := make([]rates, n)
		for i, k := range c.level {
			on, off := r.cellRates(k)
			out[i] = rates{on: on, off: off}
		}
		return out
	}
	cells := perCell(c.rates)
	exact := exactPosterior(xbits, obs, L, pz, pu, false, cells...)
	mean, se := sampleStats(s, n, d, L, len(exact), cells)
	for _, b := range farFrom(mean, se, exact) {
		t.Error(b)
	}
	// Power: one cell moved to another level is told apart.
	moved := c.rates
	wrong := perCell(moved)
	on, off := moved.cellRates(2)
	wrong[1] = rates{on: on, off: off}
	if len(farFrom(mean, se, exactPosterior(xbits, obs, L, pz, pu, false, wrong...))) == 0 {
		t.Error("the tolerance cannot tell cell 2's level 3 from level 2")
	}
	predictsSampleMean(t, res, mean, n, d)
}

// predictsSampleMean requires res's Predict with SampleMean to give each
// entry of the n × d data the average of the retained samples that
// sampleStats computed (mean's first n·d statistics), up to the remainder
// of samples its batches drop.
func predictsSampleMean(t *testing.T, res *Result, mean []float64, n, d int) {
	t.Helper()
	for i := range n {
		for j := range d {
			p, err := res.Predict(i, j, SampleMean)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(p-mean[i*d+j]) > 1e-3 {
				t.Errorf("Predict(%d, %d) = %v, sample average %v", i, j, p, mean[i*d+j])
			}
		}
	}
}

// farFrom lists the statistics whose sampler estimate (mean, with
// standard error se) lies more than 5 standard errors from ref, the
// exact posterior's: every enumeration test's tolerance, and with a
// slightly wrong posterior as ref its power.
func farFrom(mean, se, ref []float64) (bad []string) {
	for i := range ref {
		if math.Abs(mean[i]-ref[i]) > 5*se[i]+1e-9 {
			bad = append(bad, fmt.Sprintf("stat %d: sampler %.4f ± %.4f, exact %.4f", i, mean[i], se[i], ref[i]))
		}
	}
	return bad
}

// sampleStats returns the mean and batch-means standard error of the
// first m tinyStats over the retained samples of s, under cell rates.
func sampleStats(s *Sampler, n, d, L, m int, cells []rates) (mean, se []float64) {
	const batches = 50
	per := len(s.kept) / batches
	batchMean := make([][]float64, batches)
	for b := range batches {
		batchMean[b] = make([]float64, m)
		for _, k := range s.kept[b*per : (b+1)*per] {
			var z, u uint64
			for l := range L {
				for i := range n {
					z |= (k.z[l] >> uint(i) & 1) << uint(i*L+l)
				}
				for j := range d {
					u |= (k.u[l] >> uint(j) & 1) << uint(j*L+l)
				}
			}
			for i, v := range tinyStats(z, u, n, d, L, cells...)[:m] {
				batchMean[b][i] += v / float64(per)
			}
		}
	}
	mean, se = make([]float64, m), make([]float64, m)
	for i := range m {
		for b := range batches {
			mean[i] += batchMean[b][i] / batches
		}
		v := 0.0
		for b := range batches {
			v += (batchMean[b][i] - mean[i]) * (batchMean[b][i] - mean[i]) / (batches - 1)
		}
		se[i] = math.Sqrt(v / batches)
	}
	return mean, se
}

// TestCellLevelsMatchReferenceSweep runs the sampler with per-cell levels
// beside a plain reference (a U step, then a Z step, each variable's
// conditional summed entry by entry with its cell's gain) whose levels and
// rates are updated from its own per-cell counts, and requires identical
// states, levels and rates after every sweep.
func TestCellLevelsMatchReferenceSweep(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n, d, L, seg, bits int
		masked             bool
	}{
		{70, 130, 3, 64, 2, false},
		{200, 64, 6, 64, 3, true},
		{129, 65, 2, 0, 1, true},
	} {
		t.Run(fmt.Sprintf("%dx%d/L%d/bits%d/masked=%v", tc.n, tc.d, tc.L, tc.bits, tc.masked), func(t *testing.T) {
			t.Parallel()
			r := &testRNG{s: uint64(tc.n + tc.d + tc.bits)}
			// Cells of varied depth: each detects with its own rate.
			x := NewMatrix(tc.n, tc.d)
			for i := range tc.n {
				p := 0.1 + 0.5*float64(i%7)/7
				for j := range tc.d {
					x.Set(i, j, r.bern(p))
				}
			}
			var mask BitMatrix
			if tc.masked {
				mask = randomMatrix(r, tc.n, tc.d, 0.7, tc.seg)
			}
			data, err := NewData(x, mask, tc.seg)
			if err != nil {
				t.Fatal(err)
			}
			cfg := DefaultConfig()
			cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers = tc.L, 4, 4, 1, 3
			cfg.Noise, cfg.CellLevels, cfg.Init = Dropout, 1<<tc.bits, InitData
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
			ref := &chain{rates: c.rates, level: append([]uint8(nil), c.level...)}
			z, u := unpack(c.z, tc.n, tc.L), unpack(c.u, tc.d, tc.L)
			xb := toBools(x)
			for sweep := range s.Sweeps() {
				if _, err := s.Step(); err != nil {
					t.Fatal(err)
				}
				refLevelSweep(s, ref, z, u, xb, obs, cfg.Seed, sweep)
				c := s.chains[0]
				if !reflect.DeepEqual(unpack(c.z, tc.n, tc.L), z) || !reflect.DeepEqual(unpack(c.u, tc.d, tc.L), u) {
					t.Fatalf("sweep %d: state differs from the reference", sweep)
				}
				if c.rates.rho != ref.rates.rho || c.rates.lift0 != ref.rates.lift0 || c.rates.step != ref.rates.step ||
					!reflect.DeepEqual(c.level, ref.level) {
					t.Fatalf("sweep %d: rates %+v levels %v, reference %+v %v", sweep, c.rates, c.level[:8], ref.rates, ref.level[:8])
				}
			}
		})
	}
}

// refLevelSweep is one sweep of the per-cell-level likelihood written
// plainly: U then Z, every conditional counted entry by entry over the
// observed entries the code alone decides (its ones, its zeros and the
// summed level of its ones' cells) and put together as the sampler's
// conditional does, then the levels' update from the per-cell counts (the
// sampler's own update, which the other tests check).
func refLevelSweep(s *Sampler, c *chain, z, u [][]bool, x, obs [][]bool, seed uint64, sweep int) {
	L := len(z[0])
	zero := math.Log(c.rates.rho)
	flip := func(own []bool, l int, cond float64, key uint64, i int) {
		if own[l] {
			cond = -cond
		}
		if cond >= 0 || uniformAt(key, uint64(i*L+l)) < math.Exp(cond) {
			own[l] = !own[l]
		}
	}
	alone := func(zr, ur []bool, l int) bool {
		for k := range L {
			if k != l && zr[k] && ur[k] {
				return false
			}
		}
		return true
	}
	key := streamKey(seed, sweep, stepU)
	for d := range u {
		for l := range L {
			var ones, zeros, lev int
			for n := range z {
				if z[n][l] && obs[n][d] && alone(z[n], u[d], l) {
					if x[n][d] {
						ones++
						lev += int(c.level[n])
					} else {
						zeros++
					}
				}
			}
			cond := float64(c.rates.lift0*float64(ones)) + float64(c.rates.step*float64(lev)) + float64(zero*float64(zeros))
			flip(u[d], l, cond+s.logitU[l], key, d)
		}
	}
	key = streamKey(seed, sweep, stepZ)
	for n := range z {
		for l := range L {
			var ones, zeros int
			for d := range u {
				if u[d][l] && obs[n][d] && alone(z[n], u[d], l) {
					if x[n][d] {
						ones++
					} else {
						zeros++
					}
				}
			}
			cond := float64(c.rates.lift(c.level[n])*float64(ones)) + float64(zero*float64(zeros))
			flip(z[n], l, cond+s.logitZ[l], key, n)
		}
	}
	counts := make([]uint64, len(z))
	for n := range z {
		counts[n] = packCounts(refMismatch(z[n], u, x[n], obs[n]))
	}
	s.updateLevels(c, counts, false)
}

// TestLevelsReproducible checks the guarantees with per-cell levels, and
// with per-gene levels beside them: identical results for any worker count
// and segmentation, and after a resume (before and after the genes' levels
// are first set, half-way through the burn-in).
func TestLevelsReproducible(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		seed     uint64
		geneBits int
		stops    []int
	}{
		{"cells", 17, 0, []int{5}},
		{"cells and genes", 23, 2, []int{2, 6}},
		{"held, burn-in until settled", 32, 2, []int{5, 10, 17}},
		{"held, swaps", 31, 3, []int{3, 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newPlanted(tc.seed, 300, 200, 3, 0.3, 0.05)
			mask := randomMatrix(&testRNG{s: tc.seed + 1}, 300, 200, 0.9, 0)
			cfg := DefaultConfig()
			cfg.L, cfg.BurnIn, cfg.Samples, cfg.Thin, cfg.Noise, cfg.CellLevels, cfg.GeneLevels = 2, 8, 6, 2, Dropout, 8, 1<<tc.geneBits
			cfg.Starts, cfg.StartSweeps, cfg.KeepSamples, cfg.Init, cfg.Housekeeping = 2, 3, true, InitCluster, true
			switch tc.name {
			case "held, burn-in until settled":
				// From a random start the first two windows climb and
				// are discarded (a resume inside each), the third is kept.
				cfg.BurnIn, cfg.StartSweeps, cfg.Init, cfg.HoldFrom, cfg.MaxBurnIn = 2, 2, InitRandom, 2, 2+10*6
			case "held, swaps":
				cfg.L, cfg.HoldFrom, cfg.Swaps = 5, 4, true
			}
			var base *Sampler
			var baseRes *Result
			for _, seg := range []int{0, 64, 128} {
				data, err := NewData(p.noisy, mask, seg)
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range []int{1, 3} {
					c := cfg
					c.Workers = w
					s, res := runAll(t, data, c)
					if base == nil {
						base, baseRes = s, res
						continue
					}
					sameRun(t, fmt.Sprintf("segments %d, workers %d", seg, w), base, s, baseRes, res)
					sameLevels(t, fmt.Sprintf("segments %d, workers %d", seg, w), base, s, baseRes, res)
				}
			}
			if cfg.MaxBurnIn > 0 && (base.BurnIn() == cfg.BurnIn || base.BurnIn() == cfg.MaxBurnIn) {
				t.Errorf("burn-in of %d sweeps: the test needs one that ran past BurnIn (%d) and settled before MaxBurnIn (%d)",
					base.BurnIn(), cfg.BurnIn, cfg.MaxBurnIn)
			}
			data, err := NewData(p.noisy, mask, 64)
			if err != nil {
				t.Fatal(err)
			}
			for _, stop := range tc.stops {
				state := stateAfter(t, data, cfg, stop)
				b, res := resumed(t, data, cfg, state)
				name := fmt.Sprintf("resumed after %d sweeps", stop)
				sameRun(t, name, base, b, baseRes, res)
				sameLevels(t, name, base, b, baseRes, res)
			}
		})
	}
}

// sameLevels reports where two runs' cell or gene levels differ.
func sameLevels(t *testing.T, name string, a, b *Sampler, ra, rb *Result) {
	t.Helper()
	if !reflect.DeepEqual(a.chains[0].level, b.chains[0].level) || !reflect.DeepEqual(ra.CellBackground, rb.CellBackground) {
		t.Errorf("%s: cell levels differ", name)
	}
	if !reflect.DeepEqual(a.chains[0].geneLevel, b.chains[0].geneLevel) || !reflect.DeepEqual(ra.GeneLift, rb.GeneLift) {
		t.Errorf("%s: gene levels differ", name)
	}
}

// TestOrderStats: the radix selection of the levels' percentiles gives the
// values a sort gives, with ties, negative values, infinities and any
// number of workers.
func TestOrderStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name string
		g    func(i int) float64
	}{
		{"normal", func(int) float64 { return rng.NormFloat64() * 3 }},
		{"ties", func(i int) float64 { return float64(i%5) - 2 }},
		// The low ranks lie in the spread, the high ones in a tight
		// cluster, so that the ranks narrow in different rounds.
		{"a spread and a cluster", func(i int) float64 {
			if i%4 == 0 {
				return rng.NormFloat64() * 3
			}
			return 100 + float64(i%997)*1e-10
		}},
		{"signed zeros and infinities", func(i int) float64 {
			return []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), 1e-300, -1e-300}[i%6]
		}},
	} {
		for _, n := range []int{1, 2, 4095, 20000} {
			g := make([]float64, n)
			for i := range g {
				g[i] = tc.g(i)
			}
			sorted := slices.Clone(g)
			slices.Sort(sorted)
			ranks := []int{0, n * 2 / 100, (n - 1) * 98 / 100, n - 1}
			for _, workers := range []int{1, 3} {
				// Twice: the second call reuses the first's room.
				s := &Sampler{workers: workers}
				for call := range 2 {
					got := s.orderStats(g, ranks)
					for i, r := range ranks {
						if got[i] != sorted[r] {
							t.Errorf("%s, %d values, %d workers, call %d: rank %d is %v, want %v", tc.name, n, workers, call, r, got[i], sorted[r])
						}
					}
				}
			}
		}
	}
}

// TestLevelsAnyWorkers checks that the levels' update, whose per-cell
// passes split the cells in blocks of at least 4096 between the workers,
// gives the same levels, rates and run with one worker as with three on
// enough cells for three blocks.
func TestLevelsAnyWorkers(t *testing.T) {
	t.Parallel()
	p := newPlanted(31, 13000, 60, 3, 0.3, 0.05)
	data, err := NewData(p.noisy, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.L, cfg.BurnIn, cfg.Samples, cfg.Noise, cfg.CellLevels, cfg.GeneLevels = 2, 4, 2, Dropout, 8, 4
	cfg.Starts, cfg.Init, cfg.Housekeeping = 1, InitCluster, true
	cfg.Workers = 1
	one, oneRes := runAll(t, data, cfg)
	cfg.Workers = 3
	three, threeRes := runAll(t, data, cfg)
	sameRun(t, "workers 3", one, three, oneRes, threeRes)
	sameLevels(t, "workers 3", one, three, oneRes, threeRes)
}
