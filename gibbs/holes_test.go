package gibbs

import (
	"context"
	"fmt"
	"reflect"
	"testing"
)

// TestHolesScansMatchMask checks that a step's scans over listed holes
// (Data.Holes: the data read as observed, the holes taken back out) give
// every row the sums, summed levels and counts of the scans that read the
// mask: for every kernel, one segment and several, Z and U steps, rows
// scanned with and without their ones' levels, random active and wanted
// codes, the housekeeping code folded. The samplers first run a few
// sweeps side by side, which must leave them in one state, so that the
// cells' and genes' levels vary.
func TestHolesScansMatchMask(t *testing.T) {
	t.Parallel()
	p := newPlanted(13, 300, 200, 3, 0.1, 0.05)
	mask := randomMatrix(&testRNG{s: 4}, 300, 200, 0.9, 0)
	for _, seg := range []int{0, 64} {
		data, err := NewData(p.noisy, mask, seg)
		if err != nil {
			t.Fatal(err)
		}
		holed := data
		if holed.Holes, err = NewHoles(context.Background(), data, 3); err != nil {
			t.Fatal(err)
		}
		if got, want := holed.Holes.Len(), int64(300*200-mask.Count()); got != want {
			t.Fatalf("%d holes listed, the mask leaves out %d", got, want)
		}
		for _, L := range []int{2, 3, 5} {
			for _, kernel := range Kernels() {
				t.Run(fmt.Sprintf("seg%d/L%d/%s", seg, L, kernel), func(t *testing.T) {
					cfg := DefaultConfig()
					cfg.L, cfg.Noise, cfg.CellLevels, cfg.GeneLevels = L, Dropout, 8, 8
					cfg.Housekeeping, cfg.Kernel, cfg.Workers, cfg.Init = true, kernel, 2, InitData
					cfg.BurnIn, cfg.Samples, cfg.Starts = 6, 2, 1
					var s [2]*Sampler
					for k, d := range []Data{data, holed} {
						if s[k], err = NewSampler(context.Background(), d, cfg); err != nil {
							t.Fatal(err)
						}
						for range 5 {
							if _, err := s[k].Step(); err != nil {
								t.Fatal(err)
							}
						}
					}
					c0, c1 := s[0].chains[0], s[1].chains[0]
					if !reflect.DeepEqual(c0.z, c1.z) || !reflect.DeepEqual(c0.u, c1.u) || !reflect.DeepEqual(c0.geneLevel, c1.geneLevel) {
						t.Fatal("five sweeps over the mask and over the holes end in different states")
					}
					varied := false
					for _, k := range c0.geneLevel {
						varied = varied || k != c0.geneLevel[0]
					}
					if !varied {
						t.Fatal("every gene at one level: the test checks no summed level")
					}
					for _, cells := range []bool{true, false} {
						checkHoleScans(t, s[0], s[1], cells)
					}
				})
			}
		}
	}
}

// checkHoleScans compares the scans of every row of a step (the Z step
// when cells) of sampler a, which reads the mask, and b, which lists the
// holes.
func checkHoleScans(t *testing.T, a, b *Sampler, cells bool) {
	t.Helper()
	var sp [2]stepSpec
	for k, s := range []*Sampler{a, b} {
		c := s.chains[0]
		if cells {
			sp[k] = s.zStep(c, 1)
		} else {
			sp[k] = s.uStep(c, 1)
		}
		s.setLikelihood(&sp[k], c)
		s.prepareStep(&sp[k])
	}
	if sp[0].holes != nil || sp[1].holes == nil || sp[1].mask != nil {
		t.Fatal("the mask's step lists holes, or the holes' step reads a mask")
	}
	if sp[0].lift == nil {
		t.Fatal("the step has no level planes: the test checks no summed level")
	}
	r := &testRNG{s: 5}
	bufs := [2]*rowScratch{a.scratchFor(0), b.scratchFor(0)}
	for trial := range 6 {
		for i0 := 0; i0 < sp[0].rows; i0 += rowGroup {
			n := min(rowGroup, sp[0].rows-i0)
			var act, want [rowGroup]uint64
			for k := range n {
				act[k], want[k] = r.next()&(1<<uint(a.l)-1), r.next()&sp[0].live
			}
			var got [2][rowGroup]rowState
			for v := range 2 {
				rows := bufs[v].rows[:n]
				for k := range rows {
					rows[k] = rowState{a: act[k], want: want[k], lifted: trial%2 == 1}
				}
				sp[v].scan(bufs[v], i0, rows, 1<<uint(n)-1)
				copy(got[v][:], rows)
			}
			for k := range n {
				g, w := got[1][k], got[0][k]
				if g.acc != w.acc || g.lev != w.lev || g.counts != w.counts {
					t.Fatalf("cells=%v, row %d, codes %b, wanted %b, levels summed %v: holes give sums %v, levels %v, counts %x; the mask %v, %v, %x",
						cells, i0+k, act[k], want[k], g.lifted, g.acc[:a.l], g.lev[:a.l], g.counts, w.acc[:a.l], w.lev[:a.l], w.counts)
				}
			}
		}
	}
}

// TestHolesRunsMatchMask runs whole fits over the mask and over its
// listed holes, with the moves and likelihoods the scans serve: swaps of
// cells and genes, held parameters (whose log-likelihood follows the
// flips' summed levels), samples (whose U step reads the mask), the
// symmetric likelihood; each must give the same digest.
func TestHolesRunsMatchMask(t *testing.T) {
	t.Parallel()
	x, _, data, cells := sampleTestData(t, 21, []int{150, 130}, 180, true, 64)
	holed := data
	var err error
	if holed.Holes, err = NewHoles(context.Background(), data, 2); err != nil {
		t.Fatal(err)
	}
	if holed.Holes.Len() == 0 {
		t.Fatal("the mask leaves nothing out")
	}
	for _, tc := range []struct {
		name string
		set  func(*Config)
	}{
		{"swaps, held", func(c *Config) {
			c.Noise, c.CellLevels, c.GeneLevels, c.Housekeeping = Dropout, 8, 8, true
			c.Swaps, c.GeneSwaps, c.HoldFrom = true, true, 4
		}},
		{"samples", func(c *Config) {
			c.Noise, c.CellLevels, c.GeneLevels, c.Housekeeping = Dropout, 8, 8, true
			c.CellSamples, c.HoldFrom = cells, 4
		}},
		{"symmetric", func(c *Config) { c.Noise = Symmetric }},
	} {
		for _, kernel := range Kernels() {
			t.Run(tc.name+"/"+kernel, func(t *testing.T) {
				t.Parallel()
				cfg := DefaultConfig()
				cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.StartSweeps = 4, 8, 6, 2, 2
				cfg.Workers, cfg.Init, cfg.Kernel, cfg.Seed = 2, InitData, kernel, 9
				tc.set(&cfg)
				var digests [2]string
				for k, d := range []Data{data, holed} {
					s, err := NewSampler(context.Background(), d, cfg)
					if err != nil {
						t.Fatal(err)
					}
					res, err := ranResult(s.Run(context.Background(), nil), s.Result)
					if err != nil {
						t.Fatal(err)
					}
					digests[k] = runDigest(s, res)
				}
				if digests[0] != digests[1] {
					t.Errorf("%d × %d: over the holes digest %s, over the mask %s", x.Rows(), x.Cols(), digests[1], digests[0])
				}
			})
		}
	}
}
