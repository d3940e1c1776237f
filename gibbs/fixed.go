package gibbs

import "fmt"

// Fixed codes (Config.FixedCodes) are columns of U that no step samples:
// the U step leaves them as they are (stepSpec.fixed, as the Z step leaves
// the housekeeping code's clamped z), every chain starts with them, and a
// restored state must hold them. The Z step treats them as any other code,
// so the cells' usage of a known program is inferred. With every code
// fixed the sampler draws from p(Z | X, U) alone.

// checkFixedCodes checks the fixed codes' columns; their genes are checked
// against the data by NewSampler.
func (c *config) checkFixedCodes() error {
	var seen uint64
	for _, f := range c.FixedCodes {
		switch {
		case f.Code < 0 || f.Code >= c.Config.L:
			return fmt.Errorf("%w: fixed code %d outside 0..L−1 (L = %d; the housekeeping code cannot be fixed)", ErrConfig, f.Code, c.Config.L)
		case seen>>uint(f.Code)&1 != 0:
			return fmt.Errorf("%w: code %d is fixed twice", ErrConfig, f.Code)
		}
		seen |= 1 << uint(f.Code)
	}
	return nil
}

// setFixedCodes records the fixed codes of cfg as interleaved words of U
// (s.uFixed) and their columns (s.fixedU), checking their genes.
func (s *Sampler) setFixedCodes() error {
	if len(s.cfg.FixedCodes) == 0 {
		return nil
	}
	s.uFixed = make([]uint64, s.dw*s.l)
	for _, f := range s.cfg.FixedCodes {
		s.fixedU |= 1 << uint(f.Code)
		for _, g := range f.Genes {
			if g < 0 || g >= s.d {
				return fmt.Errorf("%w: fixed code %d has gene %d, outside 0..%d", ErrConfig, f.Code, g, s.d-1)
			}
			s.uFixed[g/64*s.l+f.Code] |= 1 << uint(g%64)
		}
	}
	return nil
}

// fixCodes sets the fixed codes of u (interleaved words of U).
func (s *Sampler) fixCodes(u []uint64) {
	if s.fixedU == 0 {
		return
	}
	for w := range s.dw {
		for l := range s.l {
			if s.fixedU>>uint(l)&1 != 0 {
				u[w*s.l+l] = s.uFixed[w*s.l+l]
			}
		}
	}
}

// holdsFixedCodes reports whether u (interleaved words of U) holds the
// fixed codes.
func (s *Sampler) holdsFixedCodes(u []uint64) bool {
	for w := range s.dw {
		for l := range s.l {
			if s.fixedU>>uint(l)&1 != 0 && u[w*s.l+l] != s.uFixed[w*s.l+l] {
				return false
			}
		}
	}
	return true
}
