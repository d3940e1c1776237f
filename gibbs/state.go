package gibbs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// errState is wrapped by the errors of UnmarshalBinary.
var errState = errors.New("gibbs: bad sampler state")

const stateMagic = "scpGIBBS"

// stateVersion 2 added the noise model and its rates, 3 the per-cell
// levels, 4 the per-gene levels (and their rates, in every state).
const stateVersion = 4

// MarshalBinary encodes the full state of the sampler: the chains (Z, U, λ,
// seed), the sweep number, the posterior counts, the retained samples and the
// trace. A Sampler built by NewSampler from the same Data and Config and then
// given these bytes by UnmarshalBinary continues exactly as this one would:
// everything but the trace's Seconds is bit-identical to an uninterrupted run.
// The encoding is little-endian and versioned. A partitioned fit's whole
// state (PartSampler.Whole) restores on any number of processes
// (PartSampler.UnmarshalBinary).
func (s *Sampler) MarshalBinary() ([]byte, error) {
	return s.encode(false), nil
}

// encode is MarshalBinary of the sampler's state, with every cell's state
// zero when blank (MarshalShared).
func (s *Sampler) encode(blank bool) []byte {
	levelCells := 0
	if s.cfg.CellLevelBits > 0 {
		levelCells = s.n
	}
	states := len(s.chains) + len(s.kept)
	b := make([]byte, 0, len(stateMagic)+8*(len(s.fingerprint())+6)+states*(56+levelCells+8*(s.nw+s.dw)*s.l)+
		4*(s.n+s.d)*s.l+80*len(s.trace))
	b = append(b, stateMagic...)
	u64 := func(v uint64) { b = binary.LittleEndian.AppendUint64(b, v) }
	f64 := func(v float64) { u64(math.Float64bits(v)) }
	words := func(ws []uint64) { b = appendWords(b, ws) }
	// A cell's state, or as many zeros, appended without being made.
	cells := func(z []uint64, level []uint8) {
		if blank {
			b = append(b, make([]byte, levelCells+8*s.nw*s.l)...)
			return
		}
		b = append(b, level...)
		words(z)
	}
	u64(stateVersion)
	for _, v := range s.fingerprint() {
		u64(v)
	}
	u64(uint64(s.sweep))
	u64(uint64(len(s.chains)))
	putRates := func(r rates) { b = appendRates(b, r) }
	for _, c := range s.chains {
		u64(c.seed)
		putRates(c.rates)
		cells(c.z, c.level)
		b = append(b, c.geneLevel...)
		words(c.u)
	}
	u64(uint64(s.retained))
	if blank {
		b = append(b, make([]byte, 4*s.n*s.l)...)
	} else {
		for _, c := range s.zCount {
			b = binary.LittleEndian.AppendUint32(b, c)
		}
	}
	for _, c := range s.uCount {
		b = binary.LittleEndian.AppendUint32(b, c)
	}
	u64(uint64(len(s.kept)))
	for _, k := range s.kept {
		putRates(k.rates)
		cells(k.z, k.level)
		b = append(b, k.geneLevel...)
		words(k.u)
	}
	u64(uint64(len(s.trace)))
	for _, t := range s.trace {
		u64(uint64(t.Sweep))
		u64(uint64(t.Phase))
		u64(uint64(t.Chains))
		f64(t.Lambda)
		f64(t.Dropout)
		f64(t.Background)
		f64(t.LogLik)
		f64(t.Accuracy)
		u64(uint64(t.Flips))
		f64(t.Seconds)
	}
	return b
}

// windowRule marks, in the fingerprint, a state whose burn-in may run on
// by windows of samples (settle.go); the rule of 30-sweep tests before it
// left states without the mark.
const windowRule = 1 << 47

// givenParams marks, in the fingerprint, a state sampled under parameters
// given (Config.Params), whose digest ends the fingerprint.
const givenParams = 1 << 46

// fingerprintMismatch is the error of a state (of what: "" or "part's ")
// whose field i of the fingerprint is got where the sampler has want.
func fingerprintMismatch(what string, i int, got, want uint64) error {
	if got^want == windowRule {
		return fmt.Errorf("%w: written by an older scpipe, whose burn-in ran on under max_burn_in by another rule: run the fit again from the start", errState)
	}
	return fmt.Errorf("%w: field %d of the %sconfiguration fingerprint is %d, this sampler has %d", errState, i, what, got, want)
}

