package gibbs

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"testing"
)

// TestSampleLevelsMatchEnumeration runs a long chain with fixed levels and
// rates on a 3 × 3 problem whose first cell is one sample and the others
// another, each sample with its own gene levels, and compares the sample
// averages with the posterior enumerated under each entry's rates at its
// cell's level and its gene's level in the cell's sample.
func TestSampleLevelsMatchEnumeration(t *testing.T) {
	t.Parallel()
	const n, d, L = 3, 3, 2
	xbits := [][]bool{{true, true, false}, {true, false, true}, {false, true, true}}
	obs := [][]bool{{true, true, true}, {false, true, true}, {true, true, false}}
	data := tinyData(t, xbits, obs)
	pz, pu := []float64{0.4, 0.55}, []float64{0.6, 0.35}
	for _, swaps := range []struct{ cells, genes bool }{{false, false}, {true, false}, {false, true}} {
		t.Run(fmt.Sprintf("cell swaps %v, gene swaps %v", swaps.cells, swaps.genes), func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers, cfg.Seed = L, 1000, 150000, 1, 1, 5
			if testing.Short() {
				cfg.Samples = 50000
			}
			cfg.Noise, cfg.CellLevels, cfg.GeneLevels, cfg.FixLambda, cfg.KeepSamples = Dropout, 4, 4, true, true
			cfg.PriorZ, cfg.PriorU = FixedPrior(pz...), FixedPrior(pu...)
			cfg.CellSamples = []uint16{0, 1, 1}
			cfg.Swaps, cfg.GeneSwaps = swaps.cells, swaps.genes
			s, err := NewSampler(context.Background(), data, cfg)
			if err != nil {
				t.Fatal(err)
			}
			c := s.chains[0]
			c.rates = rates{rho: 0.5, lift0: 0.6, step: 0.5, gene0: -0.5, geneStep: 0.45}
			copy(c.level, []uint8{0, 3, 1})
			copy(c.geneLevel, []uint8{3, 0, 2, 0, 3, 1}) // sample 0's genes, then sample 1's
			s.setLiftPlanes(c)
			s.setGenePlanes(c)
			res, err := ranResult(s.Run(context.Background(), nil), s.Result)
			if err != nil {
				t.Fatal(err)
			}
			perEntry := func(genes []uint8, sampleOf func(i int) int) []rates {
				out := make([]rates, n*d)
				for i, kc := range c.level {
					for j := range d {
						on, off := c.rates.entryRates(kc, genes[sampleOf(i)*d+j])
						out[i*d+j] = rates{on: on, off: off}
					}
				}
				return out
			}
			own := func(i int) int { return int(cfg.CellSamples[i]) }
			entries := perEntry(c.geneLevel, own)
			exact := exactPosterior(xbits, obs, L, pz, pu, false, entries...)
			mean, se := sampleStats(s, n, d, L, len(exact), entries)
			for _, b := range farFrom(mean, se, exact) {
				t.Error(b)
			}
			// Power: the posterior with every cell at sample 0's gene levels is
			// told apart.
			if len(farFrom(mean, se, exactPosterior(xbits, obs, L, pz, pu, false, perEntry(c.geneLevel, func(int) int { return 0 })...))) == 0 {
				t.Error("the tolerance cannot tell the samples' gene levels from sample 0's")
			}
			predictsSampleMean(t, res, mean, n, d)
			for i := range n {
				for j := range d {
					on, off := c.rates.entryRates(c.level[i], c.geneLevel[own(i)*d+j])
					gotOn, gotOff := EntryRates(res.CellDropout[i], res.CellBackground[i], res.SampleGeneLift[own(i)][j])
					if math.Abs(gotOn-on) > 1e-12 || math.Abs(gotOff-off) > 1e-12 {
						t.Errorf("EntryRates of (%d, %d) from the result: %v, %v; the chain's %v, %v", i, j, gotOn, gotOff, on, off)
					}
				}
			}
			// The retained states, encoded, predict each entry under its
			// cell's sample's levels, as the result does.
			b, err := res.MarshalSamples()
			if err != nil {
				t.Fatal(err)
			}
			kept, err := UnmarshalSamples(b)
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				for j := range d {
					if want, _ := res.Predict(i, j, SampleMean); kept.Predict(i, j) != want {
						t.Errorf("entry (%d, %d): the decoded samples predict %v, the result %v", i, j, kept.Predict(i, j), want)
					}
				}
			}
		})
	}
}

