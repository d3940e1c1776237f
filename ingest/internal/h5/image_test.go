package h5

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"scpipe/internal/lookup3"
)

// image builds HDF5 files byte by byte, as the specification lays them
// out, for the structures no writer at hand produces conformingly: groups
// and attributes in dense storage (fractal heaps indexed by version-2
// B-trees; scigolib/hdf5's writer departs from the format there).
// Addresses and lengths are 8 bytes.
type image struct{ b []byte }

const undef = ^uint64(0)

func le(n int, v uint64) []byte {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, v)
	return b[:n]
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// withChecksum appends the lookup3 checksum of b.
func withChecksum(b []byte) []byte { return append(b, le(4, uint64(lookup3.Sum(b)))...) }

// alloc reserves n bytes (8-aligned) and returns their address.
func (im *image) alloc(n int) uint64 {
	at := uint64(len(im.b))
	im.b = append(im.b, make([]byte, (n+7)&^7)...)
	return at
}

// put writes b at a new address and returns it.
func (im *image) put(b []byte) uint64 {
	at := im.alloc(len(b))
	copy(im.b[at:], b)
	return at
}

// superblock writes a version-2 superblock at 0 for the root group at
// root; call it last (it records the end of the file).
func (im *image) superblock(root uint64) []byte {
	sb := withChecksum(cat([]byte(signature), []byte{2, 8, 8, 0}, le(8, 0), le(8, undef), le(8, uint64(len(im.b))), le(8, root)))
	copy(im.b, sb)
	return im.b
}

type hdrMsg struct {
	typ  byte
	data []byte
}

// ohdr writes a version-2 object header holding msgs.
func (im *image) ohdr(msgs ...hdrMsg) uint64 {
	var body []byte
	for _, m := range msgs {
		body = append(body, m.typ)
		body = append(body, le(2, uint64(len(m.data)))...)
		body = append(body, 0)
		body = append(body, m.data...)
	}
	return im.put(withChecksum(cat([]byte("OHDR"), []byte{2, 2}, le(4, uint64(len(body))), body)))
}

// int32Dataset writes a dataset of the given values, stored compactly.
func (im *image) int32Dataset(vals ...int32) uint64 {
	data := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(data[4*i:], uint32(v))
	}
	space := cat([]byte{2, 1, 0, 1}, le(8, uint64(len(vals))))
	dtype := cat([]byte{0x10, 0x08, 0, 0}, le(4, 4), le(2, 0), le(2, 32))
	layout := cat([]byte{3, layoutCompact}, le(2, uint64(len(data))), data)
	return im.ohdr(hdrMsg{msgDataspace, space}, hdrMsg{msgDatatype, dtype}, hdrMsg{msgLayout, layout})
}

// linkMessage encodes a hard link.
func linkMessage(name string, addr uint64) []byte {
	return cat([]byte{1, 0, byte(len(name))}, []byte(name), le(8, addr))
}

// stringAttribute encodes a version-3 attribute message holding a scalar
// NUL-padded string of 16 bytes.
func stringAttribute(name, value string) []byte {
	dtype := cat([]byte{0x13, 0x01, 0, 0}, le(4, 16))
	space := []byte{2, 0, 0, 0}
	val := make([]byte, 16)
	copy(val, value)
	return cat([]byte{3, 0}, le(2, uint64(len(name)+1)), le(2, uint64(len(dtype))), le(2, uint64(len(space))), []byte{0},
		[]byte(name), []byte{0}, dtype, space, val)
}

// heapParams are a fractal heap's doubling table: libhdf5's defaults for
// groups, with rootRows 0 for a heap whose root is one direct block.
type heapParams struct {
	width, start, maxDirect, heapBits, rootRows int
}