// fingerprint lists what a restored state must agree on with the Sampler it
// is restored into.
func (s *Sampler) fingerprint() []uint64 {
	fix := uint64(0)
	if s.cfg.FixLambda {
		fix = 1
	}
	// The hold rides in the same field, so that the states of samplers
	// without it keep the fingerprint they were written with.
	fix |= uint64(s.cfg.HoldFrom) << 1
	// So do the samples the likelihood knows.
	if S := s.sampleCount(); S > 1 {
		fix |= uint64(S) << 48
	}
	// And the rule that extends a burn-in (settle.go), which a state
	// written under the rule before windowRule replays wrongly.
	if s.sched.maxBurnIn > s.cfg.BurnIn {
		fix |= windowRule
	}
	// And parameters given (Config.Params), whose digest follows.
	var given []uint64
	if p := s.cfg.Params; p != nil {
		fix |= givenParams
		d := p.Digest()
		for i := 0; i < len(d); i += 8 {
			given = append(given, binary.LittleEndian.Uint64(d[i:]))
		}
	}
	keep := uint64(0)
	if s.cfg.KeepSamples {
		keep = 1
	}
	// Re-seeding, gene swaps and split–merge moves ride in the start's
	// field, so that the states of samplers without them keep the
	// fingerprint they were written with.
	start := uint64(s.cfg.Init)
	if s.cfg.Reseed {
		start |= 1 << 8
	}
	if s.cfg.GeneSwaps {
		start |= 1 << 9
	}
	start |= uint64(s.cfg.SplitMerge) << 16
	return append([]uint64{uint64(s.n), uint64(s.d), uint64(s.l), s.cfg.Seed,
		uint64(s.cfg.BurnIn), uint64(s.cfg.Samples), uint64(s.cfg.Thin),
		uint64(s.cfg.Starts), uint64(s.cfg.StartSweeps), fix, keep, start, uint64(s.observed),
		uint64(s.cfg.Noise), math.Float64bits(s.start.on), math.Float64bits(s.start.off), s.clamped,
		uint64(s.cfg.CellLevelBits), uint64(s.cfg.GeneLevelBits)}, given...)
}

// stateReader decodes little-endian words and remembers the first error.
type stateReader struct {
	b   []byte
	err error
}

func (r *stateReader) u64() uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 8 {
		r.err = fmt.Errorf("%w: truncated", errState)
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *stateReader) f64() float64 { return math.Float64frombits(r.u64()) }

func (r *stateReader) rates() rates {
	return rates{lambda: r.f64(), on: r.f64(), off: r.f64(), rho: r.f64(), lift0: r.f64(), step: r.f64(),
		gene0: r.f64(), geneStep: r.f64()}
}

// levels reads n per-cell (or per-gene) levels, each below k.
func (r *stateReader) levels(n, k int) []uint8 { return r.levelsIn(n, k, 0, n) }

// levelsIn reads n per-cell (or per-gene) levels, each below k, and
// returns levels [lo, hi) of them (nil when n is 0).
func (r *stateReader) levelsIn(n, k, lo, hi int) []uint8 {
	if n == 0 || r.err != nil {
		return nil
	}
	if len(r.b) < n {
		r.err = fmt.Errorf("%w: truncated", errState)
		return nil
	}
	for _, v := range r.b[:n] {
		if int(v) >= k {
			r.err = fmt.Errorf("%w: level %d, want below %d", errState, v, k)
			return nil
		}
	}
	out := append([]uint8(nil), r.b[lo:hi]...)
	r.b = r.b[n:]
	return out
}

// count reads a length and checks it against limit.
func (r *stateReader) count(limit int) int {
	v := r.u64()
	if r.err == nil && v > uint64(limit) {
		r.err = fmt.Errorf("%w: count %d exceeds %d", errState, v, limit)
		return 0
	}
	return int(v)
}

func (r *stateReader) words(n int) []uint64 { return r.wordsIn(n, 0, n) }

// wordsIn reads n words and returns words [lo, hi) of them.
func (r *stateReader) wordsIn(n, lo, hi int) []uint64 {
	if r.err == nil && len(r.b) < 8*n {
		r.err = fmt.Errorf("%w: truncated", errState)
	}
	if r.err != nil {
		return nil
	}
	out := make([]uint64, hi-lo)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(r.b[8*(lo+i):])
	}
	r.b = r.b[8*n:]
	return out
}

func (r *stateReader) counts(n int) []uint32 { return r.countsIn(n, 0, n) }

// countsIn reads n counts and returns counts [lo, hi) of them.
func (r *stateReader) countsIn(n, lo, hi int) []uint32 {
	if r.err == nil && len(r.b) < 4*n {
		r.err = fmt.Errorf("%w: truncated", errState)
	}
	if r.err != nil {
		return nil
	}
	out := make([]uint32, hi-lo)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(r.b[4*(lo+i):])
	}
	r.b = r.b[4*n:]
	return out
}

