package gibbs

import (
	"encoding/binary"
	"fmt"
	"math"
)

// samplesMagic and samplesVersion open MarshalSamples's encoding. Version
// 2 adds the cells' samples (Config.CellSamples), whose gene levels are
// then one per sample and gene; version 1, which has none, is still read.
const (
	samplesMagic   = "scpSMPLS"
	samplesVersion = 2
)

// Samples holds the states a run retained under Config.KeepSamples, for
// the sample-averaged predictive (the paper's second estimate, section 3.3)
// in a process other than the sampler's: Result.MarshalSamples encodes
// them, UnmarshalSamples decodes them.
type Samples struct {
	n, d, l     int
	cellSamples []uint16 // each cell's sample; nil without Config.CellSamples
	kept        []keptSample
}

// MarshalSamples encodes the retained states of r (Config.KeepSamples),
// each with its likelihood's parameters; errNoSamples without them.
func (r *Result) MarshalSamples() ([]byte, error) {
	if len(r.kept) == 0 {
		return nil, fmt.Errorf("%w: Config.KeepSamples was off", errNoSamples)
	}
	k0 := r.kept[0]
	size := len(samplesMagic) + 8*8 + 2*len(r.CellSamples) + len(r.kept)*(64+len(k0.level)+len(k0.geneLevel)+8*(len(k0.z)+len(k0.u)))
	b := make([]byte, 0, size)
	b = append(b, samplesMagic...)
	S := 0 // the samples' count, 0 without them
	for _, s := range r.CellSamples {
		S = max(S, int(s)+1)
	}
	for _, v := range []int{samplesVersion, r.N, r.D, r.L, S, len(k0.level), len(k0.geneLevel), len(r.kept)} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	for _, s := range r.CellSamples {
		b = binary.LittleEndian.AppendUint16(b, s)
	}
	for _, k := range r.kept {
		b = appendRates(b, k.rates)
		b = append(b, k.level...)
		b = append(b, k.geneLevel...)
		b = appendWords(b, k.z)
		b = appendWords(b, k.u)
	}
	return b, nil
}

// UnmarshalSamples decodes what Result.MarshalSamples encoded.
func UnmarshalSamples(data []byte) (*Samples, error) {
	if len(data) < len(samplesMagic) || string(data[:len(samplesMagic)]) != samplesMagic {
		return nil, fmt.Errorf("%w: missing magic %q of retained samples", errState, samplesMagic)
	}
	r := &stateReader{b: data[len(samplesMagic):]}
	version := r.u64()
	if r.err == nil && version != 1 && version != samplesVersion {
		return nil, fmt.Errorf("%w: samples version %d, want 1 or %d", errState, version, samplesVersion)
	}
	n, d, L := r.count(math.MaxInt32), r.count(math.MaxInt32), r.count(MaxL)
	S := 0
	if version >= 2 {
		S = r.count(math.MaxUint16 + 1)
	}
	levelCells, levelGenes := r.count(n), r.count(S*d+d)
	count := r.count(len(r.b) / 64)
	// Gene levels come only with cell levels (Config.validate), and
	// sampleMean reads both then; the samples' come only with gene levels,
	// one per sample and gene.
	if r.err == nil && ((levelCells != 0 && levelCells != n) || (levelGenes != 0 && levelGenes != max(S, 1)*d) ||
		(levelGenes != 0 && levelCells == 0) || (S > 0 && levelGenes == 0) || n == 0 || d == 0 || L == 0) {
		return nil, fmt.Errorf("%w: samples of %d × %d at L = %d with %d cell samples, %d cell and %d gene levels", errState, n, d, L, S, levelCells, levelGenes)
	}
	s := &Samples{n: n, d: d, l: L, kept: make([]keptSample, count)}
	if S > 0 {
		if s.cellSamples = r.cellSamples(n); r.err == nil && (checkCellSamples(s.cellSamples) != nil || int(s.cellSamples[n-1]) != S-1) {
			return nil, fmt.Errorf("%w: the cells' samples are not %d runs of cells in order", errState, S)
		}
	}
	nw, dw := (n+63)/64, (d+63)/64
	for i := range s.kept {
		k := &s.kept[i]
		k.rates = r.rates()
		k.level = r.levels(levelCells, 1<<MaxCellLevelBits)
		k.geneLevel = r.levels(levelGenes, 1<<MaxGeneLevelBits)
		k.z, k.u = r.words(nw*L), r.words(dw*L)
		if r.err == nil && (!padClear(k.z, n, L) || !padClear(k.u, d, L)) {
			return nil, fmt.Errorf("%w: retained sample %d has bits past the last cell or gene", errState, i)
		}
	}
	switch {
	case r.err != nil:
		return nil, r.err
	case len(r.b) != 0:
		return nil, fmt.Errorf("%w: %d trailing bytes after %d retained samples", errState, len(r.b), count)
	case count == 0:
		return nil, fmt.Errorf("%w: no retained sample", errState)
	}
	return s, nil
}

// Shape returns the cells, genes and codes of the states (the sampler's
// codes: a housekeeping code included).
func (s *Samples) Shape() (n, d, L int) { return s.n, s.d, s.l }

// Count returns the number of retained states.
func (s *Samples) Count() int { return len(s.kept) }

// Predict returns P(x_nd = 1) averaged over the retained states, each with
// its own parameters: Result.Predict's SampleMean.
func (s *Samples) Predict(n, d int) float64 {
	g := d
	if s.cellSamples != nil {
		g += int(s.cellSamples[n]) * s.d
	}
	return sampleMean(s.kept, s.l, n, d, g)
}

// Coverage returns the fraction of the retained states in which some code
// covers (n, d): the posterior probability that the noise-free entry is 1,
// averaged over samples rather than taken from the posterior means.
func (s *Samples) Coverage(n, d int) float64 {
	hit := 0
	for _, k := range s.kept {
		if covered(k.z, k.u, s.l, n, d) {
			hit++
		}
	}
	return float64(hit) / float64(len(s.kept))
}

// sampleMean averages P(x_nd = 1) over kept: 1 − α where some code covers
// (n, d), β elsewhere, each state with its own rates and levels; g is the
// index of (n, d)'s gene level (d, or with samples s·D + d).
func sampleMean(kept []keptSample, L, n, d, g int) float64 {
	sum := 0.0
	for _, k := range kept {
		pos, neg := k.rates.on, k.rates.off
		switch {
		case k.geneLevel != nil:
			pos, neg = k.rates.entryRates(k.level[n], k.geneLevel[g])
		case k.level != nil:
			pos, neg = k.rates.cellRates(k.level[n])
		}
		if covered(k.z, k.u, L, n, d) {
			sum += pos
		} else {
			sum += neg
		}
	}
	return sum / float64(len(kept))
}

// appendRates appends the little-endian encoding of r's fields.
func appendRates(b []byte, r rates) []byte {
	for _, v := range []float64{r.lambda, r.on, r.off, r.rho, r.lift0, r.step, r.gene0, r.geneStep} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// appendWords appends the little-endian encoding of ws.
func appendWords(b []byte, ws []uint64) []byte {
	for _, w := range ws {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b
}

// cellSamples reads n little-endian uint16, the cells' samples.
func (r *stateReader) cellSamples(n int) []uint16 {
	if r.err == nil && len(r.b) < 2*n {
		r.err = fmt.Errorf("%w: truncated", errState)
	}
	if r.err != nil {
		return nil
	}
	out := make([]uint16, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint16(r.b[2*i:])
	}
	r.b = r.b[2*n:]
	return out
}