// fractalHeap stores objs in a new fractal heap and returns its address
// and the objects' 7-byte heap IDs (offsets of 4 bytes, lengths of 2).
func (im *image) fractalHeap(p heapParams, objs [][]byte) (uint64, [][]byte) {
	const offBytes = 4
	hdr := im.alloc(22 + 12*8 + 3*8 + 4)
	// Direct blocks in row order; a block is filled, then the next.
	var ids [][]byte
	var blocks []uint64
	nblocks := 1
	if p.rootRows > 0 {
		nblocks = p.rootRows * p.width
	}
	k := 0
	var blockOff uint64
	for bl := 0; bl < nblocks; bl++ {
		size := p.start
		if r := bl / max(p.width, 1); p.rootRows > 0 && r > 1 {
			size = p.start << (r - 1)
		}
		if k == len(objs) {
			blocks = append(blocks, undef)
			continue
		}
		b := cat([]byte("FHDB"), []byte{0}, le(8, hdr), le(offBytes, blockOff))
		for k < len(objs) && len(b)+len(objs[k]) <= size {
			ids = append(ids, cat([]byte{0}, le(offBytes, blockOff+uint64(len(b))), le(2, uint64(len(objs[k])))))
			b = append(b, objs[k]...)
			k++
		}
		b = append(b, make([]byte, size-len(b))...)
		blocks = append(blocks, im.put(b))
		blockOff += uint64(size)
	}
	if k != len(objs) {
		panic("fractal heap test image: objects do not fit")
	}
	root := blocks[0]
	if p.rootRows > 0 {
		ib := cat([]byte("FHIB"), []byte{0}, le(8, hdr), le(offBytes, 0))
		for _, a := range blocks {
			ib = append(ib, le(8, a)...)
		}
		root = im.put(withChecksum(ib))
	}
	h := cat([]byte("FRHP"), []byte{0}, le(2, 7), le(2, 0), []byte{0}, le(4, 4096),
		le(8, 0), le(8, undef), le(8, 0), le(8, undef), // next huge ID, huge B-tree, free space, its manager
		le(8, 0), le(8, 0), le(8, 0), le(8, uint64(len(objs))), // managed space, allocated, iterator, objects
		le(8, 0), le(8, 0), le(8, 0), le(8, 0), // huge and tiny objects
		le(2, uint64(p.width)), le(8, uint64(p.start)), le(8, uint64(p.maxDirect)), le(2, uint64(p.heapBits)),
		le(2, uint64(max(p.rootRows, 2))), le(8, root), le(2, uint64(p.rootRows)))
	copy(im.b[hdr:], withChecksum(h))
	return hdr, ids
}

// btree2 writes a version-2 B-tree of records of type typ (all of recSize
// bytes) in nodes of nodeSize bytes: one leaf, or, when they do not fit,
// an internal node over leaves (depth 1). The record counts of the child
// pointers are one byte, as for leaves of fewer than 256 records.
func (im *image) btree2(typ byte, nodeSize, recSize int, recs [][]byte) uint64 {
	perLeaf := (nodeSize - 10) / recSize
	leaf := func(rs [][]byte) uint64 {
		b := cat([]byte("BTLF"), []byte{0, typ}, cat(rs...))
		b = withChecksum(b)
		return im.put(append(b, make([]byte, nodeSize-len(b))...))
	}
	root, depth := uint64(0), 0
	if len(recs) <= perLeaf {
		root = leaf(recs)
	} else {
		// Leaves of perLeaf-1 records, one record between each two.
		depth = 1
		var between [][]byte
		var ptrs []byte
		for i := 0; i < len(recs); {
			n := min(perLeaf-1, len(recs)-i)
			if len(recs)-i-n == 1 {
				n-- // leave a record between this leaf and a last, non-empty one
			}
			ptrs = append(ptrs, cat(le(8, leaf(recs[i:i+n])), []byte{byte(n)})...)
			i += n
			if i < len(recs) {
				between = append(between, recs[i])
				i++
			}
		}
		b := withChecksum(cat([]byte("BTIN"), []byte{0, typ}, cat(between...), ptrs))
		root = im.put(append(b, make([]byte, nodeSize-len(b))...))
		recs = between
	}
	return im.put(withChecksum(cat([]byte("BTHD"), []byte{0, typ}, le(4, uint64(nodeSize)), le(2, uint64(recSize)),
		le(2, uint64(depth)), []byte{100, 40}, le(8, root), le(2, uint64(len(recs))), le(8, 0))))
}

// symbolEntry is a member of a symbol-table group; soft marks a soft link,
// whose target is a path rather than addr.
type symbolEntry struct {
	name string
	addr uint64
	soft bool
}