// UnmarshalBinary replaces the sampler's state by one encoded by
// MarshalBinary. The sampler must have been built from the same data and
// configuration (Workers may differ); otherwise it returns an error wrapping
// errState and leaves the sampler unchanged.
func (s *Sampler) UnmarshalBinary(data []byte) error {
	if len(data) < len(stateMagic) || string(data[:len(stateMagic)]) != stateMagic {
		return fmt.Errorf("%w: missing magic %q", errState, stateMagic)
	}
	r := &stateReader{b: data[len(stateMagic):]}
	if v := r.u64(); r.err == nil && v != stateVersion {
		return fmt.Errorf("%w: version %d, want %d%s", errState, v, stateVersion, olderVersion(v))
	}
	for i, want := range s.fingerprint() {
		if got := r.u64(); r.err == nil && got != want {
			return fingerprintMismatch("", i, got, want)
		}
	}
	// A process of a partitioned fit keeps its own cells' state.
	first, last := s.cellRange()
	levelCells, levelGenes := 0, 0
	if s.cfg.CellLevelBits > 0 {
		levelCells = s.n
	}
	if s.cfg.GeneLevelBits > 0 {
		levelGenes = s.d * s.sampleCount()
	}
	cellLevels := func() []uint8 { return r.levelsIn(levelCells, s.levels(), first, last) }
	zWords := func() []uint64 { return r.wordsIn(s.nw*s.l, first/64*s.l, (last+63)/64*s.l) }
	sweep := r.count(s.sched.maxBurnIn + s.cfg.Samples)
	chains := make([]*chain, r.count(s.cfg.Starts))
	for i := range chains {
		c := &chain{seed: r.u64(), rates: r.rates()}
		c.level = cellLevels()
		c.z = zWords()
		c.geneLevel = r.levels(levelGenes, s.geneLevels())
		c.u = r.words(s.dw * s.l)
		chains[i] = c
	}
	retained := r.count(s.cfg.Samples)
	zCount := r.countsIn(s.n*s.l, first*s.l, last*s.l)
	uCount := r.counts(s.d * s.l)
	kept := make([]keptSample, r.count(retained))
	for i := range kept {
		kept[i] = keptSample{rates: r.rates(), level: cellLevels()}
		kept[i].z = zWords()
		kept[i].geneLevel = r.levels(levelGenes, s.geneLevels())
		kept[i].u = r.words(s.dw * s.l)
	}
	trace := make([]SweepStats, r.count(sweep))
	for i := range trace {
		trace[i] = SweepStats{Sweep: int(r.u64()), Phase: Phase(r.u64()), Chains: int(r.u64()),
			Lambda: r.f64(), Dropout: r.f64(), Background: r.f64(), LogLik: r.f64(), Accuracy: r.f64(), Flips: int64(r.u64()), Seconds: r.f64()}
	}
	if r.err != nil {
		return r.err
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", errState, len(r.b))
	}
	for _, c := range chains {
		if !s.validBits(c.z, c.u) {
			return fmt.Errorf("%w: chain state has bits past the last cell or gene", errState)
		}
		if !s.holdsFixedCodes(c.u) {
			return fmt.Errorf("%w: the chain's fixed codes differ from the configuration's", errState)
		}
	}
	for _, k := range kept {
		if !s.validBits(k.z, k.u) {
			return fmt.Errorf("%w: retained sample has bits past the last cell or gene", errState)
		}
	}
	if len(chains) == 0 || len(trace) != sweep {
		return fmt.Errorf("%w: %d chains and %d trace entries at sweep %d", errState, len(chains), len(trace), sweep)
	}
	if s.cfg.CellLevelBits > 0 {
		for _, c := range chains {
			s.setLiftPlanes(c)
		}
	}
	if s.cfg.GeneLevelBits > 0 {
		for _, c := range chains {
			s.setGenePlanes(c)
		}
	}
	burnIn := s.cfg.BurnIn
	for t := range trace {
		burnIn = s.sched.burnInAfter(burnIn, s.cfg.Samples, trace[:t+1])
	}
	if burnIn+s.cfg.Samples < sweep {
		return fmt.Errorf("%w: sweep %d past the last (%d) of a burn-in of %d", errState, sweep, burnIn+s.cfg.Samples, burnIn)
	}
	s.sweep, s.chains, s.retained, s.burnIn = sweep, chains, retained, burnIn
	s.zCount, s.uCount, s.kept, s.trace = zCount, uCount, kept, trace
	return nil
}

// validBits reports whether the interleaved bitsets z (of the process's
// cells) and u have no bits set past row N and D, which the kernel
// requires.
func (s *Sampler) validBits(z, u []uint64) bool {
	_, last := s.cellRange()
	return (last < s.n || padClear(z, s.n, s.l)) && padClear(u, s.d, s.l)
}

// padClear reports whether the last word of each of the L interleaved
// bitsets of words, of rows rows, has no bit set past the last row.
func padClear(words []uint64, rows, L int) bool {
	r := rows % 64
	if r == 0 {
		return true
	}
	for _, w := range words[len(words)-L:] {
		if w>>uint(r) != 0 {
			return false
		}
	}
	return true
}

// olderVersion explains a state of an older version than stateVersion:
// it was written by an older scpipe, whose checkpoints this one cannot
// continue.
func olderVersion(v uint64) string {
	if v >= stateVersion {
		return ""
	}
	return " (written by an older scpipe, before per-gene levels: run the fit again from the start)"
}
