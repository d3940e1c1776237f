package gibbs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"time"
)

// ErrDone is returned by Step when every configured sweep has been run.
var ErrDone = errors.New("gibbs: sampler has run all its sweeps")

// Phase tells whether a sweep belongs to the burn-in or to the sampling phase.
type Phase uint8

const (
	// BurnIn sweeps are discarded.
	BurnIn Phase = iota
	// Sample sweeps are averaged (every Thin-th one).
	Sample
)

// String returns "burn-in" or "sample".
func (p Phase) String() string {
	if p == BurnIn {
		return "burn-in"
	}
	return "sample"
}

// SweepStats describes one completed sweep (a Z step, a U step and the λ
// update). During a multi-start phase it describes the chain with the highest
// log-likelihood after that sweep.
type SweepStats struct {
	Sweep  int   // 0-based index of the sweep
	Phase  Phase // burn-in or sample
	Chains int   // number of chains advanced in this sweep (Starts during the multi-start phase, else 1)
	// Lambda is λ after the update (Symmetric; NaN under Dropout).
	Lambda float64
	// Dropout and Background are the rates after the update: P(x = 0 |
	// covered) and P(x = 1 | not covered); under Symmetric both are σ(−λ).
	Dropout, Background float64
	LogLik              float64 // log p(X_obs | Z, U, λ) of the state after the sweep, at the reported λ
	Accuracy            float64 // fraction of observed entries the state's Boolean product predicts correctly
	Flips               int64   // accepted flips of z_nl and u_ld in this sweep
	Seconds             float64 // wall-clock time of the sweep; the only field that is not reproducible
}

// chain is the state of one Markov chain. Z and U are stored transposed and
// interleaved by word: z[w*L+l] holds bits 64w … 64w+63 of column l of Z
// (cells), u[w*L+l] the same for U (genes). Bits past N (or D) are zero.
type chain struct {
	seed  uint64
	rates rates
	z, u  []uint64
	// level holds each cell's background level and liftPlanes its bits
	// over the cells (with per-cell levels only; depth.go).
	level      []uint8
	liftPlanes [][]uint64
	liftBlock  []uint64 // the planes' storage (setLiftPlanes)
}

// Sampler runs the OrMachine's Metropolised Gibbs sampler over Data. It is not
// safe for concurrent use; its methods must be called from one goroutine.
type Sampler struct {
	data     Data
	cfg      Config
	n, d, l  int
	nw, dw   int // words per bitset of cells and of genes
	workers  int
	logitZ   []float64
	logitU   []float64
	observed int64  // observed entries
	obsOnes  int64  // observed ones
	start    rates  // the likelihood's parameters of every chain's first sweep
	clamped  uint64 // codes every cell uses (z fixed at 1)
	// cellOnes and cellObs count each cell's observed ones and entries
	// (with per-cell levels only).
	cellOnes, cellObs []int32
	cellStep          []uint64      // the Z step's per-cell counts (cellCountBuf)
	ones              []uint64      // all-ones mask words for unmasked data
	vector            bool          // use the vector kernel (Config.Kernel)
	kernel            vectorKernel  // the vector kernel's variant
	planes            []uint64      // code-major copy of a step's column codes, for the vector kernel
	zeros             []uint64      // zero words, as many as the longest column segment (stepTotals)
	scratch           []*rowScratch // per worker, reused from step to step

	sweep    int
	chains   []*chain
	zCount   []uint32 // zCount[n*L+l]: retained samples with z_nl = 1
	uCount   []uint32 // uCount[d*L+l]: retained samples with u_ld = 1
	retained int
	kept     []keptSample
	trace    []SweepStats
}

// keptSample is one retained state, for sample-averaged prediction.
type keptSample struct {
	rates rates
	level []uint8 // with per-cell levels
	z, u  []uint64
}

