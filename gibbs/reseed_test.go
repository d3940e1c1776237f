package gibbs

import (
	"context"
	"fmt"
	"testing"
)

// overlapping is planted data of the kind whose programs a chain loses
// (VALIDATION.md): L programs each holding a gene with probability
// codeDensity and used by a cell with probability usage, independently,
// so that cells use none, one or several; each bit flipped with
// probability flip.
type overlapping struct {
	z, u  [][]bool // cells × L, genes × L
	noisy *Matrix
}

func newOverlapping(seed uint64, n, d, L int, codeDensity, usage, flip float64) *overlapping {
	r := &testRNG{s: seed}
	p := &overlapping{z: make([][]bool, n), u: make([][]bool, d), noisy: NewMatrix(n, d)}
	for i := range p.z {
		p.z[i] = make([]bool, L)
		for l := range L {
			p.z[i][l] = r.bern(usage)
		}
	}
	for j := range p.u {
		p.u[j] = make([]bool, L)
		for l := range L {
			p.u[j][l] = r.bern(codeDensity)
		}
	}
	for i := range n {
		for j := range d {
			v := false
			for l := range L {
				v = v || p.z[i][l] && p.u[j][l]
			}
			p.noisy.Set(i, j, v != r.bern(flip))
		}
	}
	return p
}

// setState sets chain c's Z and U: z[n][l] and u[d][l], where l < len of
// the row (the other codes are left empty).
func setState(s *Sampler, c *chain, z, u [][]bool) {
	clear(c.z)
	clear(c.u)
	for n, row := range z {
		for l, on := range row {
			if on {
				c.z[n/64*s.l+l] |= 1 << uint(n%64)
			}
		}
	}
	for d, row := range u {
		for l, on := range row {
			if on {
				c.u[d/64*s.l+l] |= 1 << uint(d%64)
			}
		}
	}
}

// column returns the bits of code l of interleaved words over rows rows.
func codeBits(words []uint64, rows, L, l int) []bool {
	out := make([]bool, rows)
	for i := range out {
		out[i] = words[i/64*L+l]>>uint(i%64)&1 == 1
	}
	return out
}

// jaccard of two bit vectors (1 when both are empty).
func jaccard(a, b []bool) float64 {
	inter, union := 0, 0
	for i := range a {
		if a[i] && b[i] {
			inter++
		}
		if a[i] || b[i] {
			union++
		}
	}
	if union == 0 {
		return 1
	}
	return float64(inter) / float64(union)
}