// TestSampleHeldMatchesEnumeration lets a chain with two samples estimate
// its levels and rates, holds them, and compares the retained states with
// the posterior enumerated under the held parameters.
func TestSampleHeldMatchesEnumeration(t *testing.T) {
	t.Parallel()
	const n, d, L = 4, 3, 2
	xbits := [][]bool{{true, true, false}, {true, false, true}, {false, true, true}, {true, true, true}}
	obs := [][]bool{{true, true, true}, {false, true, true}, {true, true, false}, {true, true, true}}
	data := tinyData(t, xbits, obs)
	pz, pu := []float64{0.4, 0.55}, []float64{0.6, 0.35}
	cfg := DefaultConfig()
	cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers, cfg.Seed = L, 1000, 150000, 1, 1, 3
	if testing.Short() {
		cfg.Samples = 50000
	}
	cfg.Noise, cfg.CellLevels, cfg.GeneLevels, cfg.HoldFrom, cfg.KeepSamples = Dropout, 4, 4, 40, true
	cfg.PriorZ, cfg.PriorU = FixedPrior(pz...), FixedPrior(pu...)
	cfg.CellSamples = []uint16{0, 0, 1, 1}
	s, err := NewSampler(context.Background(), data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	c := s.chains[0]
	entries := make([]rates, n*d)
	for i, kc := range c.level {
		for j := range d {
			on, off := c.rates.entryRates(kc, c.geneLevel[s.geneLevelAt(i, j)])
			entries[i*d+j] = rates{on: on, off: off}
		}
	}
	exact := exactPosterior(xbits, obs, L, pz, pu, false, entries...)
	mean, se := sampleStats(s, n, d, L, len(exact), entries)
	for _, b := range farFrom(mean, se, exact) {
		t.Error(b)
	}
}

// sampleTestData returns planted data whose cells fall into samples of
// the given sizes, the later samples with extra background ones in a
// third of the genes (an ambient profile of their own), and the cells'
// samples.
func sampleTestData(t *testing.T, seed uint64, sizes []int, d int, mask bool, seg int) (*Matrix, *Matrix, Data, []uint16) {
	t.Helper()
	n := 0
	for _, k := range sizes {
		n += k
	}
	p := newPlanted(seed, n, d, 3, 0.3, 0.05)
	r := &testRNG{s: seed + 7}
	cells := make([]uint16, 0, n)
	for smp, k := range sizes {
		for range k {
			i := len(cells)
			for j := range d {
				if (j+smp)%3 == 0 && r.bern(0.1*float64(smp)) {
					p.noisy.Set(i, j, true)
				}
			}
			cells = append(cells, uint16(smp))
		}
	}
	var m *Matrix
	var bm BitMatrix
	if mask {
		m = randomMatrix(r, n, d, 0.8, 0)
		bm = m
	}
	data, err := NewData(p.noisy, bm, seg)
	if err != nil {
		t.Fatal(err)
	}
	return p.noisy, m, data, cells
}

// TestSampleLevelsMatchReferenceSweep runs the sampler with samples, with
// every kernel this build and CPU run, beside a plain reference whose
// conditionals are summed entry by entry, each one at its cell's level
// and its gene's level in the cell's sample, and whose levels are set from
// its own counts per sample; it requires identical states, levels and
// rates after every sweep. The samples' boundaries fall inside words and
// on them, across column segments, with and without a mask.
func TestSampleLevelsMatchReferenceSweep(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sizes      []int
		d, L, seg  int
		masked, hk bool
	}{
		{[]int{3, 67, 60}, 90, 3, 64, false, true},
		{[]int{64, 65}, 65, 2, 0, true, false},
		{[]int{50, 80, 70}, 130, 4, 128, true, true},
	} {
		for _, kernel := range Kernels() {
			name := fmt.Sprintf("%v/%d genes/L%d/seg%d/masked=%v/hk=%v/%s", tc.sizes, tc.d, tc.L, tc.seg, tc.masked, tc.hk, kernel)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				x, mask, data, cells := sampleTestData(t, uint64(tc.d+tc.L), tc.sizes, tc.d, tc.masked, tc.seg)
				n := x.Rows()
				cfg := DefaultConfig()
				cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers, cfg.Kernel = tc.L, 6, 4, 1, 3, kernel
				cfg.Noise, cfg.CellLevels, cfg.GeneLevels, cfg.Init, cfg.Housekeeping = Dropout, 8, 8, InitData, tc.hk
				cfg.PriorZ, cfg.PriorU = EmpiricalPrior(), FixedPrior(0.3)
				cfg.CellSamples = cells
				s, err := NewSampler(context.Background(), data, cfg)
				if err != nil {
					t.Fatal(err)
				}
				obs := make([][]bool, n)
				for i := range obs {
					obs[i] = make([]bool, tc.d)
					for j := range obs[i] {
						obs[i][j] = mask == nil || mask.Get(i, j)
					}
				}
				c := s.chains[0]
				ref := &chain{rates: c.rates, level: append([]uint8(nil), c.level...), geneLevel: append([]uint8(nil), c.geneLevel...)}
				z, u := unpack(c.z, n, s.l), unpack(c.u, tc.d, s.l)
				xb := toBools(x)
				moved := false
				for sweep := range s.Sweeps() {
					if _, err := s.Step(); err != nil {
						t.Fatal(err)
					}
					refSampleSweep(s, ref, z, u, xb, obs, cells, cfg.Seed, sweep)
					c := s.chains[0]
					if !reflect.DeepEqual(unpack(c.z, n, s.l), z) || !reflect.DeepEqual(unpack(c.u, tc.d, s.l), u) {
						t.Fatalf("sweep %d: state differs from the reference", sweep)
					}
					cr, rr := c.rates, ref.rates
					cr.on, cr.off, rr.on, rr.off = 0, 0, 0, 0
					if cr != rr || !reflect.DeepEqual(c.level, ref.level) || !reflect.DeepEqual(c.geneLevel, ref.geneLevel) {
						t.Fatalf("sweep %d: rates %+v, reference %+v (or the levels differ)", sweep, c.rates, ref.rates)
					}
					for j := range tc.d {
						moved = moved || c.geneLevel[j] != c.geneLevel[tc.d+j]
					}
				}
				if !moved {
					t.Error("no gene's level differs between samples 0 and 1: the test exercises no per-sample gain")
				}
			})
		}
	}
}