// NewSampler checks data against cfg and returns a Sampler at sweep 0 with
// its chains initialised uniformly at random from cfg.Seed.
func NewSampler(data Data, cfg Config) (*Sampler, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if data.X == nil || data.XT == nil {
		return nil, fmt.Errorf("%w: X and XT are required", ErrShape)
	}
	if (data.Mask == nil) != (data.MaskT == nil) {
		return nil, fmt.Errorf("%w: Mask and MaskT must both be set or both be nil", ErrShape)
	}
	n, d := data.X.Rows(), data.X.Cols()
	if n < 1 || d < 1 {
		return nil, fmt.Errorf("%w: X is %d × %d", ErrShape, n, d)
	}
	if err := checkMatrix("X", data.X, n, d); err != nil {
		return nil, err
	}
	if err := checkMatrix("XT", data.XT, d, n); err != nil {
		return nil, err
	}
	if data.Mask != nil {
		if err := checkMatrix("Mask", data.Mask, n, d); err != nil {
			return nil, err
		}
		if err := checkMatrix("MaskT", data.MaskT, d, n); err != nil {
			return nil, err
		}
		if !equalInts(data.Mask.Segments(), data.X.Segments()) || !equalInts(data.MaskT.Segments(), data.XT.Segments()) {
			return nil, fmt.Errorf("%w: masks must have the segments of X and XT", ErrShape)
		}
	}
	workers := cfg.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ones, onesT := countOnes(data.X, data.Mask, workers), countOnes(data.XT, data.MaskT, workers)
	if ones != onesT {
		return nil, fmt.Errorf("%w: X has %d observed ones but XT has %d: XT is not the transpose of X", ErrShape, ones, onesT)
	}
	s := &Sampler{data: data, cfg: cfg, n: n, d: d, l: cfg.L, nw: (n + 63) / 64, dw: (d + 63) / 64}
	s.observed = int64(n) * int64(d)
	if data.Mask != nil {
		s.observed = countOnes(data.Mask, nil, workers)
		if t := countOnes(data.MaskT, nil, workers); t != s.observed {
			return nil, fmt.Errorf("%w: Mask has %d observed entries but MaskT has %d", ErrShape, s.observed, t)
		}
	}
	s.ones = make([]uint64, max(s.nw, s.dw))
	for i := range s.ones {
		s.ones[i] = ^uint64(0)
	}
	density := 0.0
	if s.observed > 0 {
		density = float64(ones) / float64(s.observed)
	}
	s.logitZ = cfg.PriorZ.logits(cfg.L, density)
	s.logitU = cfg.PriorU.logits(cfg.L, density)
	s.obsOnes = ones
	s.start = initialRates(&s.cfg, density)
	if cfg.Housekeeping {
		s.clamped = 1 << uint(cfg.L-1)
	}
	if cfg.CellLevelBits > 0 {
		s.cellOnes, s.cellObs = rowCounts(data.X, data.Mask, n, d)
	}
	s.vector, s.kernel = kernelNamed(cfg.Kernel)
	s.workers = workers
	s.trace = make([]SweepStats, 0, min(s.Sweeps(), 1<<16))
	if cfg.KeepSamples {
		s.kept = make([]keptSample, 0, min(cfg.Samples/cfg.Thin, 1<<16))
	}
	s.zCount = make([]uint32, n*cfg.L)
	s.uCount = make([]uint32, d*cfg.L)
	for c := range cfg.Starts {
		s.chains = append(s.chains, s.newChain(chainSeed(cfg.Seed, c)))
	}
	return s, nil
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// newChain returns a chain initialised as cfg.Init says, keyed by seed.
// With per-cell levels, whose sweeps update U first, a chain seeded with
// codes and no usage (InitData, InitCluster) then takes one Z step given
// those codes, so that its first U step sees cells using them.
func (s *Sampler) newChain(seed uint64) *chain {
	c := s.seedChain(seed)
	if s.cfg.CellLevelBits > 0 {
		s.initialLevels(c)
		if s.cfg.Init != InitRandom {
			z := stepSpec{rows: s.n, own: c.z, other: c.u, m: s.data.X, mask: s.data.Mask,
				logit: s.logitZ, key: streamKey(seed, 0, stepInitZ), fixed: s.clamped}
			s.setLikelihood(&z, c)
			s.runStep(&z)
		}
	}
	return c
}

// seedChain returns a chain with Z and U as cfg.Init says, keyed by seed.
func (s *Sampler) seedChain(seed uint64) *chain {
	c := &chain{seed: seed, rates: s.start, z: make([]uint64, s.nw*s.l), u: make([]uint64, s.dw*s.l)}
	defer s.clamp(c)
	switch s.cfg.Init {
	case InitData:
		s.seedCodes(c, streamKey(seed, 0, stepInit))
		return c
	case InitCluster:
		s.seedClusters(c, streamKey(seed, 0, stepInit))
		return c
	}
	fill := func(dst []uint64, rows int, key uint64) {
		for i := range dst {
			w := bitsAt(key, uint64(i))
			if r := rows - i/s.l*64; r < 64 {
				w &= 1<<uint(r) - 1
			}
			dst[i] = w
		}
	}
	fill(c.z, s.n, streamKey(seed, 0, stepInit))
	fill(c.u, s.d, streamKey(seed, 1, stepInit))
	return c
}

// clamp sets the clamped codes of every cell of c on.
func (s *Sampler) clamp(c *chain) {
	for m := s.clamped; m != 0; m &= m - 1 {
		l := bits.TrailingZeros64(m)
		for w := range s.nw {
			c.z[w*s.l+l] = ^uint64(0)
		}
		if r := s.n % 64; r != 0 {
			c.z[(s.nw-1)*s.l+l] = 1<<uint(r) - 1
		}
	}
}

// seedCandidates is the number of random cells InitData examines per code.
const seedCandidates = 16

// seedCodes seeds the codes of c.u from cells. For code l it draws
// seedCandidates cells with key and counts each one's observed ones not yet
// covered by codes 0 … l−1 ("fresh" ones); it takes the first candidate whose
// fresh count reaches the candidates' mean, which skips cells that express
// little beyond noise, and sets code l to that cell's fresh ones, so that a
// cell using several programs does not seed a union of earlier codes.
func (s *Sampler) seedCodes(c *chain, key uint64) {
	b := s.data.X.Segments()
	covered := make([]uint64, s.dw)
	row := make([]uint64, s.dw)
	load := func(n int) {
		for seg := 0; seg+1 < len(b); seg++ {
			x := s.data.X.Segment(n, seg)
			for k, w := range x {
				if s.data.Mask != nil {
					w &= s.data.Mask.Segment(n, seg)[k]
				}
				row[b[seg]/64+k] = w
			}
		}
	}
	var cand [seedCandidates]int
	var fresh [seedCandidates]int
	for l := range s.l {
		total := 0
		for k := range cand {
			cand[k] = int(bitsAt(key, uint64(l*seedCandidates+k)) % uint64(s.n))
			load(cand[k])
			fresh[k] = 0
			for w, x := range row {
				fresh[k] += bits.OnesCount64(x &^ covered[w])
			}
			total += fresh[k]
		}
		k := 0
		for k+1 < len(cand) && fresh[k]*len(cand) < total {
			k++
		}
		load(cand[k])
		for w, x := range row {
			c.u[w*s.l+l] = x &^ covered[w]
			covered[w] |= x
		}
	}
}

// Sweep returns the number of completed sweeps.
func (s *Sampler) Sweep() int { return s.sweep }

// Sweeps returns the total number of sweeps, BurnIn + Samples.
func (s *Sampler) Sweeps() int { return s.cfg.BurnIn + s.cfg.Samples }

// Trace returns the statistics of the completed sweeps. The caller must not
// modify the returned slice.
func (s *Sampler) Trace() []SweepStats { return s.trace }

// Run runs the remaining sweeps, calling onSweep (if not nil) after each, and
// returns the posterior summary. Cancellation of ctx is checked between
// sweeps: Run then returns ctx.Err() and the sampler is left at a sweep
// boundary, ready to be marshalled or run again. An error from onSweep stops
// the run the same way and is returned wrapped.
func (s *Sampler) Run(ctx context.Context, onSweep func(SweepStats) error) (*Result, error) {
	for s.sweep < s.Sweeps() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st, err := s.Step()
		if err != nil {
			return nil, err
		}
		if onSweep != nil {
			if err := onSweep(st); err != nil {
				return nil, fmt.Errorf("gibbs: sweep %d callback: %w", st.Sweep, err)
			}
		}
	}
	return s.Result()
}