// symbolTableGroup writes an old-style group: a local heap of names, one
// symbol table node and a version-1 B-tree leaf pointing to it, and an
// object header holding the symbol table message.
func (im *image) symbolTableGroup(entries []symbolEntry) uint64 {
	heap := []byte{0} // offset 0: the empty name
	var snod []byte
	for _, e := range entries {
		off := len(heap)
		heap = append(heap, e.name...)
		heap = append(heap, 0)
		cache := uint64(0)
		if e.soft {
			cache = 2
		}
		snod = append(snod, cat(le(8, uint64(off)), le(8, e.addr), le(4, cache), le(4, 0), make([]byte, 16))...)
	}
	data := im.put(heap)
	lheap := im.put(cat([]byte("HEAP"), []byte{0, 0, 0, 0}, le(8, uint64(len(heap))), le(8, undef), le(8, data)))
	node := im.put(cat([]byte("SNOD"), []byte{1, 0}, le(2, uint64(len(entries))), snod))
	btree := im.put(cat([]byte("TREE"), []byte{btreeGroup, 0}, le(2, 1), le(8, undef), le(8, undef),
		le(8, 0), le(8, node), le(8, uint64(len(heap)-1))))
	return im.ohdr(hdrMsg{msgSymbolTable, cat(le(8, btree), le(8, lheap))})
}

// int32Type is the datatype message of a little-endian int32.
var int32Type = cat([]byte{0x10, 0x08, 0, 0}, le(4, 4), le(2, 0), le(2, 32))

// space1 is a version-1 dataspace message of one dimension of n.
func space1(n uint64) []byte { return cat([]byte{1, 1, 0, 0, 0, 0, 0, 0}, le(8, n)) }

// deflatePipeline is a version-1 filter pipeline of deflate at level 4.
var deflatePipeline = cat([]byte{1, 1, 0, 0, 0, 0, 0, 0}, le(2, filterDeflate), le(2, 0), le(2, 0), le(2, 1), le(4, 4), le(4, 0))

// chunkedInt32 writes a 1-D int32 dataset of vals in deflated chunks of
// chunk elements (whole ones, as libhdf5 stores them), indexed by a
// version-1 B-tree leaf, and returns its header's address and the
// B-tree's.
func (im *image) chunkedInt32(vals []int32, chunk int) (uint64, uint64) {
	var body []byte
	for i, c := range int32Chunks(vals, chunk) {
		z := deflated(c)
		body = append(body, cat(le(4, uint64(len(z))), le(4, 0), le(8, uint64(i*chunk)), le(8, 0), le(8, im.put(z)))...)
	}
	body = append(body, cat(le(4, 0), le(4, 0), le(8, uint64(len(vals))), le(8, 0))...)
	n := (len(vals) + chunk - 1) / chunk
	tree := im.put(cat([]byte("TREE"), []byte{btreeChunk, 0}, le(2, uint64(n)), le(8, undef), le(8, undef), body))
	layout := cat([]byte{3, layoutChunked, 2}, le(8, tree), le(4, uint64(chunk)), le(4, 4))
	return im.ohdr(hdrMsg{msgDataspace, space1(uint64(len(vals)))}, hdrMsg{msgDatatype, int32Type},
		hdrMsg{msgLayout, layout}, hdrMsg{msgFilters, deflatePipeline}), tree
}

// vlenStrings writes a 1-D dataset of variable-length strings held in one
// global heap collection.
func (im *image) vlenStrings(ss ...string) uint64 {
	var objs []byte
	for i, s := range ss {
		data := append([]byte(s), make([]byte, (8-len(s)%8)%8)...)
		objs = append(objs, cat(le(2, uint64(i+1)), le(2, 1), le(4, 0), le(8, uint64(len(s))), data)...)
	}
	free := 4096 - 16 - len(objs) // a collection is at least 4 KiB; the rest is free space (object 0)
	col := im.put(cat([]byte("GCOL"), []byte{1, 0, 0, 0}, le(8, 4096), objs, le(2, 0), le(2, 0), le(4, 0), le(8, uint64(free)), make([]byte, free-16)))
	var refs []byte
	for i, s := range ss {
		refs = append(refs, cat(le(4, uint64(len(s))), le(8, col), le(4, uint64(i+1)))...)
	}
	vlen := cat([]byte{0x19, 0x01, 0, 0}, le(4, 16), []byte{0x13, 0, 0, 0}, le(4, 1))
	layout := cat([]byte{3, layoutCompact}, le(2, uint64(len(refs))), refs)
	return im.ohdr(hdrMsg{msgDataspace, space1(uint64(len(ss)))}, hdrMsg{msgDatatype, vlen}, hdrMsg{msgLayout, layout})
}

