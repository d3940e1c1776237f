package h5

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Record types of version-2 B-trees that index dense storage.
const (
	btree2LinkName = 5 // hash of the name, heap ID of the link message
	btree2AttrName = 8 // heap ID of the attribute message, flags, order, hash
)

// btree2 is a parsed version-2 B-tree header (spec III.A.2).
type btree2 struct {
	m        *meta
	addr     uint64
	typ      byte
	nodeSize int
	recSize  int
	// nrecBytes[d] and totalBytes[d] are the widths of the record counts
	// in the child pointers of a node at depth d (libhdf5's H5B2__hdr_init).
	nrecBytes  int
	totalBytes []int
}

// btree2Records returns the records of the version-2 B-tree at addr, which
// must hold records of type typ, in no particular order.
func (m *meta) btree2Records(addr uint64, typ byte) ([][]byte, error) {
	os, ls := m.offsetSize, m.lengthSize
	b, err := m.readAt(addr, 16+os+2+ls+4)
	if err != nil {
		return nil, fmt.Errorf("v2 B-tree: %w", err)
	}
	if string(b[:4]) != "BTHD" || b[4] != 0 || b[5] != typ {
		return nil, fmt.Errorf("%w: no v2 B-tree of type %d at %d", errFormat, typ, addr)
	}
	if !m.checksummed(b) {
		return nil, fmt.Errorf("%w: v2 B-tree at %d: checksum mismatch", errFormat, addr)
	}
	t := &btree2{m: m, addr: addr, typ: typ,
		nodeSize: int(binary.LittleEndian.Uint32(b[6:])), recSize: int(binary.LittleEndian.Uint16(b[10:]))}
	depth := int(binary.LittleEndian.Uint16(b[12:]))
	root := leUint(b[16:], os)
	nrec := int(binary.LittleEndian.Uint16(b[16+os:]))
	if t.recSize < 1 || t.nodeSize <= 10+t.recSize || t.nodeSize > maxBlock {
		return nil, fmt.Errorf("%w: v2 B-tree at %d: nodes of %d bytes, records of %d", errFormat, addr, t.nodeSize, t.recSize)
	}
	if undefinedAddr(root, os) {
		return nil, nil
	}
	if err := t.widths(depth); err != nil {
		return nil, err
	}
	var recs [][]byte
	spent := m.budget("v2 B-tree")
	err = t.walk(root, nrec, depth, spent, func(r []byte) { recs = append(recs, r) })
	return recs, err
}

// encSize is the bytes needed to store a count up to n (H5VM_limit_enc_size).
func encSize(n uint64) int { return max(bits.Len64(n)-1, 0)/8 + 1 }

// widths computes the widths of the record counts stored in internal
// nodes: they depend on how many records a node of each depth can hold.
func (t *btree2) widths(depth int) error {
	// A node holds at least one record, so no tree is deeper than the file
	// has nodes; 64 levels of nodes of two records already overflow.
	if depth > 64 {
		return fmt.Errorf("%w: v2 B-tree at %d of depth %d", errFormat, t.addr, depth)
	}
	os := t.m.offsetSize
	maxNrec := uint64((t.nodeSize - 10) / t.recSize) // leaf: signature, version, type, checksum
	cum := maxNrec
	t.nrecBytes = encSize(maxNrec)
	t.totalBytes = make([]int, depth+1)
	for d := 1; d <= depth; d++ {
		ptr := os + t.nrecBytes
		if d > 1 {
			ptr += t.totalBytes[d-1]
		}
		n := (t.nodeSize - 10 - ptr) / (t.recSize + ptr)
		if n < 1 {
			return fmt.Errorf("%w: v2 B-tree at %d: internal nodes of %d bytes hold no record", errFormat, t.addr, t.nodeSize)
		}
		hi, lo := bits.Mul64(uint64(n)+1, cum)
		if hi != 0 || lo+uint64(n) < lo {
			cum = ^uint64(0)
		} else {
			cum = lo + uint64(n)
		}
		t.totalBytes[d] = encSize(cum)
	}
	return nil
}

// walk calls fn for each record of the node at addr, of nrec records at
// depth depth (0: a leaf), and of the nodes below it.
func (t *btree2) walk(addr uint64, nrec, depth int, spent *budget, fn func([]byte)) error {
	sig := "BTLF"
	if depth > 0 {
		sig = "BTIN"
	}
	if err := spent.spend(uint64(t.nodeSize)); err != nil {
		return err
	}
	b, err := t.m.readAt(addr, t.nodeSize)
	if err != nil {
		return fmt.Errorf("v2 B-tree node: %w", err)
	}
	if string(b[:4]) != sig || b[4] != 0 || b[5] != t.typ {
		return fmt.Errorf("%w: no v2 B-tree node at %d", errFormat, addr)
	}
	ptr := 0
	if depth > 0 {
		ptr = t.m.offsetSize + t.nrecBytes
		if depth > 1 {
			ptr += t.totalBytes[depth-1]
		}
	}
	end := 6 + nrec*t.recSize + (nrec+1)*ptr
	if depth == 0 {
		end = 6 + nrec*t.recSize
	}
	if end+4 > len(b) {
		return fmt.Errorf("%w: v2 B-tree node at %d: %d records overflow it", errFormat, addr, nrec)
	}
	if !t.m.checksummed(b[:end+4]) {
		return fmt.Errorf("%w: v2 B-tree node at %d: checksum mismatch", errFormat, addr)
	}
	for i := 0; i < nrec; i++ {
		fn(b[6+i*t.recSize : 6+(i+1)*t.recSize])
	}
	for i := 0; depth > 0 && i <= nrec; i++ {
		p := b[6+nrec*t.recSize+i*ptr:]
		child := leUint(p, t.m.offsetSize)
		n := leUint(p[t.m.offsetSize:], t.nrecBytes)
		if n > uint64(t.nodeSize) {
			return fmt.Errorf("%w: v2 B-tree node at %d: child of %d records", errFormat, addr, n)
		}
		if err := t.walk(child, int(n), depth-1, spent, fn); err != nil {
			return err
		}
	}
	return nil
}
