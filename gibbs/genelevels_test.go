package gibbs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"
)

// TestGeneLevelsMatchEnumeration runs long chains with fixed per-cell and
// per-gene levels and rates on a 3 × 3 problem and compares the sample
// averages of the predictive and the marginals with the enumerated
// posterior, whose likelihood gives each entry the rates of its cell's and
// its gene's level.
func TestGeneLevelsMatchEnumeration(t *testing.T) {
	t.Parallel()
	const n, d, L = 3, 3, 2
	xbits := [][]bool{{true, true, false}, {true, false, true}, {false, true, true}}
	obs := [][]bool{{true, true, true}, {false, true, true}, {true, true, false}}
	data := tinyData(t, xbits, obs)
	pz, pu := []float64{0.4, 0.55}, []float64{0.6, 0.35}
	cfg := DefaultConfig()
	cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers, cfg.Seed = L, 1000, 150000, 1, 1, 9
	if testing.Short() {
		cfg.Samples = 50000
	}
	cfg.Noise, cfg.CellLevels, cfg.GeneLevels, cfg.FixLambda, cfg.KeepSamples = Dropout, 4, 4, true, true
	cfg.PriorZ, cfg.PriorU = FixedPrior(pz...), FixedPrior(pu...)
	s, err := NewSampler(context.Background(), data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Cells at levels 0, 3, 1 and genes at 3, 0, 2: gains from 0.1 to 3.
	c := s.chains[0]
	c.rates = rates{rho: 0.5, lift0: 0.6, step: 0.5, gene0: -0.5, geneStep: 0.45}
	copy(c.level, []uint8{0, 3, 1})
	copy(c.geneLevel, []uint8{3, 0, 2})
	s.setLiftPlanes(c)
	s.setGenePlanes(c)
	res, err := ranResult(s.Run(context.Background(), nil), s.Result)
	if err != nil {
		t.Fatal(err)
	}
	perEntry := func(r rates, genes []uint8) []rates { return levelEntries(r, c.level, genes) }
	entries := perEntry(c.rates, c.geneLevel)
	exact := exactPosterior(xbits, obs, L, pz, pu, false, entries...)
	mean, se := sampleStats(s, n, d, L, len(exact), entries)
	for _, b := range farFrom(mean, se, exact) {
		t.Error(b)
	}
	// Power: gene 1 moved from level 0 to level 1 is told apart.
	if len(farFrom(mean, se, exactPosterior(xbits, obs, L, pz, pu, false, perEntry(c.rates, []uint8{3, 1, 2})...))) == 0 {
		t.Error("the tolerance cannot tell gene 1's level 0 from level 1")
	}
	predictsSampleMean(t, res, mean, n, d)
	for i := range n {
		for j := range d {
			on, off := c.rates.entryRates(c.level[i], c.geneLevel[j])
			gotOn, gotOff := EntryRates(res.CellDropout[i], res.CellBackground[i], res.GeneLift[j])
			if math.Abs(gotOn-on) > 1e-12 || math.Abs(gotOff-off) > 1e-12 {
				t.Errorf("EntryRates of (%d, %d) from the result: %v, %v; the chain's %v, %v", i, j, gotOn, gotOff, on, off)
			}
		}
	}
}

// TestGeneLevelsMatchReferenceSweep runs the sampler with per-cell and
// per-gene levels, with every kernel this build and CPU run, beside a plain
// reference (a U step, then a Z step, each conditional summed entry by
// entry with the entry's gain) whose levels and rates are updated from its
// own per-cell and per-gene counts, and requires identical states, levels
// and rates after every sweep.
func TestGeneLevelsMatchReferenceSweep(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n, d, L, seg, cellBits, geneBits int
		masked                           bool
	}{
		{70, 130, 3, 64, 2, 2, false},
		{200, 64, 5, 64, 3, 3, true},
		{129, 65, 2, 0, 1, 1, true},
	} {
		for _, kernel := range Kernels() {
			name := fmt.Sprintf("%dx%d/L%d/bits%d,%d/masked=%v/%s", tc.n, tc.d, tc.L, tc.cellBits, tc.geneBits, tc.masked, kernel)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				r := &testRNG{s: uint64(tc.n + tc.d + tc.geneBits)}
				// Cells of varied depth and genes of varied baseline.
				x := NewMatrix(tc.n, tc.d)
				for i := range tc.n {
					for j := range tc.d {
						p := 0.05 + 0.3*float64(i%7)/7 + 0.4*float64(j%5)/5
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
				cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers, cfg.Kernel = tc.L, 6, 4, 1, 3, kernel
				cfg.Noise, cfg.CellLevels, cfg.GeneLevels, cfg.Init = Dropout, 1<<tc.cellBits, 1<<tc.geneBits, InitData
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
				ref := &chain{rates: c.rates, level: append([]uint8(nil), c.level...), geneLevel: append([]uint8(nil), c.geneLevel...)}
				z, u := unpack(c.z, tc.n, tc.L), unpack(c.u, tc.d, tc.L)
				xb := toBools(x)
				moved := false
				for sweep := range s.Sweeps() {
					if _, err := s.Step(); err != nil {
						t.Fatal(err)
					}
					refGeneSweep(s, ref, z, u, xb, obs, cfg.Seed, sweep)
					c := s.chains[0]
					if !reflect.DeepEqual(unpack(c.z, tc.n, tc.L), z) || !reflect.DeepEqual(unpack(c.u, tc.d, tc.L), u) {
						t.Fatalf("sweep %d: state differs from the reference", sweep)
					}
					cr, rr := c.rates, ref.rates
					cr.on, cr.off, rr.on, rr.off = 0, 0, 0, 0 // the trace's means over the cells
					if cr != rr || !reflect.DeepEqual(c.level, ref.level) || !reflect.DeepEqual(c.geneLevel, ref.geneLevel) {
						t.Fatalf("sweep %d: rates %+v, reference %+v (or the levels differ)", sweep, c.rates, ref.rates)
					}
					for _, k := range c.geneLevel {
						moved = moved || k != c.geneLevel[0]
					}
				}
				if !moved {
					t.Error("every gene kept one level: the test exercises no per-gene gain")
				}
			})
		}
	}
}

