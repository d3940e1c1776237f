package gibbs

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"time"
)

// errDone is returned by Step when every configured sweep has been run.
var errDone = errors.New("gibbs: sampler has run all its sweeps")

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
	// Layers holds, for a sweep of a LayersSampler, the statistics of
	// the layers swept, from the lowest; the fields above but Sweep,
	// Phase and Seconds are then zero. Nil for a single layer.
	Layers []SweepStats
}

// chain is the state of one Markov chain. Z and U are stored transposed and
// interleaved by word: z[w*L+l] holds bits 64w … 64w+63 of column l of Z
// (cells), u[w*L+l] the same for U (genes). Bits past N (or D) are zero.
// A process of a partitioned fit holds only its own cells' words of z
// and their levels (from its first cell, a multiple of 64: part.go).
type chain struct {
	seed  uint64
	rates rates
	z, u  []uint64
	// level holds each cell's background level and liftPlanes its bits
	// over the cells (with per-cell levels only; depth.go).
	level      []uint8
	liftPlanes [][]uint64
	liftBlock  []uint64 // the planes' storage (setLiftPlanes)
	// geneLevel holds each gene's level and genePlanes its bits over the
	// genes (with per-gene levels only; genelevels.go).
	geneLevel  []uint8
	genePlanes [][]uint64
	geneBlock  []uint64
	// With samples (cellsamples.go) geneLevel holds each sample's levels,
	// sample s's at s·D + d, and samplePlanes[s] their planes
	// (genePlanes is sample 0's).
	samplePlanes [][][]uint64
	sampleBlocks [][]uint64
	// heldBase is the log-likelihood of the state with nothing covered,
	// and coveredLev the summed gene level of its covered ones, once the
	// parameters are held (held; heldLogLik): set on the first held sweep
	// and after a restore, then followed flip by flip.
	heldBase   float64
	coveredLev int64
	held       bool
}

// Sampler runs the OrMachine's Metropolised Gibbs sampler over Data. It is not
// safe for concurrent use; its methods must be called from one goroutine.
type Sampler struct {
	data     Data
	cfg      config
	n, d, l  int
	nw, dw   int   // words per bitset of cells and of genes
	cnw      int   // words per bitset of the cells this process holds (nw without a part)
	part     *part // this process's cells of a partitioned fit (part.go); nil: all
	workers  int
	logitZ   []float64
	logitU   []float64
	observed int64  // observed entries
	obsOnes  int64  // observed ones
	start    rates  // the likelihood's parameters of every chain's first sweep
	clamped  uint64 // codes every cell uses (z fixed at 1)
	// fixedU holds the codes of U held fixed (Config.FixedCodes), and
	// uFixed their words, interleaved as chain.u (zero elsewhere).
	fixedU uint64
	uFixed []uint64
	// cellOnes and cellObs count each cell's observed ones and entries
	// (with per-cell levels only).
	cellOnes, cellObs []int32
	cellStep          []uint64 // the Z step's per-cell counts (cellCountBuf)
	// gains holds the levels' update's per-cell gains (updateLevels),
	// kept from sweep to sweep: made afresh, they were the sweep's only
	// garbage the size of the cells (10 MB at 1.3 million cells), which
	// let the heap grow to twice its live size between collections.
	gains []float64
	// near holds the keys of orderStats's narrowed ranks, kept likewise.
	near []uint64
	// geneWork holds the genes' levels' update's per-gene work
	// (updateGeneLevels), kept from sweep to sweep for the same reason.
	geneWork struct {
		genes       []levelCounts
		dev, sorted []float64
	}
	// geneOnes and geneObs count each gene's observed ones and entries,
	// and geneStep holds the U step's per-gene counts (with per-gene levels
	// only).
	geneOnes, geneObs []int32
	geneStep          []uint64
	ones              []uint64      // all-ones mask words for unmasked data
	vector            bool          // use the vector kernel (Config.Kernel)
	kernel            vectorKernel  // the vector kernel's variant
	planes            []uint64      // code-major copy of a step's column codes, for the vector kernel
	zeros             []uint64      // zero words, as many as the longest column segment (stepTotals)
	scratch           []*rowScratch // per worker, reused from step to step
	// above and aboveGain give the Z step the likelihood of Z as the data
	// of a layer above (layers.go): above holds that layer's Boolean
	// product, interleaved like a chain's z, and aboveGain its λ.
	above     []uint64
	aboveGain float64
	// hkOnes and hkObs count each gene's observed ones and entries over
	// the process's cells, for the U step's housekeeping code
	// (foldHousekeeping; with one only).
	hkOnes, hkObs []int32
	// smp holds the samples of the cells, when the likelihood knows them
	// (cellsamples.go).
	smp *sampleModel
	// smScans is the split–merge launch's restricted scans (smLaunchScans;
	// a test's own), and smBuf the moves' buffers (splitmerge.go).
	smScans int
	smBuf   struct {
		lp   []float64
		pick []uint8
		lev  []int64
	}

	sweep    int
	sched    schedule // when the burn-in's parts happen (schedule.go)
	burnIn   int      // the burn-in's length so far: BurnIn, or more until the chain settles (settle.go)
	chains   []*chain
	zCount   []uint32 // zCount[(n−first)*L+l]: retained samples with z_nl = 1, over s.cellRange
	uCount   []uint32 // uCount[d*L+l]: retained samples with u_ld = 1
	retained int
	kept     []keptSample
	trace    []SweepStats
}