// TestReseedTakesLostProgram puts a chain in the states that lose a
// planted program: an idle code beside codes that hold the other programs
// (one planted program unexplained), or beside a code that holds two
// programs merged. Five sweeps leave the program lost; one re-seeding
// before them must give the idle code genes (a planted program's, or the
// merged code's share of one), and after the five sweeps every planted
// program must be a code's (Jaccard ≥ 0.9), with per-cell levels too,
// whose Z step after a re-seeding gives the idle code its cells. A state
// that explains every program leaves nothing to re-seed: the idle code of
// L = 5 stays empty.
func TestReseedTakesLostProgram(t *testing.T) {
	t.Parallel()
	const n, d, L = 900, 400, 4
	p := newOverlapping(21, n, d, L, 0.29, 0.29, 0.05)
	data, err := NewData(p.noisy, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	// worst is the smallest, over the planted programs, of the best
	// Jaccard index of a program's genes with a code of c.
	worst := func(s *Sampler, c *chain) float64 {
		w := 1.0
		for l := range L {
			genes := make([]bool, d)
			for g := range d {
				genes[g] = p.u[g][l]
			}
			best := 0.0
			for k := range s.l {
				best = max(best, jaccard(codeBits(c.u, d, s.l, k), genes))
			}
			w = min(w, best)
		}
		return w
	}
	// lose returns the planted rows with code 3 dropped, or merged into
	// code 2.
	lose := func(rows [][]bool, merge bool) [][]bool {
		out := make([][]bool, len(rows))
		for i, r := range rows {
			out[i] = []bool{r[0], r[1], r[2] || merge && r[3]}
		}
		return out
	}
	cases := []struct {
		name   string
		L      int
		merge  bool
		levels int
		trap   bool // the five sweeps alone leave the program lost
	}{
		{"one program unexplained", L, false, 0, true},
		{"two programs merged in one code", L, true, 0, true},
		// The U step that starts a sweep with levels gives the idle
		// code, which no cell uses, genes by the prior's coin; here they
		// happen to draw the program's cells.
		{"one program unexplained, dropout with 8 cell levels", L, false, 3, false},
		{"two programs merged in one code, dropout with 8 cell levels", L, true, 3, true},
		{"every program explained, an idle fifth code", L + 1, false, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, reseed := range []bool{false, true} {
				cfg := DefaultConfig()
				// Five burn-in sweeps: the sampler looks for no idle code
				// itself.
				cfg.L, cfg.BurnIn, cfg.Samples, cfg.Seed, cfg.Starts, cfg.Workers = tc.L, 5, 1, 7, 1, 2
				cfg.PriorU, cfg.PriorZ = EmpiricalPrior(), EmpiricalPrior()
				if tc.levels > 0 {
					cfg.Noise, cfg.CellLevels = Dropout, 1<<tc.levels
				}
				s, err := NewSampler(context.Background(), data, cfg)
				if err != nil {
					t.Fatal(err)
				}
				c := s.chains[0]
				if tc.L > L {
					setState(s, c, p.z, p.u)
				} else {
					setState(s, c, lose(p.z, tc.merge), lose(p.u, tc.merge))
				}
				idle := uint64(1) << uint(tc.L-1)
				if got := s.idleCodes(c); got != idle {
					t.Fatalf("idle codes %b, want %b", got, idle)
				}
				explained := tc.L > L
				if reseed {
					if got := s.reseed(c, 1); got == explained {
						t.Fatalf("re-seeding changed a code: %v, want %v", got, !explained)
					}
				}
				for range 5 {
					if _, err := s.Step(); err != nil {
						t.Fatal(err)
					}
				}
				w := worst(s, c)
				t.Logf("re-seeded %v: worst program's best Jaccard %.3f", reseed, w)
				switch {
				case explained && (w < 0.9 || s.idleCodes(c) != idle):
					t.Errorf("re-seeded %v: worst Jaccard %.3f, idle codes %b: the explained state moved", reseed, w, s.idleCodes(c))
				case !explained && reseed && w < 0.9:
					t.Errorf("re-seeded: a program is still lost (worst Jaccard %.3f)", w)
				case tc.trap && !reseed && w >= 0.9:
					t.Errorf("without re-seeding the lost program came back (worst Jaccard %.3f): the state is no trap", w)
				}
			}
		})
	}
}

// reseedConfig is a fit whose chain re-seeds an idle code during its
// burn-in on newPlanted(11, 450, 300, 4, 0.4, 0.08): the fit's model
// (dropout noise with cell and gene levels, a housekeeping code, the
// cell-type start) at L = 5.
func reseedConfig() Config {
	cfg := DefaultConfig()
	cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers = 5, 12, 4, 1, 2
	cfg.Init, cfg.Noise, cfg.Housekeeping, cfg.CellLevels, cfg.GeneLevels = InitCluster, Dropout, true, 8, 4
	cfg.KeepSamples = true
	return cfg
}