// Step runs one sweep: a Z step, a U step and the λ update on every chain,
// then the multi-start selection or the posterior accumulation that falls due.
// It returns ErrDone after the last sweep.
func (s *Sampler) Step() (SweepStats, error) {
	if s.sweep >= s.Sweeps() {
		return SweepStats{}, ErrDone
	}
	start := time.Now()
	st := SweepStats{Sweep: s.sweep, Phase: BurnIn, Chains: len(s.chains)}
	if s.sweep >= s.cfg.BurnIn {
		st.Phase = Sample
	}
	lead := 0
	for ci, c := range s.chains {
		cs := s.sweepChain(c, s.sweep)
		if ci == 0 || cs.LogLik > st.LogLik {
			lead = ci
			st.Lambda, st.Dropout, st.Background = cs.Lambda, cs.Dropout, cs.Background
			st.LogLik, st.Accuracy, st.Flips = cs.LogLik, cs.Accuracy, cs.Flips
		}
	}
	s.sweep++
	if len(s.chains) > 1 && s.sweep >= s.cfg.StartSweeps {
		s.chains = []*chain{s.chains[lead]}
	}
	if s.sweep > s.cfg.BurnIn && (s.sweep-s.cfg.BurnIn)%s.cfg.Thin == 0 {
		s.accumulate(s.chains[0])
	}
	st.Seconds = time.Since(start).Seconds()
	s.trace = append(s.trace, st)
	return st, nil
}