// refSampleSweep is refGeneSweep with samples: a gene's conditional sums
// its ones by sample, each at the gene's level in that sample (in sample
// order, as the sampler does), and a cell's sums the levels of its ones'
// genes in its sample; the genes' levels come from counts per gene and
// sample.
func refSampleSweep(s *Sampler, c *chain, z, u [][]bool, x, obs [][]bool, cells []uint16, seed uint64, sweep int) {
	L, D, S := len(z[0]), len(u), int(cells[len(cells)-1])+1
	r := c.rates
	zero := math.Log(r.rho)
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
	fixed := func(l int) bool { return s.clamped>>uint(l)&1 != 0 }
	key := streamKey(seed, sweep, stepU)
	for d := range u {
		for l := range L {
			if s.fixedU>>uint(l)&1 != 0 {
				continue
			}
			ones := make([]int, S)
			var zeros, lev int
			for n := range z {
				if z[n][l] && obs[n][d] && alone(z[n], u[d], l) {
					if x[n][d] {
						ones[cells[n]]++
						lev += int(c.level[n])
					} else {
						zeros++
					}
				}
			}
			cond := 0.0
			for smp, o := range ones {
				cond += float64((r.lift0 + r.geneLift(c.geneLevel[smp*D+d])) * float64(o))
			}
			cond += float64(r.step*float64(lev)) + float64(zero*float64(zeros))
			flip(u[d], l, cond+s.logitU[l], key, d)
		}
	}
	genes := make([]uint64, D*S)
	for d := range u {
		for smp := range S {
			var sz [][]bool
			var xs, os []bool
			for n := range z {
				if int(cells[n]) == smp {
					sz, xs, os = append(sz, z[n]), append(xs, x[n][d]), append(os, obs[n][d])
				}
			}
			genes[d*S+smp] = packCounts(refMismatch(u[d], sz, xs, os))
		}
	}
	key = streamKey(seed, sweep, stepZ)
	for n := range z {
		one := r.lift(c.level[n]) + r.gene0
		for l := range L {
			if fixed(l) {
				continue
			}
			var ones, zeros, lev int
			for d := range u {
				if u[d][l] && obs[n][d] && alone(z[n], u[d], l) {
					if x[n][d] {
						ones++
						lev += int(c.geneLevel[int(cells[n])*D+d])
					} else {
						zeros++
					}
				}
			}
			cond := float64(one*float64(ones)) + float64(r.geneStep*float64(lev)) + float64(zero*float64(zeros))
			flip(z[n], l, cond+s.logitZ[l], key, n)
		}
	}
	counts := make([]uint64, len(z))
	for n := range z {
		counts[n] = packCounts(refMismatch(z[n], u, x[n], obs[n]))
	}
	s.updateLevels(c, counts, false)
	if sweep+1 >= s.sched.genesFrom {
		s.updateSampleGeneLevels(c, genes)
	}
}

