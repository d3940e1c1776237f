package h5

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// fractalHeap is a parsed fractal heap header (spec III.G): the store of
// a group's links or an object's attributes once there are too many for
// its object header ("dense storage"). Objects are found by heap ID.
type fractalHeap struct {
	m          *meta
	addr       uint64
	idLen      int
	width      int    // blocks per row of the doubling table
	start      uint64 // size of the blocks of rows 0 and 1
	maxDirect  uint64 // largest direct block
	directRows int    // rows of direct blocks in an indirect block
	offBytes   int    // bytes of a heap offset: (maximum heap size bits + 7) / 8
	lenBytes   int    // bytes of a managed object's length in its ID
	root       uint64
	rootRows   int // 0: the root is a direct block
}

// fractalHeap reads the fractal heap header at addr.
func (m *meta) fractalHeap(addr uint64) (*fractalHeap, error) {
	os, ls := m.offsetSize, m.lengthSize
	size := 22 + 12*ls + 3*os + 4
	b, err := m.readAt(addr, size)
	if err != nil {
		return nil, fmt.Errorf("fractal heap: %w", err)
	}
	if string(b[:4]) != "FRHP" || b[4] != 0 {
		return nil, fmt.Errorf("%w: no fractal heap at %d", errFormat, addr)
	}
	if !m.checksummed(b) {
		return nil, fmt.Errorf("%w: fractal heap at %d: checksum mismatch", errFormat, addr)
	}
	h := &fractalHeap{m: m, addr: addr, idLen: int(binary.LittleEndian.Uint16(b[5:]))}
	if binary.LittleEndian.Uint16(b[7:]) != 0 {
		return nil, fmt.Errorf("fractal heap at %d: filtered heaps are not supported", addr)
	}
	maxManaged := uint64(binary.LittleEndian.Uint32(b[10:]))
	p := 14 + 10*ls + 2*os // past the free space, object and size counters
	h.width = int(binary.LittleEndian.Uint16(b[p:]))
	h.start = leUint(b[p+2:], ls)
	h.maxDirect = leUint(b[p+2+ls:], ls)
	heapBits := int(binary.LittleEndian.Uint16(b[p+2+2*ls:]))
	p += 2 + 2*ls + 4 // past the starting rows of the root indirect block
	h.root = leUint(b[p:], os)
	h.rootRows = int(binary.LittleEndian.Uint16(b[p+os:]))
	// The doubling table's sizes are powers of two (the block sizes are
	// shifted below), and its rows cannot outgrow the heap's address space.
	if !pow2(uint64(h.width)) || !pow2(h.start) || !pow2(h.maxDirect) || h.maxDirect < h.start ||
		heapBits < 1 || heapBits > 64 || h.maxDirect > maxBlock {
		return nil, fmt.Errorf("%w: fractal heap at %d: table width %d, blocks of %d to %d bytes, %d-bit offsets",
			errFormat, addr, h.width, h.start, h.maxDirect, heapBits)
	}
	h.directRows = bits.Len64(h.maxDirect) - bits.Len64(h.start) + 2
	if h.rootRows > heapBits {
		return nil, fmt.Errorf("%w: fractal heap at %d: root block of %d rows", errFormat, addr, h.rootRows)
	}
	h.offBytes = (heapBits + 7) / 8
	h.lenBytes = min((bits.Len64(h.maxDirect)-1+7)/8, (bits.Len64(maxManaged)-1)/8+1)
	return h, nil
}

func pow2(x uint64) bool { return x != 0 && x&(x-1) == 0 }

// object returns the heap object whose ID is id: a managed object, stored
// in a direct block, or a tiny one, stored in the ID itself. Huge objects
// (larger than a direct block) are not supported.
func (h *fractalHeap) object(id []byte) ([]byte, error) {
	if len(id) < 1 || id[0]>>6 != 0 {
		return nil, fmt.Errorf("%w: fractal heap ID version", errFormat)
	}
	switch id[0] >> 4 & 3 {
	case 0:
		if len(id) < 1+h.offBytes+h.lenBytes {
			return nil, fmt.Errorf("%w: fractal heap ID of %d bytes", errFormat, len(id))
		}
		off := leUint(id[1:], h.offBytes)
		n := leUint(id[1+h.offBytes:], h.lenBytes)
		return h.managed(off, n)
	case 2:
		n, data := int(id[0]&0x0f)+1, id[1:]
		if h.idLen > 18 { // extended tiny object: a 12-bit length
			if len(id) < 2 {
				return nil, fmt.Errorf("%w: fractal heap ID of %d bytes", errFormat, len(id))
			}
			n, data = int(id[0]&0x0f)<<8|int(id[1])+1, id[2:]
		}
		if n > len(data) {
			return nil, fmt.Errorf("%w: tiny heap object of %d bytes in a %d-byte ID", errFormat, n, len(id))
		}
		return data[:n], nil
	}
	return nil, fmt.Errorf("fractal heap at %d: huge objects are not supported", h.addr)
}