// accumulate adds the state of c to the posterior counts.
func (s *Sampler) accumulate(c *chain) {
	s.retained++
	addCounts(s.zCount, c.z, s.l)
	addCounts(s.uCount, c.u, s.l)
	if s.cfg.KeepSamples {
		s.kept = append(s.kept, keptSample{
			rates: c.rates,
			level: slices.Clone(c.level),
			z:     append([]uint64(nil), c.z...),
			u:     append([]uint64(nil), c.u...),
		})
	}
}

// addCounts adds 1 to count[i*L+l] for every set bit i of code l in the
// interleaved bitsets words.
func addCounts(count []uint32, words []uint64, L int) {
	for k, w := range words {
		base, l := k/L*64, k%L
		for ; w != 0; w &= w - 1 {
			count[(base+bits.TrailingZeros64(w))*L+l]++
		}
	}
}

// stepSpec describes one step: the rows to update (cells or genes), their own
// codes, the other factor's codes and the data in the rows' orientation.
type stepSpec struct {
	rows   int
	own    []uint64 // codes of the rows, interleaved (written)
	other  []uint64 // codes of the columns, interleaved (read-only)
	m      BitMatrix
	mask   BitMatrix // nil: all observed
	bounds []int
	ones   []uint64
	logit  []float64
	// lik holds the rates of the step's likelihood; one and zero are the
	// log-likelihood gains of covering an observed one and zero.
	lik       rates
	one, zero float64
	symmetric bool // compute the conditional as the paper does, λ·(2·ones − entries)
	// With per-cell levels: in the Z step, each row's (cell's) level and
	// the gain of an observed one at each level; in the U step, the levels'
	// bit planes over the columns (cells), and the gain of level 0 and the
	// step between levels in lik.
	rowLevel   []uint8
	levelOne   [1 << MaxCellLevelBits]float64
	lift       [][]uint64
	liftBlock  []uint64 // lift's storage, liftStride words a plane (setLiftPlanes)
	liftStride int
	// rowCounts, when not nil, receives each row's counts after the step
	// (packCounts: mispredicted, covered).
	rowCounts []uint64
	key       uint64
	L         int
	fixed     uint64 // codes the step leaves as they are (the Z step's clamped codes)
	// live holds the codes whose bitset in other is not empty. A code with
	// an empty one covers no column: its conditional sum is 0, it adds
	// nothing to a row's coverage, and flipping it changes no other code's
	// sum, so the kernel neither sums it nor re-scans a row after its flip.
	live uint64
	// planes, when not nil, holds other code-major for the vector kernel: word w
	// of code l is planes[l*stride+w].
	planes []uint64
	stride int
	kernel vectorKernel
	// totals, when not nil, caches Σ popcount(S_l) per set of active codes
	// (fully observed data; see startTotals); segWords holds the
	// words of each column segment and zeros as many zero words as the
	// longest, for computing them.
	totals   *stepTotals
	segWords []int
	zeros    []uint64
}

// rowStats are the integer totals of a step; integers keep them independent
// of the number of workers. miss and covered count the observed entries that
// the state after the step mispredicts and covers.
type rowStats struct{ flips, miss, covered int64 }

// add adds a row's counts (packed by packCounts) and flips.
func (t *rowStats) add(counts uint64, flips int64) {
	miss, covered := splitCounts(counts)
	t.flips += flips
	t.miss += miss
	t.covered += covered
}

