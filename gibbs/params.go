package gibbs

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Params are the parameters of the Dropout likelihood with per-cell levels
// that a fit holds (Config.HoldFrom): the rates, ρ, the levels' grids,
// every cell's level and every gene's (each sample's, with
// Config.CellSamples). HeldParams returns a fit's once they are held, and
// Config.Params gives them to other fits, which hold them from their first
// sweep: chains from different starts that share them sample one
// posterior, p(Z, U | X, θ̂), where chains that each estimate their own
// sample as many (docs/real-data.md, "One θ̂ for the chains of an L").
type Params struct {
	rates     rates
	level     []uint8 // every cell's
	geneLevel []uint8 // every gene's (sample s's at s·D + d); nil without gene levels
}

// paramsMagic and paramsVersion open Params' encoding.
const (
	paramsMagic   = "scpPARAM"
	paramsVersion = 1
)

// HeldParams returns the parameters s holds: those of its chain once its
// sweeps hold them (Config.HoldFrom, or given by Config.Params). It is an
// error before then, or for a likelihood without per-cell levels, or for
// one process of a partitioned fit (which holds its cells' levels only).
func (s *Sampler) HeldParams() (*Params, error) {
	switch {
	case s.cfg.Noise != Dropout || s.cfg.CellLevelBits == 0:
		return nil, fmt.Errorf("%w: Params are those of dropout noise with per-cell levels", ErrConfig)
	case s.part != nil:
		return nil, fmt.Errorf("%w: Params of one process of a partitioned fit", errPart)
	case len(s.chains) != 1 || s.sched.estimates(s.sweep-1):
		return nil, fmt.Errorf("%w: the parameters are not held yet (sweep %d)", ErrConfig, s.sweep)
	}
	c := s.chains[0]
	return &Params{rates: c.rates, level: slices.Clone(c.level), geneLevel: slices.Clone(c.geneLevel)}, nil
}

// checkParams reports an error unless p fits the sampler's likelihood and
// data: dropout noise with per-cell levels, a level per cell and (with
// gene levels) per gene and sample, each within its levels.
func (s *Sampler) checkParams(p *Params) error {
	genes := 0
	if s.cfg.GeneLevelBits > 0 {
		genes = s.d * s.sampleCount()
	}
	switch {
	case s.cfg.Noise != Dropout || s.cfg.CellLevelBits == 0:
		return fieldError("Params", "given to a likelihood without per-cell levels of dropout noise")
	case s.cfg.FixLambda || s.cfg.HoldFrom > 0:
		return fieldError("Params", "given with FixLambda or HoldFrom, which set the parameters otherwise")
	case len(p.level) != s.n || len(p.geneLevel) != genes:
		return fieldError("Params", "of %d cells and %d gene levels, the data's %d and %d", len(p.level), len(p.geneLevel), s.n, genes)
	case slices.Max(p.level) >= uint8(s.levels()) || genes > 0 && slices.Max(p.geneLevel) >= uint8(s.geneLevels()):
		return fieldError("Params", "with levels past the %d cell and %d gene levels", s.levels(), s.geneLevels())
	}
	return nil
}

// giveParams sets chain c's parameters to p (checkParams), its cells'
// levels those of the process's cells.
func (s *Sampler) giveParams(c *chain, p *Params) {
	first, last := s.cellRange()
	c.rates, c.level = p.rates, slices.Clone(p.level[first:last])
	s.setLiftPlanes(c)
	if s.cfg.GeneLevelBits > 0 {
		c.geneLevel = slices.Clone(p.geneLevel)
		s.setGenePlanes(c)
	}
}

// Digest returns the SHA-256 of p's encoding, by which a restored state
// knows the parameters it was sampled under.
func (p *Params) Digest() [32]byte { return sha256.Sum256(p.MarshalBinary()) }

// MarshalBinary encodes p.
func (p *Params) MarshalBinary() []byte {
	b := make([]byte, 0, len(paramsMagic)+8*3+64+len(p.level)+len(p.geneLevel))
	b = append(b, paramsMagic...)
	for _, v := range []int{paramsVersion, len(p.level), len(p.geneLevel)} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	b = appendRates(b, p.rates)
	b = append(b, p.level...)
	return append(b, p.geneLevel...)
}

// UnmarshalParams decodes what Params.MarshalBinary encoded.
func UnmarshalParams(data []byte) (*Params, error) {
	if len(data) < len(paramsMagic) || string(data[:len(paramsMagic)]) != paramsMagic {
		return nil, fmt.Errorf("%w: missing magic %q of held parameters", errState, paramsMagic)
	}
	r := &stateReader{b: data[len(paramsMagic):]}
	if v := r.u64(); r.err == nil && v != paramsVersion {
		return nil, fmt.Errorf("%w: parameters version %d, want %d", errState, v, paramsVersion)
	}
	cells, genes := r.count(math.MaxInt32), r.count(math.MaxInt32)
	p := &Params{rates: r.rates()}
	p.level = r.levels(cells, 1<<MaxCellLevelBits)
	if genes > 0 {
		p.geneLevel = r.levels(genes, 1<<MaxGeneLevelBits)
	}
	switch {
	case r.err != nil:
		return nil, r.err
	case len(r.b) != 0:
		return nil, fmt.Errorf("%w: %d trailing bytes after the held parameters", errState, len(r.b))
	case cells == 0:
		return nil, fmt.Errorf("%w: held parameters of no cell", errState)
	}
	return p, nil
}