// TestSampleTraceLogLikIsExact requires the reported log-likelihood of the
// held sweeps of a fit with samples to be the likelihood summed entry by
// entry, each entry at its gene's level in its cell's sample, for any
// segmentation, mask and number of workers, and the held sweeps to give
// the same chain for any number of workers and across a checkpoint.
func TestSampleTraceLogLikIsExact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sizes       []int
		seg, hold   int
		masked      bool
		workers     []int
		restoreFrom int
	}{
		{[]int{100, 90, 70}, 0, 6, false, []int{1, 3}, 7},
		{[]int{130, 130}, 64, 4, true, []int{2, 1}, 5},
	} {
		t.Run(fmt.Sprintf("%v/seg%d/masked=%v", tc.sizes, tc.seg, tc.masked), func(t *testing.T) {
			t.Parallel()
			x, mask, data, cells := sampleTestData(t, 41, tc.sizes, 300, tc.masked, tc.seg)
			var digests []string
			for _, w := range tc.workers {
				cfg := DefaultConfig()
				cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers, cfg.Init = 3, 8, 4, 1, w, InitCluster
				cfg.Noise, cfg.CellLevels, cfg.GeneLevels, cfg.Housekeeping, cfg.HoldFrom = Dropout, 8, 8, true, tc.hold
				cfg.CellSamples = cells
				s, err := NewSampler(context.Background(), data, cfg)
				if err != nil {
					t.Fatal(err)
				}
				for range s.Sweeps() {
					if s.Sweep() == tc.restoreFrom {
						st, err := s.MarshalBinary()
						if err != nil {
							t.Fatal(err)
						}
						if s, err = NewSampler(context.Background(), data, cfg); err != nil {
							t.Fatal(err)
						}
						if err := s.UnmarshalBinary(st); err != nil {
							t.Fatal(err)
						}
					}
					st, err := s.Step()
					if err != nil {
						t.Fatal(err)
					}
					if st.Sweep+1 >= s.sched.genesFrom && st.Sweep < tc.hold {
						continue
					}
					want := bruteLogLik(s, s.chains[0], x, mask)
					if math.Abs(st.LogLik-want) > 1e-9*math.Abs(want) {
						t.Errorf("%d workers, sweep %d: LogLik %.6f, entry by entry %.6f", w, st.Sweep, st.LogLik, want)
					}
				}
				c := s.chains[0]
				digests = append(digests, fmt.Sprint(c.z, c.u, c.level, c.geneLevel, c.rates))
			}
			for _, dg := range digests[1:] {
				if dg != digests[0] {
					t.Errorf("workers %v (one restored from a checkpoint) end in different chains", tc.workers)
				}
			}
		})
	}
}

// TestCellSamplesChecked refuses samples that are not contiguous runs in
// order, and a count that is not the cells'.
func TestCellSamplesChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cells []uint16
		ok    bool
	}{
		{[]uint16{0, 0, 1, 1, 2}, true},
		{[]uint16{0, 0, 0, 0, 0}, true},
		{[]uint16{1, 1, 1, 1, 1}, false},
		{[]uint16{0, 1, 0, 1, 1}, false},
		{[]uint16{0, 0, 2, 2, 2}, false},
		{[]uint16{0, 1, 1}, false}, // 3 cells of 5
	} {
		cfg := DefaultConfig()
		cfg.Noise, cfg.CellLevels, cfg.GeneLevels, cfg.CellSamples = Dropout, 2, 2, tc.cells
		x := NewMatrix(5, 4)
		x.Set(1, 1, true)
		data, err := NewData(x, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = NewSampler(context.Background(), data, cfg)
		if (err == nil) != tc.ok {
			t.Errorf("CellSamples %v: error %v, want ok = %v", tc.cells, err, tc.ok)
		}
	}
}