// sweepChain runs one sweep of c and updates its likelihood's parameters.
func (s *Sampler) sweepChain(c *chain, sweep int) SweepStats {
	if s.cfg.CellLevelBits > 0 {
		return s.sweepLevels(c, sweep)
	}
	z := stepSpec{rows: s.n, own: c.z, other: c.u, m: s.data.X, mask: s.data.Mask,
		logit: s.logitZ, key: streamKey(c.seed, sweep, stepZ), fixed: s.clamped}
	s.setLikelihood(&z, c)
	zs := s.runStep(&z)
	u := stepSpec{rows: s.d, own: c.u, other: c.z, m: s.data.XT, mask: s.data.MaskT,
		logit: s.logitU, key: streamKey(c.seed, sweep, stepU)}
	s.setLikelihood(&u, c)
	us := s.runStep(&u)
	// The U step leaves the state of the sweep: its rows' counts are the
	// counts of that state.
	t := tally{observed: s.observed, ones: s.obsOnes, covered: us.covered, miss: us.miss}
	c.rates = s.cfg.Noise.update(t, c.rates, s.cfg.FixLambda)
	st := SweepStats{Sweep: sweep, Lambda: math.NaN(), Dropout: 1 - c.rates.on, Background: c.rates.off,
		Flips: zs.flips + us.flips, LogLik: s.cfg.Noise.logLik(t, c.rates)}
	if s.cfg.Noise == Symmetric {
		st.Lambda = c.rates.lambda
	}
	if s.observed > 0 {
		st.Accuracy = float64(s.observed-us.miss) / float64(s.observed)
	}
	return st
}

// sweepLevels is sweepChain with per-cell levels: a U step, then a Z step
// whose per-cell counts (the sweep's final state) set the levels and rates.
func (s *Sampler) sweepLevels(c *chain, sweep int) SweepStats {
	u := stepSpec{rows: s.d, own: c.u, other: c.z, m: s.data.XT, mask: s.data.MaskT,
		logit: s.logitU, key: streamKey(c.seed, sweep, stepU)}
	s.setLikelihood(&u, c)
	us := s.runStep(&u)
	z := stepSpec{rows: s.n, own: c.z, other: c.u, m: s.data.X, mask: s.data.Mask,
		logit: s.logitZ, key: streamKey(c.seed, sweep, stepZ), fixed: s.clamped}
	s.setLikelihood(&z, c)
	z.rowCounts = s.cellCountBuf()
	zs := s.runStep(&z)
	st := SweepStats{Sweep: sweep, Lambda: math.NaN(), Flips: zs.flips + us.flips,
		LogLik: s.updateLevels(c, z.rowCounts, s.cfg.FixLambda)}
	c.rates.on, c.rates.off = s.meanRates(c)
	st.Dropout, st.Background = 1-c.rates.on, c.rates.off
	if s.observed > 0 {
		st.Accuracy = float64(s.observed-zs.miss) / float64(s.observed)
	}
	return st
}

// cellCountBuf returns a buffer for the Z step's per-cell counts, reused
// from sweep to sweep.
func (s *Sampler) cellCountBuf() []uint64 {
	if len(s.cellStep) != s.n {
		s.cellStep = make([]uint64, s.n)
	}
	return s.cellStep
}

// meanRates returns P(x = 1 | covered) and P(x = 1 | not covered) averaged
// over the cells, for the trace.
func (s *Sampler) meanRates(c *chain) (on, off float64) {
	byLevel := make([]float64, s.levels())
	for _, k := range c.level {
		byLevel[k]++
	}
	for k, n := range byLevel {
		b := levelBackground(c.rates.rho, c.rates.lift(uint8(k)))
		on += n * (1 - c.rates.rho*(1-b))
		off += n * b
	}
	return on / float64(s.n), off / float64(s.n)
}

// setLikelihood gives sp the likelihood of chain c: its rates, and with
// per-cell levels the Z step's gain per row or the U step's lift planes.
func (s *Sampler) setLikelihood(sp *stepSpec, c *chain) {
	r := c.rates
	sp.lik, sp.symmetric = r, s.cfg.Noise == Symmetric
	sp.one, sp.zero = r.gains()
	if s.cfg.CellLevelBits == 0 {
		return
	}
	sp.zero = math.Log(r.rho)
	if sp.m == s.data.X {
		for k := range s.levels() {
			sp.levelOne[k] = r.lift(uint8(k))
		}
		sp.rowLevel = c.level
		return
	}
	sp.lift, sp.liftBlock, sp.liftStride = c.liftPlanes, c.liftBlock, s.nw
}

