package gibbs

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"testing"
)

// runDigest returns a SHA-256 of everything reproducible about a run: the
// trace (without wall-clock seconds), the final codes and λ, and the
// posterior counts.
func runDigest(s *Sampler, res *Result) string {
	h := sha256.New()
	put := func(v uint64) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	for _, st := range res.Trace {
		put(uint64(st.Sweep))
		put(math.Float64bits(st.Lambda))
		put(math.Float64bits(st.LogLik))
		put(uint64(st.Flips))
	}
	c := s.chains[0]
	put(math.Float64bits(c.rates.lambda))
	for _, w := range c.z {
		put(w)
	}
	for _, w := range c.u {
		put(w)
	}
	for _, n := range s.zCount {
		put(uint64(n))
	}
	for _, n := range s.uCount {
		put(uint64(n))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestSweepDigestsPinned pins the exact output of fixed small runs, recorded
// before the kernel was vectorised: any change of the random streams, the
// order of decisions or the arithmetic of the conditionals changes a digest.
// The runs cover unmasked and masked data, several segmentations, worker
// counts and the initialisations (the cell-type start recorded before its
// starts were seeded side by side); each runs with the vector kernel (where
// the build and CPU have it) and with the Go kernel. The digests also hold
// with GOAMD64=v3, whose FMAs must not change a result.
func TestSweepDigestsPinned(t *testing.T) {
	t.Parallel()
	cases := []pinCase{
		{700, 300, 2, 0, 1, false, InitData, "de5f223b175c4ed4f71a26e37d2c7cf7b012686f776135b10e95bc31f3ae9df5"},
		{700, 300, 5, 128, 2, false, InitData, "b2833de22d2c3dba722fc65343eb632763071288a772e00ec388dc06c77b6ef1"},
		{700, 300, 10, 0, 3, true, InitData, "4a1619f0e04a6012f707ef33f231b01b02930a08440c8ed4ea0d7b05e272549b"},
		{1100, 600, 5, 576, 2, true, InitRandom, "dfda9d004ae1e4c41c2b82a8d449ab7affa7273246a74c9dba1d9f9b5a6cc489"},
		{900, 1000, 10, 64, 1, false, InitRandom, "dd89111ddbafaff66420ed6d81a07436f63837feb98af2e23bd6a4e0cf68232c"},
		{513, 130, 3, 192, 7, true, InitData, "f6ac2bd150cb80804fea669430a4eec0814932bdb3e2e7d361c7d160b40b076a"},
		{800, 400, 6, 128, 3, true, InitCluster, "02743aaf2d2f1a03396fb35452045bb929a8cde699e8796b7f919ae4042d4db3"},
	}
	for _, tc := range cases {
		tc.run(t, pinData{programs: tc.L, noise: 0.02, observed: 0.85}, func(cfg *Config) {
			cfg.L, cfg.Seed = tc.L, 42
			cfg.PriorZ, cfg.PriorU = EmpiricalPrior(), EmpiricalPrior()
		})
	}
}

// pinCase is one pinned run: n × d planted data with L codes, cut in
// segments of seg rows (0: one), fitted by workers goroutines from init;
// want is the digest of its result (runDigest) with every kernel.
type pinCase struct {
	n, d, L, seg, workers int
	masked                bool
	init                  Init
	want                  string
}

// pinData is the planted data of a pinCase: programs codes, entries
// flipped with probability noise, and where masked a fraction observed of
// the entries observed.
type pinData struct {
	programs        int
	noise, observed float64
}

// run fits tc's data with a short run's settings, which configure
// completes, with every kernel this CPU runs (the default, the other
// assembly variants and the Go kernel), and compares each digest with
// tc.want, in a parallel subtest.
func (tc pinCase) run(t *testing.T, data pinData, configure func(*Config)) {
	name := fmt.Sprintf("%dx%d/L%d/seg%d/w%d/masked=%v/init%d", tc.n, tc.d, tc.L, tc.seg, tc.workers, tc.masked, tc.init)
	t.Run(name, func(t *testing.T) {
		t.Parallel()
		p := newPlanted(uint64(tc.n+tc.d+tc.L), tc.n, tc.d, data.programs, 0.1, data.noise)
		var mask BitMatrix
		if tc.masked {
			mask = randomMatrix(&testRNG{s: uint64(tc.n)}, tc.n, tc.d, data.observed, 0)
		}
		d, err := NewData(p.noisy, mask, tc.seg)
		if err != nil {
			t.Fatal(err)
		}
		cfg := DefaultConfig()
		cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.StartSweeps = 8, 6, 2, 3
		cfg.Workers, cfg.Init = tc.workers, tc.init
		configure(&cfg)
		for _, kernel := range Kernels() {
			cfg.Kernel = kernel
			s, err := NewSampler(context.Background(), d, cfg)
			if err != nil {
				t.Fatal(err)
			}
			res, err := ranResult(s.Run(context.Background(), nil), s.Result)
			if err != nil {
				t.Fatal(err)
			}
			if got := runDigest(s, res); got != tc.want {
				t.Errorf("%s, kernel %s: digest %s, want %s", name, kernel, got, tc.want)
			}
		}
	})
}

// TestStepTotalsFull runs a pinned case with the kernels that take Σ
// popcount(S) from a stepTotals (the Go kernel, and the assembly ones that
// can where the CPU has them), with a cache that fills after one entry
// per step (most rows then sum it themselves, beside rows that take it
// from the cache) and with room for every active set: both must give the
// pinned digest. Not parallel: it lowers the package's cache bounds.
func TestStepTotalsFull(t *testing.T) {
	defer func(p, m int) { totalsPerRows, maxTotals = p, m }(totalsPerRows, maxTotals)
	const want = "dd89111ddbafaff66420ed6d81a07436f63837feb98af2e23bd6a4e0cf68232c" // 900×1000, L 10, seg 64, 1 worker
	p := newPlanted(900+1000+10, 900, 1000, 10, 0.1, 0.02)
	data, err := NewData(p.noisy, nil, 64)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.StartSweeps = 10, 8, 6, 2, 3
	cfg.Workers, cfg.Init, cfg.Seed = 1, InitRandom, 42
	cfg.PriorZ, cfg.PriorU = EmpiricalPrior(), EmpiricalPrior()
	kernels := []string{goKernel}
	for _, k := range vectorKernels {
		if k.hasSumsX() {
			kernels = append(kernels, k.name)
		}
	}
	for _, k := range kernels {
		for _, room := range []int{1, 1 << 20} {
			totalsPerRows, maxTotals = 1<<30, room
			if room > 1 {
				totalsPerRows = 1
			}
			cfg.Kernel = k
			s, err := NewSampler(context.Background(), data, cfg)
			if err != nil {
				t.Fatal(err)
			}
			res, err := ranResult(s.Run(context.Background(), nil), s.Result)
			if err != nil {
				t.Fatal(err)
			}
			if got := runDigest(s, res); got != want {
				t.Errorf("kernel %q, cache room %d: digest %s, want %s", k, room, got, want)
			}
		}
	}
}