// refGeneSweep is one sweep of the likelihood with per-cell and per-gene
// levels written plainly: U then Z, every conditional counted entry by
// entry over the observed entries the code alone decides (its ones, its
// zeros, and the summed levels of its ones' cells and genes) and put
// together as the sampler's conditionals do, then the cells' levels from
// the per-cell counts of the final state and, from schedule.genesFrom on, the
// genes' from the per-gene counts after the U step (the sampler's own
// updates, which TestGeneLevelUpdate and depth_test.go check).
func refGeneSweep(s *Sampler, c *chain, z, u [][]bool, x, obs [][]bool, seed uint64, sweep int) {
	L := len(z[0])
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
	key := streamKey(seed, sweep, stepU)
	for d := range u {
		one := r.lift0 + r.geneLift(c.geneLevel[d])
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
			cond := float64(one*float64(ones)) + float64(r.step*float64(lev)) + float64(zero*float64(zeros))
			flip(u[d], l, cond+s.logitU[l], key, d)
		}
	}
	genes := make([]uint64, len(u))
	xt, obsT := transpose(x), transpose(obs)
	for d := range u {
		// The gene's row: its codes, with the cells' usage as the columns'.
		genes[d] = packCounts(refMismatch(u[d], z, xt[d], obsT[d]))
	}
	key = streamKey(seed, sweep, stepZ)
	for n := range z {
		one := r.lift(c.level[n]) + r.gene0
		for l := range L {
			var ones, zeros, lev int
			for d := range u {
				if u[d][l] && obs[n][d] && alone(z[n], u[d], l) {
					if x[n][d] {
						ones++
						lev += int(c.geneLevel[d])
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
		s.updateGeneLevels(c, genes)
	}
}

// transpose returns the transpose of a rectangular [][]bool.
func transpose(m [][]bool) [][]bool {
	out := make([][]bool, len(m[0]))
	for j := range out {
		out[j] = make([]bool, len(m))
		for i := range m {
			out[j][i] = m[i][j]
		}
	}
	return out
}

// TestGeneLevelUpdate checks the genes' levels set from per-gene counts: a
// gene whose uncovered entries hold more ones sits at a level no higher
// (a smaller gain); the offsets are calibrated so that the uncovered
// entries expect as many ones as they hold; every entry's gain stays at
// least minLift; and a gene covered in every cell keeps the pooled
// background's level.
func TestGeneLevelUpdate(t *testing.T) {
	t.Parallel()
	const n, d = 1000, 200
	x := NewMatrix(n, d)
	data, err := NewData(x, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Noise, cfg.CellLevels, cfg.GeneLevels, cfg.Starts = Dropout, 8, 8, 1
	s, err := NewSampler(context.Background(), data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := s.chains[0]
	c.rates = rates{rho: 0.4, lift0: 1.5, step: 0.3}
	// Gene j ≥ 1: uncovered in 600 cells, 3j ones among them (a rate of
	// j/200); gene 0 covered everywhere.
	counts := make([]uint64, d)
	for j := range d {
		unc, uncOnes := int64(600), int64(3*j)
		if j == 0 {
			unc = 0
		}
		covOnes := int64(n) - unc - 100 // 100 covered zeros
		s.geneOnes[j], s.geneObs[j] = int32(uncOnes+covOnes), n
		// miss = covered zeros + uncovered ones; covered = n − unc.
		counts[j] = packCounts(100+uncOnes, int64(n)-unc)
	}
	s.updateGeneLevels(c, counts)
	for j := 2; j < d; j++ {
		if c.geneLevel[j] > c.geneLevel[j-1] {
			t.Errorf("gene %d (more uncovered ones) at level %d above gene %d's %d", j, c.geneLevel[j], j-1, c.geneLevel[j-1])
		}
	}
	if c.geneLevel[1] == c.geneLevel[d-1] {
		t.Errorf("genes 1 and %d, backgrounds far apart, share level %d", d-1, c.geneLevel[1])
	}
	var ones, all float64
	for j := 1; j < d; j++ {
		miss, covered := splitCounts(counts[j])
		ones += float64(miss - 100)
		all += float64(n - covered)
	}
	pooled := (ones + 0.5) / (all + 1)
	ref := gainOf(pooled, c.rates.rho)
	expect := 0.0
	for j := 1; j < d; j++ {
		_, covered := splitCounts(counts[j])
		expect += float64(n-covered) * levelBackground(c.rates.rho, max(ref+c.rates.geneLift(c.geneLevel[j]), minLift))
	}
	if math.Abs(expect-ones) > 1e-3*ones {
		t.Errorf("uncovered entries expect %.3f ones, hold %.0f", expect, ones)
	}
	if g := c.rates.lift0 + c.rates.gene0; g < minLift-1e-12 {
		t.Errorf("smallest gain %v below %v", g, minLift)
	}
	// Gene 0, covered everywhere, sits with the genes whose uncovered
	// entries hold ones at the pooled rate (gene j's rate is j/200).
	near := int(math.Round(pooled * 200))
	if k, want := int(c.geneLevel[0]), int(c.geneLevel[near]); k < want-1 || k > want+1 {
		t.Errorf("gene 0, covered everywhere, at level %d; gene %d, uncovered at the pooled rate, at %d", k, near, want)
	}
}

// TestLevelsNeedTheirLikelihood: per-gene levels without per-cell levels,
// and per-cell levels under the Symmetric likelihood, are ignored, as a
// fit's configuration says; levels that are not a power of two up to 8
// are refused.
func TestLevelsNeedTheirLikelihood(t *testing.T) {
	data := tinyData(t, [][]bool{{true}}, [][]bool{{true}})
	for _, tc := range []struct {
		noise                      Noise
		cell, gene                 int
		wantCellBits, wantGeneBits int
	}{
		{Dropout, 0, 4, 0, 0},
		{Dropout, 1, 8, 0, 0},
		{Dropout, 2, 4, 1, 2},
		{Dropout, 8, 0, 3, 0},
		{Symmetric, 8, 8, 0, 0},
	} {
		cfg := DefaultConfig()
		cfg.L, cfg.Noise, cfg.CellLevels, cfg.GeneLevels = 1, tc.noise, tc.cell, tc.gene
		s, err := NewSampler(context.Background(), data, cfg)
		if err != nil {
			t.Errorf("%v, %d cell and %d gene levels: %v", tc.noise, tc.cell, tc.gene, err)
			continue
		}
		if s.cfg.CellLevelBits != tc.wantCellBits || s.cfg.GeneLevelBits != tc.wantGeneBits {
			t.Errorf("%v, %d cell and %d gene levels: %d and %d level bits, want %d and %d", tc.noise, tc.cell, tc.gene,
				s.cfg.CellLevelBits, s.cfg.GeneLevelBits, tc.wantCellBits, tc.wantGeneBits)
		}
	}
	for _, bad := range [][2]int{{3, 0}, {16, 0}, {2, 6}, {-1, 0}} {
		cfg := DefaultConfig()
		cfg.L, cfg.Noise, cfg.CellLevels, cfg.GeneLevels = 1, Dropout, bad[0], bad[1]
		if _, err := NewSampler(context.Background(), data, cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%d cell and %d gene levels: %v, want ErrConfig", bad[0], bad[1], err)
		}
	}
}