// mleLambda returns λ maximising σ(λ)^P σ(−λ)^(obs−P) over λ ≥ 0, with
// σ(λ) = P/obs clamped to [1/2, 1 − 1/(2·obs)]: λ is finite when every entry
// is predicted correctly, and 0 (the data carry no signal) when at most half
// are. Without observed entries λ is left unchanged.
func mleLambda(correct, observed int64, old float64) float64 {
	if observed == 0 {
		return old
	}
	p := float64(correct) / float64(observed)
	p = min(max(p, 0.5), 1-0.5/float64(observed))
	return math.Log(p) - math.Log1p(-p)
}

// logLik returns P·log σ(λ) + (obs−P)·log σ(−λ).
func logLik(correct, observed int64, lambda float64) float64 {
	// log σ(λ) = −softplus(−λ); softplus(t) = max(t, 0) + log1p(e^−|t|).
	sp := math.Log1p(math.Exp(-math.Abs(lambda)))
	logPos := -(max(-lambda, 0) + sp)
	logNeg := -(max(lambda, 0) + sp)
	// The conversions forbid fusing into FMAs (GOAMD64=v3, arm64), which
	// would change the last bit of the result with the build.
	return float64(float64(correct)*logPos) + float64(float64(observed-correct)*logNeg)
}

// runStep updates every row of sp, in parallel over blocks of 64-row words.
func (s *Sampler) runStep(sp *stepSpec) rowStats {
	sp.bounds = sp.m.Segments()
	sp.ones = s.ones
	sp.L = s.l
	sp.live = liveCodes(sp.other, s.l)
	if s.vector {
		s.planes = codeMajor(s.planes, sp.other, s.l)
		sp.planes, sp.stride, sp.kernel = s.planes, len(sp.other)/s.l, s.kernel
	}
	if sp.lift == nil {
		s.startTotals(sp)
	}
	words := (sp.rows + 63) / 64
	w := min(s.workers, words)
	if w <= 1 {
		return sp.rowsRange(s.scratchFor(0), 0, words)
	}
	res := make([]rowStats, w)
	var wg sync.WaitGroup
	for k := range w {
		lo, hi := k*words/w, (k+1)*words/w
		buf := s.scratchFor(k)
		wg.Go(func() { res[k] = sp.rowsRange(buf, lo, hi) })
	}
	wg.Wait()
	var tot rowStats
	for _, r := range res {
		tot.flips += r.flips
		tot.miss += r.miss
		tot.covered += r.covered
	}
	return tot
}

// scratchFor returns worker k's scratch space, kept from step to step: it
// holds a vector-kernel state per row of a group (tens of KiB), which
// zeroing afresh each step would cost more than a small step's work.
func (s *Sampler) scratchFor(k int) *rowScratch {
	for len(s.scratch) <= k {
		s.scratch = append(s.scratch, new(rowScratch))
	}
	return s.scratch[k]
}

// rowsRange updates rows 64·w0 … 64·w1−1 with scratch space buf. Rows
// sharing a word of own are updated by one call, so no two goroutines write
// the same word.
func (sp *stepSpec) rowsRange(buf *rowScratch, w0, w1 int) rowStats {
	var tot rowStats
	L := sp.L
	for w := w0; w < w1; w++ {
		ow := sp.own[w*L : w*L+L]
		for i0 := w * 64; i0 < min(w*64+64, sp.rows); i0 += rowGroup {
			rows := buf.rows[:min(rowGroup, sp.rows-i0)]
			for k := range rows {
				r, bit := &rows[k], uint((i0+k)%64)
				r.a, r.want, r.next, r.flips = 0, sp.live&^sp.fixed, 0, 0
				for l, word := range ow {
					r.a |= (word >> bit & 1) << uint(l)
				}
				clear(r.acc[:L])
				clear(r.lev[:L])
			}
			sp.updateRows(buf, i0, rows)
			for k := range rows {
				r, bit := &rows[k], uint((i0+k)%64)
				tot.add(r.counts, r.flips)
				if sp.rowCounts != nil {
					sp.rowCounts[i0+k] = r.counts
				}
				for l := range ow {
					ow[l] = ow[l]&^(1<<bit) | (r.a>>uint(l)&1)<<bit
				}
			}
		}
	}
	return tot
}

