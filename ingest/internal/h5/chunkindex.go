package h5

import (
	"encoding/binary"
	"fmt"
)

// chunkRef locates one stored chunk.
type chunkRef struct {
	addr uint64
	size uint64 // stored (possibly filtered) size in bytes
	mask uint32 // filter mask: bit i set = filter i was not applied
}

// chunkGrid is the chunk index of a chunked dataset, built once: the chunk
// whose grid coordinates, in row-major order, have linear index k is
// ref(k) (size 0: never written, read as fill value). Only the chunks the
// file stores take memory, so a corrupted extent cannot make the index
// itself large.
type chunkGrid struct {
	grid     []int64 // chunks per dimension
	n        int64   // chunks in all
	refs     map[int64]chunkRef
	implicit chunkRef // implicit index: chunk k at implicit.addr + k*implicit.size
}

func newGrid(dims []int64, chunk []uint64) *chunkGrid {
	g := &chunkGrid{grid: make([]int64, len(dims)), n: 1, refs: map[int64]chunkRef{}}
	for i, d := range dims {
		c := int64(chunk[i]) // at most 2^32 (openDataset)
		g.grid[i] = (d + c - 1) / c
		g.n *= g.grid[i] // at most the dataset's element count
	}
	return g
}

// ref returns the location of chunk k.
func (g *chunkGrid) ref(k int64) chunkRef {
	if g.implicit.size != 0 {
		return chunkRef{addr: g.implicit.addr + uint64(k)*g.implicit.size, size: g.implicit.size}
	}
	return g.refs[k]
}

// set records the chunk whose first element has coordinates off.
func (g *chunkGrid) set(off []uint64, chunk []uint64, r chunkRef) {
	k := int64(0)
	for i := range g.grid {
		c := off[i] / chunk[i]
		if c >= uint64(g.grid[i]) {
			return // beyond the current extent (dataset shrunk): ignore
		}
		k = k*g.grid[i] + int64(c)
	}
	g.refs[k] = r
}

// buildIndex reads the dataset's chunk index into a grid.
func (d *Dataset) buildIndex() (*chunkGrid, error) {
	l := d.layout
	g := newGrid(d.shape, l.chunk)
	if undefinedAddr(l.addr, d.f.m.offsetSize) || g.n == 0 {
		return g, nil // no chunk written yet
	}
	chunkBytes := uint64(d.chunkLen) * uint64(d.elemSize)
	var err error
	switch l.indexType {
	case indexBTreeV1:
		err = d.walkBTreeV1(g, l.addr)
	case indexSingle:
		size := l.singleSize
		if size == 0 {
			size = chunkBytes
		}
		g.refs[0] = chunkRef{addr: l.addr, size: size, mask: l.singleMask}
	case indexImplicit:
		// Every chunk is stored, one after another: they must all lie in
		// the file.
		if err = d.f.m.inFile(l.addr, uint64(g.n)*chunkBytes); err == nil {
			g.implicit = chunkRef{addr: l.addr, size: chunkBytes}
		}
	case indexFixedArray:
		err = d.readFixedArray(g, chunkBytes)
	default:
		err = fmt.Errorf("chunk index type %q is not supported", indexName(l.indexType))
	}
	if err != nil {
		return nil, fmt.Errorf("chunk index (%s): %w", indexName(l.indexType), err)
	}
	return g, nil
}

// walkBTreeV1 collects the leaves of a version-1 B-tree of chunks ("TREE"
// nodes of type 1), as written by PyTables, h5py and libhdf5 before 1.10.
// A key holds the chunk's stored size, its filter mask and the offsets of
// its first element (plus one for the element's bytes).
func (d *Dataset) walkBTreeV1(g *chunkGrid, root uint64) error {
	rank := len(d.shape)
	off := make([]uint64, rank)
	return d.f.m.walkBTree1(root, btreeChunk, 8+8*(rank+1), func(key []byte, child uint64) error {
		for j := 0; j < rank; j++ {
			off[j] = binary.LittleEndian.Uint64(key[8+8*j:])
		}
		for j, c := range d.layout.chunk {
			if off[j]%c != 0 {
				return fmt.Errorf("%w: chunk offset %v not on the chunk grid", errFormat, off)
			}
		}
		g.set(off, d.layout.chunk, chunkRef{
			addr: child,
			size: uint64(binary.LittleEndian.Uint32(key)),
			mask: binary.LittleEndian.Uint32(key[4:]),
		})
		return nil
	})
}

// readFixedArray reads a fixed-array chunk index (layout version 4, files
// written with libver="latest"). Paged data blocks are not supported.
func (d *Dataset) readFixedArray(g *chunkGrid, chunkBytes uint64) error {
	m := d.f.m
	os, ls := m.offsetSize, m.lengthSize
	h, err := m.readAt(d.layout.addr, 8+ls+os+4)
	if err != nil {
		return err
	}
	if string(h[:4]) != "FAHD" {
		return fmt.Errorf("%w: no fixed array header at %d", errFormat, d.layout.addr)
	}
	client, entrySize, pageBits := h[5], int(h[6]), int(h[7])
	n := leUint(h[8:], ls)
	dblock := leUint(h[8+ls:], os)
	if n > uint64(g.n) {
		return fmt.Errorf("%w: fixed array holds %d entries for %d chunks", errFormat, n, g.n)
	}
	w := entrySize - os - 4 // filtered chunks: bytes of the chunk size
	if entrySize < os || client == 1 && (w < 1 || w > 8) {
		return fmt.Errorf("%w: fixed array entries of %d bytes", errFormat, entrySize)
	}
	if n > uint64(1)<<pageBits {
		return fmt.Errorf("paged fixed array (%d entries, pages of %d) is not supported", n, 1<<pageBits)
	}
	if undefinedAddr(dblock, os) {
		return nil
	}
	if err := m.inFile(dblock, n*uint64(entrySize)); err != nil {
		return fmt.Errorf("%w: fixed array data block: %w", errFormat, err)
	}
	b, err := m.readAt(dblock, 6+os+int(n)*entrySize)
	if err != nil {
		return err
	}
	if string(b[:4]) != "FADB" {
		return fmt.Errorf("%w: no fixed array data block at %d", errFormat, dblock)
	}
	p := 6 + os
	for k := 0; k < int(n); k++ {
		e := b[p+k*entrySize:]
		r := chunkRef{addr: leUint(e, os), size: chunkBytes}
		if client == 1 { // filtered chunks: address, size, mask
			r.size = leUint(e[os:], w)
			r.mask = binary.LittleEndian.Uint32(e[os+w:])
		}
		if !undefinedAddr(r.addr, os) {
			g.refs[int64(k)] = r
		}
	}
	return nil
}