// managed reads the n bytes at heap offset off: it finds the direct block
// holding them through the doubling table of indirect blocks.
func (h *fractalHeap) managed(off, n uint64) ([]byte, error) {
	block, blockOff, size := h.root, uint64(0), h.start
	rows := h.rootRows
	for depth := 0; rows > 0; depth++ {
		if depth > 64 {
			return nil, fmt.Errorf("%w: fractal heap at %d: indirect blocks nest too deep", errFormat, h.addr)
		}
		var err error
		if block, blockOff, size, rows, err = h.child(block, blockOff, rows, off); err != nil {
			return nil, err
		}
	}
	if off < blockOff || n > size || off-blockOff > size-n {
		return nil, fmt.Errorf("%w: heap object of %d bytes at %d outside its block", errFormat, n, off)
	}
	sig, err := h.m.readAt(block, 5)
	if err != nil {
		return nil, fmt.Errorf("fractal heap direct block: %w", err)
	}
	if string(sig[:4]) != "FHDB" {
		return nil, fmt.Errorf("%w: no fractal heap direct block at %d", errFormat, block)
	}
	if n > maxBlock {
		return nil, fmt.Errorf("%w: heap object of %d bytes", errFormat, n)
	}
	// Object offsets count from the block's start, its header included.
	obj, err := h.m.readAt(block+(off-blockOff), int(n))
	if err != nil {
		return nil, fmt.Errorf("fractal heap object: %w", err)
	}
	return obj, nil
}

// rowSize is the size of the blocks in row r of the doubling table, or 0
// when it overflows.
func (h *fractalHeap) rowSize(r int) uint64 {
	if r <= 1 {
		return h.start
	}
	s := uint(r - 1)
	if s >= 64 || h.start > ^uint64(0)>>s {
		return 0
	}
	return h.start << s
}

// child finds, in the indirect block at addr of rows rows covering heap
// offsets from blockOff on, the child block holding offset off: its
// address, first offset, size and (for an indirect child) rows.
func (h *fractalHeap) child(addr, blockOff uint64, rows int, off uint64) (uint64, uint64, uint64, int, error) {
	os := h.m.offsetSize
	hdr := 5 + os + h.offBytes
	entries := rows * h.width
	b, err := h.m.readAt(addr, hdr+entries*os+4)
	if err != nil {
		return 0, 0, 0, 0, fmt.Errorf("fractal heap indirect block: %w", err)
	}
	if string(b[:4]) != "FHIB" || !h.m.checksummed(b) {
		return 0, 0, 0, 0, fmt.Errorf("%w: no fractal heap indirect block at %d", errFormat, addr)
	}
	pos := blockOff
	for r := 0; r < rows; r++ {
		size := h.rowSize(r)
		for c := 0; c < h.width && size != 0; c++ {
			if off < pos || off-pos >= size {
				if pos+size < pos {
					break // past the heap's address space
				}
				pos += size
				continue
			}
			child := leUint(b[hdr+(r*h.width+c)*os:], os)
			if undefinedAddr(child, os) {
				return 0, 0, 0, 0, fmt.Errorf("%w: heap offset %d in an unallocated block", errFormat, off)
			}
			if r < h.directRows {
				return child, pos, size, 0, nil
			}
			// An indirect child spans size bytes: rows whose cumulative
			// span, start·width·2^(k-1), is that. It has fewer rows than
			// its parent, so the descent ends.
			k := bits.Len64(size) - bits.Len64(h.start*uint64(h.width)) + 1
			if k < 1 || k >= rows {
				return 0, 0, 0, 0, fmt.Errorf("%w: fractal heap indirect block of %d rows", errFormat, k)
			}
			return child, pos, size, k, nil
		}
	}
	return 0, 0, 0, 0, fmt.Errorf("%w: heap offset %d beyond the indirect block at %d", errFormat, off, addr)
}