// rowGroup is the number of rows updated together. Their scans walk the
// column segments in order, each segment for all the rows in turn: the
// rows' words of a segment lie side by side in a tiled file (the U step's
// Xᵀ has one tile per cell block), and the segment's column codes stay in
// cache for the whole group. Rows are independent given the column codes,
// and every draw is keyed by its variable, so the grouping changes no
// result. It divides 64.
const rowGroup = 16

// rowState is a row of a group being updated.
type rowState struct {
	acc   [MaxL]uint64 // counts of the codes still to be decided (packCounts: ones, entries)
	lev   [MaxL]uint64 // with lift planes: the summed level of those ones (condSumsLift)
	a     uint64       // current codes
	want  uint64       // codes whose sums the next scan adds to acc
	next  int          // next code to decide
	flips int64        // accepted flips
	// counts holds the observed entries that a mispredicts and covers
	// (packCounts), as of the last scan.
	counts uint64
	// tot, when not nil during a scan, holds Σ popcount(S_l) of the row's
	// active codes (from stepTotals): the kernel then leaves it out.
	tot *[MaxL]int64
}

// rowScratch is a worker's scratch space.
type rowScratch struct {
	rows  [rowGroup]rowState
	vec   vecScratch
	vrows [rowGroup]vecRow           // the rows' vector-kernel state, when sp.planes is set
	lift  [MaxCellLevelBits][]uint64 // a segment's lift planes
	tot   vecRow                     // a row of zeros, for computing stepTotals
}

// updateRows proposes to flip each code of rows i0 … i0+len(rows)−1 in
// turn. A row's codes are decided in order, each over complete sums: a scan
// of all the pending rows, then decisions until a row's coverage changes,
// which leaves that row pending for the next scan.
func (sp *stepSpec) updateRows(buf *rowScratch, i0 int, rows []rowState) {
	pending := uint64(1)<<uint(len(rows)) - 1
	for pending != 0 {
		sp.scan(buf, i0, rows, pending)
		var again uint64
		for p := pending; p != 0; p &= p - 1 {
			k := bits.TrailingZeros64(p)
			if sp.decide(&rows[k], i0+k) {
				again |= 1 << uint(k)
			}
		}
		pending = again
	}
}

// decide proposes to flip the codes of row i from r.next on, and reports
// whether it stopped at a flip that changed the row's coverage, whose later
// codes then need a new scan (and the mispredictions too, even when no code
// is left).
//
// The logit of the full conditional of code l being on is
// c = λ·acc[l] + logit(p_l) (eq. update_z of the paper); the flip of the
// current value is accepted with probability min(1, e^c) from off to on and
// min(1, e^−c) from on to off (Metropolised Gibbs).
func (sp *stepSpec) decide(r *rowState, i int) bool {
	L := sp.L
	for l := r.next; l < L; l++ {
		if sp.fixed>>uint(l)&1 != 0 {
			continue
		}
		c := sp.conditional(r, l, i) + sp.logit[l]
		if r.a>>uint(l)&1 != 0 {
			c = -c
		}
		if c >= 0 || accept(c, uniformAt(sp.key, uint64(i)*uint64(L)+uint64(l))) {
			r.a ^= 1 << uint(l)
			r.flips++
			if sp.live>>uint(l)&1 != 0 {
				clear(r.acc[l+1 : L])
				clear(r.lev[l+1 : L])
				r.want, r.next = sp.live&^sp.fixed&^(2<<uint(l)-1), l+1
				return true
			}
		}
	}
	return false
}

// conditional returns the log-likelihood gain of switching code l of row i
// on, from the counts of the observed ones and entries that it alone
// decides (r.acc[l], packCounts) and, with lift planes, their summed level.
func (sp *stepSpec) conditional(r *rowState, l, i int) float64 {
	ones, all := splitCounts(r.acc[l])
	switch {
	case sp.symmetric:
		// The paper's accumulator, rounded as before the rates existed.
		return float64(sp.lik.lambda * float64(2*ones-all))
	case sp.rowLevel != nil:
		return float64(sp.levelOne[sp.rowLevel[i]]*float64(ones)) + float64(sp.zero*float64(all-ones))
	case sp.lift != nil:
		return float64(sp.lik.lift0*float64(ones)) + float64(sp.lik.step*float64(r.lev[l])) +
			float64(sp.zero*float64(all-ones))
	}
	return float64(sp.one*float64(ones)) + float64(sp.zero*float64(all-ones))
}