// TestReseedIsReproducible runs a chain that re-seeds (it differs from the
// same chain without re-seeding) with 1, 2 and 7 workers, as 2 and 3
// processes of a partitioned fit, and resumed from a checkpoint before
// and after the re-seeding: every run must be bit-identical. A checkpoint
// of a chain without re-seeding does not restore into one with it.
func TestReseedIsReproducible(t *testing.T) {
	t.Parallel()
	const n = 450
	p := newPlanted(11, n, 300, 4, 0.4, 0.08)
	data, err := NewData(p.noisy, nil, 64)
	if err != nil {
		t.Fatal(err)
	}
	cfg := reseedConfig()
	off := cfg
	off.Reseed = false
	cfg.Reseed = true
	base, baseRes := runAll(t, data, cfg)
	plain, plainRes := runAll(t, data, off)
	if runDigest(base, baseRes) == runDigest(plain, plainRes) {
		t.Fatal("the chain does not re-seed: the test checks nothing")
	}
	for _, w := range []int{1, 7} {
		c := cfg
		c.Workers = w
		s, res := runAll(t, data, c)
		sameRun(t, fmt.Sprintf("%d workers", w), base, s, baseRes, res)
	}
	for _, bounds := range [][]int{{0, 192, n}, {0, 64, 320, n}} {
		ss, rs := runParts(t, data, cfg, bounds)
		sameRun(t, fmt.Sprintf("%d processes", len(ss)), base, ss[0].part.whole, baseRes, rs[0])
	}
	for _, stop := range []int{1, 2, 7} {
		state := stateAfter(t, data, cfg, stop)
		b, res := resumed(t, data, cfg, state)
		sameRun(t, fmt.Sprintf("resumed after sweep %d", stop), base, b, baseRes, res)
		if stop == 1 {
			c, err := NewSampler(context.Background(), data, off)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.UnmarshalBinary(state); err == nil {
				t.Error("a re-seeding chain's checkpoint restored into a chain without re-seeding")
			}
		}
	}
}

// TestReseedOnlyInBurnIn checks the schedule: two looks reseedEvery
// sweeps apart, the first once the multi-start phase has kept its chain
// (before sweep 1 with one start), while reseedEvery burn-in sweeps
// follow; none without Reseed.
func TestReseedOnlyInBurnIn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		burnIn, starts, startSweeps int
		reseed                      bool
		want                        []int
	}{
		{25, 4, 5, true, []int{5, 10}},    // scpipe fit's defaults
		{50, 4, 5, true, []int{5, 10}},    // issue 28's planted fits
		{100, 4, 10, true, []int{10, 15}}, // DefaultConfig with Reseed
		{12, 1, 0, true, []int{1, 6}},
		{14, 4, 5, true, []int{5}},
		{5, 1, 0, true, nil},
		{6, 1, 0, true, []int{1}},
		{25, 4, 5, false, nil},
	} {
		sc := newSchedule(config{Config: Config{BurnIn: tc.burnIn, Starts: tc.starts, StartSweeps: tc.startSweeps, Reseed: tc.reseed}})
		var got []int
		for sweep := range tc.burnIn + 10 {
			if sc.reseedBefore(sweep) {
				got = append(got, sweep)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("burn-in %d, %d starts of %d sweeps, reseed %v: looks before sweeps %v, want %v",
				tc.burnIn, tc.starts, tc.startSweeps, tc.reseed, got, tc.want)
		}
	}
}

// TestReseedDigestPinned pins a run that re-seeds (reseedConfig), with
// every kernel this CPU runs: a change to the moves, their order or
// their draws changes the digest, and must be made on purpose.
func TestReseedDigestPinned(t *testing.T) {
	t.Parallel()
	const want = "d222c6a646bda4e524ca85a65e39999abad811ea0bc4ec184ecc6d0e57604952"
	p := newPlanted(11, 450, 300, 4, 0.4, 0.08)
	data, err := NewData(p.noisy, nil, 64)
	if err != nil {
		t.Fatal(err)
	}
	cfg := reseedConfig()
	cfg.Reseed = true
	for _, kernel := range Kernels() {
		cfg.Kernel = kernel
		s, res := runAll(t, data, cfg)
		if got := runDigest(s, res); got != want {
			t.Errorf("kernel %s: digest %s, want %s", kernel, got, want)
		}
	}
}