// keptSample is one retained state, for sample-averaged prediction.
type keptSample struct {
	rates     rates
	level     []uint8 // with per-cell levels
	geneLevel []uint8 // with per-gene levels
	z, u      []uint64
}

// NewSampler checks data against cfg and returns a Sampler at sweep 0 with
// its cfg.Starts chains initialised as cfg.Init says (a fair coin for every
// bit, codes seeded from cells, or codes seeded from cell types), each
// keyed by a seed derived from cfg.Seed (the first by cfg.Seed itself).
// Seeding the starts stops when ctx is done (a start's clustering runs to
// its end), and NewSampler then returns ctx.Err().
func NewSampler(ctx context.Context, data Data, cfg Config) (*Sampler, error) {
	return newSampler(ctx, data, cfg, nil)
}

// newSampler is NewSampler, for the cells of p when it is not nil
// (PartSampler).
func newSampler(ctx context.Context, data Data, given Config, p *Part) (*Sampler, error) {
	cfg, err := given.resolve()
	if err != nil {
		return nil, err
	}
	if data.X == nil || data.XT == nil {
		return nil, fmt.Errorf("%w: X and XT are required", errShape)
	}
	if (data.Mask == nil) != (data.MaskT == nil) {
		return nil, fmt.Errorf("%w: Mask and MaskT must both be set or both be nil", errShape)
	}
	n, d := data.X.Rows(), data.X.Cols()
	if n < 1 || d < 1 {
		return nil, fmt.Errorf("%w: X is %d × %d", errShape, n, d)
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
			return nil, fmt.Errorf("%w: masks must have the segments of X and XT", errShape)
		}
	}
	workers := cfg.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	s := &Sampler{data: data, cfg: cfg, n: n, d: d, l: cfg.L, nw: (n + 63) / 64, dw: (d + 63) / 64, burnIn: cfg.BurnIn,
		sched: newSchedule(cfg), smScans: smLaunchScans}
	counts, err := s.countData(data, workers, p, cfg.CellLevelBits > 0)
	if err != nil {
		return nil, err
	}
	ones := counts.ones
	s.observed = counts.observed
	first, last := s.cellRange()
	s.cnw = (last+63)/64 - first/64
	// The longest segment a step reads is of genes or of the process's
	// cells.
	s.ones = make([]uint64, max(s.cnw, s.dw))
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
	s.start = initialRates(&s.cfg.Config, density)
	if cfg.Housekeeping {
		s.clamped = 1 << uint(cfg.L-1)
	}
	if err := s.setFixedCodes(); err != nil {
		return nil, err
	}
	if cfg.CellLevelBits > 0 {
		s.cellOnes, s.cellObs = counts.cellOnes, counts.cellObs
	}
	if cfg.GeneLevelBits > 0 {
		s.countGenes()
	}
	if err := s.setSamples(p); err != nil {
		return nil, err
	}
	if cfg.GeneSwaps && p != nil {
		return nil, fieldError("GeneSwaps", "= true: gene swaps need every cell in one process")
	}
	if cfg.SplitMerge > 0 && (p != nil || s.smp != nil) {
		return nil, fieldError("SplitMerge", "= %d: split–merge moves need every cell in one process and no samples' gene levels", cfg.SplitMerge)
	}
	if cfg.Housekeeping {
		s.countHousekeeping()
	}
	s.vector, s.kernel = kernelNamed(cfg.Kernel)
	s.workers = workers
	s.trace = make([]SweepStats, 0, min(s.Sweeps(), 1<<16))
	if cfg.KeepSamples {
		s.kept = make([]keptSample, 0, min(cfg.Samples/cfg.Thin, 1<<16))
	}
	s.zCount = make([]uint32, (last-first)*cfg.L)
	s.uCount = make([]uint32, d*cfg.L)
	if cfg.Params != nil {
		if err := s.checkParams(cfg.Params); err != nil {
			return nil, err
		}
	}
	chains, err := s.seedStarts(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range chains {
		s.chains = append(s.chains, s.newChain(c))
	}
	if s.part != nil && s.part.err != nil {
		return nil, s.part.err
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

// newChain finishes the chain c that seedChain seeded (its Z and U as
// cfg.Init says, keyed by its seed). With per-cell levels, whose sweeps update U first, a chain seeded with
// codes and no usage (InitData, InitCluster) then takes one Z step given
// those codes, so that its first U step sees cells using them.
func (s *Sampler) newChain(c *chain) *chain {
	seed := c.seed
	if s.cfg.CellLevelBits > 0 {
		s.initialLevels(c)
		if s.cfg.GeneLevelBits > 0 {
			s.initialGeneLevels(c)
		}
		if s.cfg.Params != nil {
			s.giveParams(c, s.cfg.Params)
		}
		if s.cfg.Init != InitRandom {
			z := s.zStep(c, streamKey(seed, 0, stepInitZ))
			s.setLikelihood(&z, c)
			s.runStep(&z)
		}
	}
	return c
}

// seedChain returns a chain with Z and U as cfg.Init says, keyed by seed.
func (s *Sampler) seedChain(seed uint64) *chain {
	c := &chain{seed: seed, rates: s.start, z: make([]uint64, s.cnw*s.l), u: make([]uint64, s.dw*s.l)}
	defer s.clamp(c)
	switch s.cfg.Init {
	case InitData:
		s.seedCodes(c, streamKey(seed, 0, stepInit))
		return c
	case InitCluster:
		s.seedClusters(c, streamKey(seed, 0, stepInit))
		return c
	}
	// dst holds the words from word w0 of each code: a coin per bit keyed
	// by its word in the whole bitset.
	fill := func(dst []uint64, w0, rows int, key uint64) {
		for i := range dst {
			w := bitsAt(key, uint64(w0*s.l+i))
			if r := rows - (w0+i/s.l)*64; r < 64 {
				w &= 1<<uint(r) - 1
			}
			dst[i] = w
		}
	}
	first, _ := s.cellRange()
	fill(c.z, first/64, s.n, streamKey(seed, 0, stepInit))
	fill(c.u, 0, s.d, streamKey(seed, 1, stepInit))
	return c
}

// clamp sets the clamped codes of every cell of c on, and c's fixed codes.
func (s *Sampler) clamp(c *chain) {
	s.fixCodes(c.u)
	_, last := s.cellRange()
	for m := s.clamped; m != 0; m &= m - 1 {
		l := bits.TrailingZeros64(m)
		for w := range s.cnw {
			c.z[w*s.l+l] = ^uint64(0)
		}
		if r := s.n % 64; r != 0 && last == s.n {
			c.z[(s.cnw-1)*s.l+l] = 1<<uint(r) - 1
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
	covered := make([]uint64, s.dw)
	// The candidates depend on the key alone: their rows are read at once
	// (from every process of a partitioned fit).
	cells := make([]int, s.l*seedCandidates)
	for i := range cells {
		cells[i] = int(bitsAt(key, uint64(i)) % uint64(s.n))
	}
	rows := s.cellRows(cells)
	var row []uint64
	load := func(i int) { row = rows[i] }
	var cand [seedCandidates]int
	var fresh [seedCandidates]int
	for w := range len(s.uFixed) / max(s.l, 1) {
		for _, f := range s.uFixed[w*s.l : w*s.l+s.l] {
			covered[w] |= f // the fixed codes' genes are taken
		}
	}
	for l := range s.l {
		if s.fixedU>>uint(l)&1 != 0 {
			continue
		}
		total := 0
		for k := range cand {
			cand[k] = l*seedCandidates + k
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

// Sweeps returns the total number of sweeps as far as they are known:
// the burn-in so far and Samples. It grows while a burn-in allowed to run
// past BurnIn (Config.MaxBurnIn) has not settled.
func (s *Sampler) Sweeps() int { return s.burnIn + s.cfg.Samples }

// BurnIn returns the burn-in's length as far as it is known.
func (s *Sampler) BurnIn() int { return s.burnIn }

// Run runs the remaining sweeps, calling onSweep (if not nil) after each;
// Result then gives the posterior summary. Cancellation of ctx is checked
// between sweeps: Run then returns ctx.Err() and the sampler is left at a
// sweep boundary, ready to be marshalled or run again. An error from
// onSweep stops the run the same way and is returned wrapped.
func (s *Sampler) Run(ctx context.Context, onSweep func(SweepStats) error) error {
	for s.sweep < s.Sweeps() {
		if err := s.stopped(ctx); err != nil {
			return err
		}
		st, err := s.Step()
		if err != nil {
			return err
		}
		if onSweep != nil {
			if err := onSweep(st); err != nil {
				return fmt.Errorf("gibbs: sweep %d callback: %w", st.Sweep, err)
			}
		}
	}
	return nil
}

// Step runs one sweep: a Z step, a U step and the λ update on every chain,
// then the multi-start selection or the posterior accumulation that falls due.
// It returns errDone after the last sweep.
func (s *Sampler) Step() (SweepStats, error) {
	if s.sweep >= s.Sweeps() {
		return SweepStats{}, errDone
	}
	start := time.Now()
	st := SweepStats{Sweep: s.sweep, Phase: BurnIn, Chains: len(s.chains)}
	if s.sweep >= s.burnIn {
		st.Phase = Sample
	}
	lead := 0
	for ci, c := range s.chains {
		if s.sched.reseedBefore(s.sweep) {
			s.reseed(c, s.sweep)
		}
		if s.sweep < s.burnIn {
			s.splitMerge(c, s.sweep)
		}
		cs := s.sweepChain(c, s.sweep)
		if s.part != nil && s.part.err != nil {
			return SweepStats{}, s.part.err
		}
		if ci == 0 || cs.LogLik > st.LogLik {
			lead = ci
			st.Lambda, st.Dropout, st.Background = cs.Lambda, cs.Dropout, cs.Background
			st.LogLik, st.Accuracy, st.Flips = cs.LogLik, cs.Accuracy, cs.Flips
		}
	}
	s.sweep++
	if len(s.chains) > 1 && s.sweep >= s.sched.keepAfter {
		s.chains = []*chain{s.chains[lead]}
	}
	if s.sweep > s.burnIn && (s.sweep-s.burnIn)%s.cfg.Thin == 0 {
		s.accumulate(s.chains[0])
	}
	st.Seconds = time.Since(start).Seconds()
	s.trace = append(s.trace, st)
	if b := s.sched.burnInAfter(s.burnIn, s.cfg.Samples, s.trace); b != s.burnIn {
		s.discardWindow(b)
	}
	return st, nil
}

// discardWindow makes the sampling sweeps before sweep b, a window that
// did not settle (settle.go), burn-in: their states leave the posterior
// counts, and the next window starts at b.
func (s *Sampler) discardWindow(b int) {
	for i := s.burnIn; i < b; i++ {
		s.trace[i].Phase = BurnIn
	}
	clear(s.zCount)
	clear(s.uCount)
	s.retained, s.kept, s.burnIn = 0, nil, b
}

// accumulate adds the state of c to the posterior counts.
func (s *Sampler) accumulate(c *chain) {
	s.retained++
	s.addOwnCounts(c.z)
	addCounts(s.uCount, c.u, s.l)
	if s.cfg.KeepSamples {
		s.kept = append(s.kept, keptSample{
			rates:     c.rates,
			level:     slices.Clone(c.level),
			geneLevel: slices.Clone(c.geneLevel),
			z:         append([]uint64(nil), c.z...),
			u:         append([]uint64(nil), c.u...),
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
