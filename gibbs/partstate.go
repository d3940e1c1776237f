package gibbs

import (
	"encoding/binary"
	"fmt"
)

const partMagic = "scpGPART"

// MarshalShared encodes the sampler's state as Sampler.MarshalBinary
// does, with every cell's state (Z, levels, Z's posterior counts, of every
// chain and retained sample) zero: the zeros take the whole fit's length,
// written without being held.
func (q *PartSampler) MarshalShared() []byte { return q.s.encode(true) }

// MarshalPart encodes the state of the process's cells [lo, hi): of every
// chain and retained sample its Z words and levels, and Z's posterior
// counts, with the sweep and the configuration's fingerprint.
func (q *PartSampler) MarshalPart() (lo, hi int, b []byte) { return q.s.marshalPart() }

// marshalPart is MarshalPart of the sampler's cells (all of them in a
// single process).
func (s *Sampler) marshalPart() (lo, hi int, b []byte) {
	lo, hi = s.cellRange()
	size := len(partMagic) + 8*(len(s.fingerprint())+6) + (len(s.chains)+len(s.kept))*8*len(s.chains[0].z) + 4*len(s.zCount)
	if s.chains[0].level != nil {
		size += (len(s.chains) + len(s.kept)) * (hi - lo)
	}
	b = append(make([]byte, 0, size), partMagic...)
	u64 := func(v uint64) { b = binary.LittleEndian.AppendUint64(b, v) }
	u64(stateVersion)
	for _, v := range s.fingerprint() {
		u64(v)
	}
	for _, v := range []int{s.sweep, lo, hi, len(s.chains), len(s.kept)} {
		u64(uint64(v))
	}
	put := func(z []uint64, level []uint8) {
		for _, w := range z {
			u64(w)
		}
		b = append(b, level...)
	}
	for _, c := range s.chains {
		put(c.z, c.level)
	}
	for _, k := range s.kept {
		put(k.z, k.level)
	}
	for _, c := range s.zCount {
		b = binary.LittleEndian.AppendUint32(b, c)
	}
	return lo, hi, b
}

// UnmarshalPart sets the cells of a part encoded by PartSampler.MarshalPart
// into the sampler, whose shared state UnmarshalBinary has restored from
// the same sweep's MarshalShared, so that a single process resumes a
// partitioned fit's checkpoint: those of its cells that the sampler holds
// (all of them in a single process). It checks the configuration, the sweep and
// the numbers of chains and retained samples, and returns the part's
// cells.
func (s *Sampler) UnmarshalPart(data []byte) (lo, hi int, err error) {
	if lo, hi, err = s.unmarshalCells(data); err != nil {
		return 0, 0, err
	}
	if s.cfg.CellLevelBits > 0 {
		for _, c := range s.chains {
			s.setLiftPlanes(c)
		}
	}
	return lo, hi, nil
}

// unmarshalCells is UnmarshalPart without the lift planes.
func (s *Sampler) unmarshalCells(data []byte) (lo, hi int, err error) {
	if len(data) < len(partMagic) || string(data[:len(partMagic)]) != partMagic {
		return 0, 0, fmt.Errorf("%w: missing part magic %q", errState, partMagic)
	}
	r := &stateReader{b: data[len(partMagic):]}
	if v := r.u64(); r.err == nil && v != stateVersion {
		return 0, 0, fmt.Errorf("%w: part version %d, want %d%s", errState, v, stateVersion, olderVersion(v))
	}
	for i, want := range s.fingerprint() {
		if got := r.u64(); r.err == nil && got != want {
			return 0, 0, fingerprintMismatch("part's ", i, got, want)
		}
	}
	sweep, lo, hi := int(r.u64()), int(r.u64()), int(r.u64())
	chains, kept := int(r.u64()), int(r.u64())
	switch {
	case r.err != nil:
		return 0, 0, r.err
	case sweep != s.sweep || chains != len(s.chains) || kept != len(s.kept):
		return 0, 0, fmt.Errorf("%w: part of sweep %d with %d chains and %d samples, the shared state is of sweep %d with %d and %d",
			errState, sweep, chains, kept, s.sweep, len(s.chains), len(s.kept))
	case lo < 0 || lo >= hi || hi > s.n || lo%64 != 0 || (hi%64 != 0 && hi != s.n):
		return 0, 0, fmt.Errorf("%w: part of cells [%d, %d) of %d", errState, lo, hi, s.n)
	}
	// The cells [a, b) that both the part and the sampler hold; both start
	// at multiples of 64.
	first, last := s.cellRange()
	a, b := max(lo, first), min(hi, last)
	both := a < b
	src, at, k := (a/64-lo/64)*s.l, (a/64-first/64)*s.l, ((b+63)/64-a/64)*s.l
	levels := s.cfg.CellLevelBits > 0
	type dst struct {
		z     []uint64
		level []uint8
	}
	var dsts []dst
	for _, c := range s.chains {
		dsts = append(dsts, dst{c.z, c.level})
	}
	for _, k := range s.kept {
		dsts = append(dsts, dst{k.z, k.level})
	}
	for _, d := range dsts {
		z := r.words((hi+63)/64*s.l - lo/64*s.l)
		var lv []uint8
		if levels {
			lv = r.levels(hi-lo, s.levels())
		}
		if r.err != nil {
			return 0, 0, r.err
		}
		if hi == s.n && !padClear(z, s.n, s.l) {
			return 0, 0, fmt.Errorf("%w: part has bits past the last cell", errState)
		}
		if both {
			copy(d.z[at:at+k], z[src:src+k])
		}
		if both && levels {
			copy(d.level[a-first:b-first], lv[a-lo:b-lo])
		}
	}
	counts := r.counts((hi - lo) * s.l)
	if r.err != nil {
		return 0, 0, r.err
	}
	if len(r.b) != 0 {
		return 0, 0, fmt.Errorf("%w: %d trailing bytes in a part", errState, len(r.b))
	}
	if both {
		copy(s.zCount[(a-first)*s.l:(b-first)*s.l], counts[(a-lo)*s.l:(b-lo)*s.l])
	}
	return lo, hi, nil
}