// accept reports whether u < e^c for c < 0 and u a multiple of 2⁻⁵³ in
// [0, 1). Most proposals are refused, and e^c is rarely needed to see it:
// with k = c·log₂e, e^c ≤ 2^⌈k⌉ (and math.Exp is within an ulp of it), so
// u ≥ 2^(⌈k⌉+1) refuses; the margin of one covers the rounding of k. e^c is
// computed only for u below that bound, which has probability below 4e^c.
// Below c = −37.5, e^c < 2⁻⁵³, so only u = 0 can pass and e^c need not be
// computed (it is, to honour e^c = 0 far below).
func accept(c, u float64) bool {
	if k := c * math.Log2E; k > -1000 && u >= math.Float64frombits(uint64(1024+int64(k))<<52) {
		return false // int64(k) = ⌈k⌉ for k ≤ 0
	}
	if c < -37.5 {
		return u == 0 && math.Exp(c) > 0
	}
	return u < math.Exp(c)
}

// scan adds to the accumulators of the pending rows (bit k: row i0+k) the
// sums of their wanted codes and sets their mispredicted observed entries.
func (sp *stepSpec) scan(buf *rowScratch, i0 int, rows []rowState, pending uint64) {
	L := sp.L
	vec := sp.planes != nil
	for p := pending; p != 0; p &= p - 1 {
		k := bits.TrailingZeros64(p)
		r := &rows[k]
		r.counts, r.tot = 0, nil
		if sp.totals != nil {
			r.tot = sp.totals.get(sp, buf, r.a&sp.live)
		}
		if vec {
			// Codes with an empty bitset cover nothing.
			buf.vrows[k].prepare(r.a&sp.live, r.want, sp.stride)
			if r.tot != nil {
				buf.vrows[k].setTotals(r.tot)
			}
		}
	}
	for seg := 0; seg+1 < len(sp.bounds); seg++ {
		off := sp.bounds[seg] / 64
		for p := pending; p != 0; p &= p - 1 {
			k := bits.TrailingZeros64(p)
			r := &rows[k]
			x := sp.m.Segment(i0+k, seg)
			obs := sp.ones
			if sp.mask != nil {
				obs = sp.mask.Segment(i0+k, seg)
			}
			if vec {
				if sp.mask == nil {
					obs = nil
				}
				if sp.lift != nil {
					r.counts += buf.vrows[k].scanLift(sp.kernel, &buf.vec, sp.planes[off:], x, obs, sp.liftBlock[off:], sp.liftStride)
				} else {
					r.counts += buf.vrows[k].scan(sp.kernel, &buf.vec, sp.planes[off:], x, obs)
				}
			} else if sp.lift != nil {
				for j, p := range sp.lift {
					buf.lift[j] = p[off : off+len(x)]
				}
				r.counts += condSumsLift(&r.acc, &r.lev, r.a&sp.live, r.want, L, sp.other[off*L:(off+len(x))*L], x, obs, buf.lift[:len(sp.lift)])
			} else {
				r.counts += condSumsMode(&r.acc, r.a&sp.live, r.want, L, sp.other[off*L:(off+len(x))*L], x, obs, r.tot == nil)
			}
		}
	}
	for p := pending; p != 0; p &= p - 1 {
		k := bits.TrailingZeros64(p)
		r := &rows[k]
		switch {
		case vec:
			buf.vrows[k].add(&r.acc, &r.lev)
		case r.tot != nil:
			for m := r.want; m != 0; m &= m - 1 {
				l := bits.TrailingZeros64(m)
				r.acc[l] += packCounts(0, r.tot[l])
			}
		}
	}
}

// liveCodes returns the set of codes (bit l) whose bitset in the interleaved
// codes is not empty.
func liveCodes(codes []uint64, L int) uint64 {
	var live uint64
	for w := 0; w < len(codes); w += L {
		for l, c := range codes[w : w+L] {
			if c != 0 {
				live |= 1 << uint(l)
			}
		}
	}
	return live
}

// codeMajor returns the interleaved codes (word w of code l at w*L+l) laid out
// code-major (at l*words+w), in buf when it is large enough.
func codeMajor(buf, codes []uint64, L int) []uint64 {
	words := len(codes) / L
	if cap(buf) < len(codes) {
		buf = make([]uint64, len(codes))
	}
	buf = buf[:len(codes)]
	for l := range L {
		p := buf[l*words : (l+1)*words]
		for w := range p {
			p[w] = codes[w*L+l]
		}
	}
	return buf
}
