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

// chunkGrid is the chunk index of a chunked dataset, built once: refs[k] is
// the chunk whose grid coordinates, in row-major order, have linear index k
// (size 0 = never written, read as fill value).
type chunkGrid struct {
	grid []int64 // chunks per dimension
	refs []chunkRef
}

func newGrid(dims []int64, chunk []uint64) (*chunkGrid, error) {
	g := &chunkGrid{grid: make([]int64, len(dims))}
	n := int64(1)
	for i, d := range dims {
		c := int64(chunk[i])
		g.grid[i] = (d + c - 1) / c
		n *= g.grid[i]
	}
	if n > 1<<31 {
		return nil, fmt.Errorf("%w: %d chunks", errFormat, n)
	}
	g.refs = make([]chunkRef, n)
	return g, nil
}

// set records the chunk whose first element has coordinates off.
func (g *chunkGrid) set(off []uint64, chunk []uint64, r chunkRef) {
	k := int64(0)
	for i := range g.grid {
		c := int64(off[i] / chunk[i])
		if c >= g.grid[i] {
			return // beyond the current extent (dataset shrunk): ignore
		}
		k = k*g.grid[i] + c
	}
	g.refs[k] = r
}

// buildIndex reads the dataset's chunk index into a grid.
func (d *Dataset) buildIndex() (*chunkGrid, error) {
	l := d.layout
	g, err := newGrid(d.shape, l.chunk)
	if err != nil {
		return nil, err
	}
	if undefinedAddr(l.addr, d.f.m.offsetSize) {
		return g, nil // no chunk written yet
	}
	chunkBytes := uint64(d.elemSize)
	for _, c := range l.chunk {
		chunkBytes *= c
	}
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
		for k := range g.refs {
			g.refs[k] = chunkRef{addr: l.addr + uint64(k)*chunkBytes, size: chunkBytes}
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
func (d *Dataset) walkBTreeV1(g *chunkGrid, root uint64) error {
	m := d.f.m
	rank := len(d.shape)
	keySize := 8 + 8*(rank+1)
	hdrSize := 8 + 2*m.offsetSize
	stack := []uint64{root}
	seen := map[uint64]bool{}
	off := make([]uint64, rank)
	for len(stack) > 0 {
		addr := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[addr] {
			return fmt.Errorf("%w: B-tree node %d visited twice", errFormat, addr)
		}
		seen[addr] = true
		h, err := m.readAt(addr, hdrSize)
		if err != nil {
			return fmt.Errorf("B-tree node: %w", err)
		}
		if string(h[:4]) != "TREE" || h[4] != 1 {
			return fmt.Errorf("%w: no chunk B-tree node at %d", errFormat, addr)
		}
		level := h[5]
		n := int(binary.LittleEndian.Uint16(h[6:]))
		body, err := m.readAt(addr+uint64(hdrSize), n*(keySize+m.offsetSize)+keySize)
		if err != nil {
			return fmt.Errorf("B-tree node: %w", err)
		}
		for i := 0; i < n; i++ {
			key := body[i*(keySize+m.offsetSize):]
			child := leUint(key[keySize:], m.offsetSize)
			if level > 0 {
				stack = append(stack, child)
				continue
			}
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
		}
	}
	return nil
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
	if n > uint64(len(g.refs)) {
		return fmt.Errorf("%w: fixed array holds %d entries for %d chunks", errFormat, n, len(g.refs))
	}
	if n > uint64(1)<<pageBits {
		return fmt.Errorf("paged fixed array (%d entries, pages of %d) is not supported", n, 1<<pageBits)
	}
	if undefinedAddr(dblock, os) {
		return nil
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
			w := entrySize - os - 4
			r.size = leUint(e[os:], w)
			r.mask = binary.LittleEndian.Uint32(e[os+w:])
		}
		if !undefinedAddr(r.addr, os) {
			g.refs[k] = r
		}
	}
	return nil
}