// group writes a new-style group of hard links.
func (im *image) group(links ...link) uint64 {
	var msgs []hdrMsg
	for _, l := range links {
		msgs = append(msgs, hdrMsg{msgLink, linkMessage(l.name, l.addr)})
	}
	return im.ohdr(msgs...)
}

// deflated returns b as a zlib stream.
func deflated(b []byte) []byte {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(b)
	w.Close()
	return z.Bytes()
}

// int32Chunks returns vals in whole chunks of chunk elements.
func int32Chunks(vals []int32, chunk int) [][]byte {
	var out [][]byte
	for lo := 0; lo < len(vals); lo += chunk {
		raw := make([]byte, 4*chunk)
		for i := lo; i < min(lo+chunk, len(vals)); i++ {
			binary.LittleEndian.PutUint32(raw[4*(i-lo):], uint32(vals[i]))
		}
		out = append(out, raw)
	}
	return out
}

// v4Int32 writes a 1-D int32 dataset of vals in chunks of chunk elements
// under a version-4 layout message with the chunk index index: a single
// deflated chunk (chunk must cover vals), chunks stored raw one after
// another (implicit), or deflated chunks listed in a fixed array.
func (im *image) v4Int32(vals []int32, chunk int, index byte) uint64 {
	chunks := int32Chunks(vals, chunk)
	msgs := []hdrMsg{{msgDataspace, space1(uint64(len(vals)))}, {msgDatatype, int32Type}}
	layout := func(flags byte, extra []byte, addr uint64) []byte {
		return cat([]byte{4, layoutChunked, flags, 2, 4}, le(4, uint64(chunk)), le(4, 4), []byte{index}, extra, le(8, addr))
	}
	switch index {
	case indexSingle:
		z := deflated(chunks[0])
		msgs = append(msgs, hdrMsg{msgLayout, layout(2, cat(le(8, uint64(len(z))), le(4, 0)), im.put(z))},
			hdrMsg{msgFilters, deflatePipeline})
	case indexImplicit:
		msgs = append(msgs, hdrMsg{msgLayout, layout(0, nil, im.put(cat(chunks...)))})
	case indexFixedArray:
		hdr := im.alloc(8 + 8 + 8 + 4)
		var entries []byte
		for _, c := range chunks {
			z := deflated(c)
			entries = append(entries, cat(le(8, im.put(z)), le(4, uint64(len(z))), le(4, 0))...)
		}
		dblock := im.put(withChecksum(cat([]byte("FADB"), []byte{0, 1}, le(8, hdr), entries)))
		copy(im.b[hdr:], withChecksum(cat([]byte("FAHD"), []byte{0, 1, 16, 10}, le(8, uint64(len(chunks))), le(8, dblock))))
		msgs = append(msgs, hdrMsg{msgLayout, layout(0, []byte{10}, hdr)}, hdrMsg{msgFilters, deflatePipeline})
	}
	return im.ohdr(msgs...)
}

// chunkIndexFile holds, under a new-style root group, the datasets
// "single", "implicit" and "fixed" of v4Int32 over vals, and "unwritten",
// as many elements never written (contiguous storage without an address)
// of fill value 7.
func chunkIndexFile(vals []int32) []byte {
	im := &image{}
	im.alloc(48)
	unwritten := im.ohdr(hdrMsg{msgDataspace, space1(uint64(len(vals)))}, hdrMsg{msgDatatype, int32Type},
		hdrMsg{msgFill, cat([]byte{2, 2, 2, 1}, le(4, 4), le(4, 7))},
		hdrMsg{msgLayout, cat([]byte{3, layoutContiguous}, le(8, undef), le(8, 0))})
	root := im.group(
		link{"fixed", im.v4Int32(vals, 16, indexFixedArray)},
		link{"implicit", im.v4Int32(vals, 16, indexImplicit)},
		link{"single", im.v4Int32(vals, len(vals), indexSingle)},
		link{"unwritten", unwritten},
	)
	return im.superblock(root)
}
