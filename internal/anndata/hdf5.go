package anndata

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
)

// The HDF5 layout this writer produces (HDF5 file format specification,
// version 0 structures throughout, the ones every HDF5 reader since 1.0
// reads, h5py and our own ingest included):
//
//   - superblock version 0 at offset 0, 8-byte addresses and lengths;
//   - version-1 object headers, all messages in one chunk;
//   - groups as symbol tables: a version-1 B-tree (one leaf level of up to
//     2·internalK symbol-table nodes of up to 2·leafK entries each) and a
//     local heap holding the link names;
//   - datasets contiguous, little-endian, never filtered: a scalar or
//     simple dataspace (version 1), a new-style fill value message
//     (version 2, undefined) and a version-3 layout message;
//   - datasets of strings variable-length UTF-8 (h5py's str, as anndata
//     writes them), each string an object of a global heap collection
//     (version 1, at most 65 535 objects each); attributes' strings
//     fixed-length, null-padded UTF-8 (numpy "S" strings, which h5py's
//     asstr and anndata decode). A fixed-length array is as wide as its
//     longest string: one gene name of 65 003 characters once made each
//     of var's three name columns 543 MB;
//   - attributes (version 1) with scalar or simple dataspaces.
//
// Data are written as they are added, object headers and the groups'
// indexes when the file is committed, and the superblock last.

const (
	undef = ^uint64(0) // HDF5's undefined address

	// The group K values of the files this package creates (appending
	// keeps the file's): 2·leafK entries per symbol-table node, 2·internalK
	// children per B-tree node.
	defaultLeafK     = 16
	defaultInternalK = 16

	superblockSize = 96
)

var signature = []byte{0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'}

// Message types of object headers (format spec IV.A.2).
const (
	msgDataspace   = 0x01
	msgDatatype    = 0x03
	msgFillValue   = 0x05
	msgLayout      = 0x08
	msgAttribute   = 0x0C
	msgSymbolTable = 0x11
)

// node is a group or a dataset of the file being written.
type node struct {
	name     string
	group    bool
	children []*node // groups: sorted by name when the file is committed
	attrs    []attribute

	// datasets: type, shape and where the data lie
	dtype            []byte
	dims             []uint64 // nil: scalar
	dataAddr, nbytes uint64

	addr        uint64 // object header, once written
	btree, heap uint64 // groups: their index, once written

	// old is set on a group of the file appended to: its links as found,
	// those removed, and where its symbol-table message lies.
	old *existing
}

type attribute struct {
	name  string
	dtype []byte
	dims  []uint64 // nil: scalar
	data  []byte
}

// h5file writes an HDF5 file sequentially: end is the next free address.
type h5file struct {
	f                *os.File
	end              uint64
	root             *node
	leafK, internalK int
	app              *appendInfo // nil: a new file
}

func newH5File(f *os.File) (*h5file, error) {
	h := &h5file{f: f, end: superblockSize, root: &node{group: true}, leafK: defaultLeafK, internalK: defaultInternalK}
	// The superblock is written last, when the root's address is known.
	if _, err := f.WriteAt(make([]byte, superblockSize), 0); err != nil {
		return nil, err
	}
	return h, nil
}

// write appends b at the end of the file, 8-byte aligned, and returns its
// address.
func (h *h5file) write(b []byte) (uint64, error) {
	h.end = align8(h.end)
	addr := h.end
	if _, err := h.f.WriteAt(b, int64(addr)); err != nil {
		return 0, err
	}
	h.end += uint64(len(b))
	return addr, nil
}

// lookup returns the node at the absolute path, creating missing groups
// when create is set.
func (h *h5file) lookup(path string, create bool) (*node, error) {
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("path %q is not absolute", path)
	}
	n := h.root
	for _, part := range strings.Split(strings.Trim(path, "/"), "/") {
		if part == "" {
			continue
		}
		if !n.group {
			return nil, fmt.Errorf("%s: %s is a dataset, not a group", path, n.name)
		}
		var next *node
		for _, c := range n.children {
			if c.name == part {
				next = c
				break
			}
		}
		if next == nil && n.old != nil {
			found, err := h.openExisting(n, part)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			next = found
		}
		if next == nil {
			if !create {
				return nil, fmt.Errorf("%s: no such object", path)
			}
			next = &node{name: part, group: true}
			n.children = append(n.children, next)
		}
		n = next
	}
	return n, nil
}

// dataset adds a dataset at path (its parent groups created as needed)
// holding data, of the given type and shape.
func (h *h5file) dataset(path string, dtype []byte, dims []uint64, data []byte) error {
	return h.streamDataset(path, dtype, func(w *bufio.Writer) ([]uint64, error) {
		_, err := w.Write(data)
		return dims, err
	})
}

// streamDataset adds a dataset at path (its parent groups created as
// needed) whose data fill writes, returning the dataset's shape: data of
// any size go to the file through a buffer, never whole in memory.
func (h *h5file) streamDataset(path string, dtype []byte, fill func(w *bufio.Writer) ([]uint64, error)) error {
	i := strings.LastIndexByte(path, '/')
	parent, err := h.lookup(path[:i+1], true)
	if err != nil {
		return err
	}
	name := path[i+1:]
	if name == "" || strings.ContainsRune(name, 0) {
		return fmt.Errorf("bad dataset name %q", path)
	}
	for _, c := range parent.children {
		if c.name == name {
			return fmt.Errorf("%s already exists", path)
		}
	}
	if parent.old.has(name) {
		return fmt.Errorf("%s already exists in the file", path)
	}
	h.end = align8(h.end)
	ow := io.NewOffsetWriter(h.f, int64(h.end))
	bw := bufio.NewWriterSize(ow, 1<<20)
	dims, err := fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return err
	}
	written, _ := ow.Seek(0, io.SeekCurrent)
	n := &node{name: name, dtype: dtype, dims: dims, dataAddr: undef, nbytes: uint64(written)}
	if written > 0 {
		n.dataAddr = h.end
		h.end += uint64(written)
	}
	parent.children = append(parent.children, n)
	return nil
}

// attr sets an attribute of the object at path.
func (h *h5file) attr(path, name string, dtype []byte, dims []uint64, data []byte) error {
	n, err := h.lookup(path, false)
	if err != nil {
		return err
	}
	if n.old != nil {
		return nil // an object of the file appended to keeps its attributes as they are
	}
	n.attrs = slices.DeleteFunc(n.attrs, func(a attribute) bool { return a.name == name })
	n.attrs = append(n.attrs, attribute{name, dtype, dims, data})
	return nil
}

// commit writes every object header and group index, then the
// superblock.
func (h *h5file) commit() error {
	if err := h.writeNode(h.root); err != nil {
		return err
	}
	if h.app != nil {
		return h.commitAppend()
	}
	h.end = align8(h.end)
	sb := make([]byte, 0, superblockSize)
	sb = append(sb, signature...)
	sb = append(sb, 0, 0, 0, 0, 0, 8, 8, 0) // versions; sizes of offsets and lengths
	sb = le16(sb, uint16(h.leafK))
	sb = le16(sb, uint16(h.internalK))
	sb = le32(sb, 0)     // consistency flags
	sb = le64(sb, 0)     // base address
	sb = le64(sb, undef) // free-space info
	sb = le64(sb, h.end) // end of file
	sb = le64(sb, undef) // driver information block
	sb = append(sb, entryOf(h.root, 0)...)
	if _, err := h.f.WriteAt(sb, 0); err != nil {
		return err
	}
	// The file must be end long: the last header may be shorter than its
	// aligned end.
	return h.f.Truncate(int64(h.end))
}

// writeNode writes the headers of n's subtree, children first.
func (h *h5file) writeNode(n *node) error {
	var msgs [][]byte
	if n.group {
		for _, c := range n.children {
			if err := h.writeNode(c); err != nil {
				return err
			}
		}
		if err := h.writeIndex(n); err != nil {
			return err
		}
		if n.old != nil {
			return h.patchGroup(n) // its header stays; its symbol-table message points at the new index
		}
		var st []byte
		st = le64(st, n.btree)
		st = le64(st, n.heap)
		msgs = append(msgs, message(msgSymbolTable, st))
	} else {
		msgs = append(msgs, message(msgDataspace, dataspace(n.dims)), message(msgDatatype, n.dtype),
			message(msgFillValue, []byte{2, 2, 2, 0}), // version 2; late allocation; write if set; undefined
			message(msgLayout, layout(n.dataAddr, n.nbytes)))
	}
	for _, a := range n.attrs {
		msgs = append(msgs, message(msgAttribute, attributeMessage(a)))
	}
	size := 0
	for _, m := range msgs {
		size += len(m)
	}
	oh := []byte{1, 0}
	oh = le16(oh, uint16(len(msgs)))
	oh = le32(oh, 1) // reference count
	oh = le32(oh, uint32(size))
	oh = append(oh, 0, 0, 0, 0) // the prefix is 16 bytes with its padding
	for _, m := range msgs {
		oh = append(oh, m...)
	}
	var err error
	n.addr, err = h.write(oh)
	return err
}

// indexEntry is one link of a group's symbol table.
type indexEntry struct {
	name    string
	addr    uint64 // object header
	cache   uint32 // 1: scratch holds the group's B-tree and heap
	scratch [16]byte
}

// entryOf is the entry of a written node.
func entryOf(n *node, nameOffset uint64) []byte {
	e := indexEntry{name: n.name, addr: n.addr}
	if n.group {
		e.cache = 1
		binary.LittleEndian.PutUint64(e.scratch[:], n.btree)
		binary.LittleEndian.PutUint64(e.scratch[8:], n.heap)
	}
	return encodeEntry(nil, e, nameOffset)
}

func encodeEntry(b []byte, e indexEntry, nameOffset uint64) []byte {
	b = le64(b, nameOffset)
	b = le64(b, e.addr)
	b = le32(b, e.cache)
	b = le32(b, 0)
	return append(b, e.scratch[:]...)
}

// writeIndex writes the local heap, symbol-table nodes and B-tree of a
// group whose children have their headers: its new children, and those of
// the file appended to that it keeps.
func (h *h5file) writeIndex(n *node) error {
	var entries []indexEntry
	for _, c := range n.children {
		var e indexEntry
		if err := decodeEntry(entryOf(c, 0), &e); err != nil {
			return err
		}
		e.name = c.name
		entries = append(entries, e)
	}
	if n.old != nil {
		for _, e := range n.old.entries {
			if !n.old.removed[e.name] && !slices.ContainsFunc(n.children, func(c *node) bool { return c.name == e.name }) {
				entries = append(entries, e)
			}
		}
	}
	slices.SortFunc(entries, func(a, b indexEntry) int { return strings.Compare(a.name, b.name) })
	heap := make([]byte, 8) // offset 0: the empty name
	offsets := make([]uint64, len(entries))
	for i, e := range entries {
		offsets[i] = uint64(len(heap))
		heap = append(heap, e.name...)
		heap = append(heap, make([]byte, 8-len(e.name)%8)...) // null, then padding to 8
	}
	nodes, err := h.writeEntries(entries, offsets)
	if err != nil {
		return err
	}
	dataAddr, err := h.write(heap)
	if err != nil {
		return err
	}
	hh := []byte("HEAP")
	hh = append(hh, 0, 0, 0, 0)
	hh = le64(hh, uint64(len(heap)))
	hh = le64(hh, 1) // no free block (H5HL_FREE_NULL: the C library refuses the undefined address)
	hh = le64(hh, dataAddr)
	if n.heap, err = h.write(hh); err != nil {
		return err
	}
	n.btree, err = h.writeBTree(nodes)
	return err
}

// snod is one symbol-table node: its address and the heap offset of its
// last (largest) name.
type snod struct{ addr, lastName uint64 }

// writeEntries writes the symbol-table nodes of a group's entries (sorted),
// 2·leafK each.
func (h *h5file) writeEntries(entries []indexEntry, offsets []uint64) ([]snod, error) {
	var nodes []snod // an empty group has none
	per := 2 * h.leafK
	for lo := 0; lo < len(entries); lo += per {
		hi := min(lo+per, len(entries))
		b := []byte("SNOD")
		b = append(b, 1, 0)
		b = le16(b, uint16(hi-lo))
		for i := lo; i < hi; i++ {
			b = encodeEntry(b, entries[i], offsets[i])
		}
		b = append(b, make([]byte, 8+per*40-len(b))...) // readers read the whole node
		addr, err := h.write(b)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, snod{addr, offsets[hi-1]})
	}
	return nodes, nil
}

// writeBTree writes the one-level B-tree over a group's symbol-table
// nodes.
func (h *h5file) writeBTree(nodes []snod) (uint64, error) {
	if len(nodes) > 2*h.internalK {
		return 0, fmt.Errorf("a group of more than %d members", 2*h.internalK*2*h.leafK)
	}
	b := []byte("TREE")
	b = append(b, 0, 0) // group nodes; leaf level
	b = le16(b, uint16(len(nodes)))
	b = le64(b, undef)
	b = le64(b, undef)
	b = le64(b, 0) // key 0: the empty name
	for _, s := range nodes {
		b = le64(b, s.addr)
		b = le64(b, s.lastName)
	}
	b = append(b, make([]byte, 24+(4*h.internalK+1)*8-len(b))...)
	return h.write(b)
}

// message frames one object-header message (version 1 header), its body
// padded to 8 bytes.
func message(typ uint16, body []byte) []byte {
	padded := int(align8(uint64(len(body))))
	b := le16(nil, typ)
	b = le16(b, uint16(padded))
	b = append(b, 0, 0, 0, 0)
	b = append(b, body...)
	return append(b, make([]byte, padded-len(body))...)
}

// dataspace encodes a version-1 dataspace: rank 0 is a scalar.
func dataspace(dims []uint64) []byte {
	b := []byte{1, byte(len(dims)), 0, 0, 0, 0, 0, 0}
	for _, d := range dims {
		b = le64(b, d)
	}
	return b
}

// layout encodes a version-3 contiguous layout.
func layout(addr, size uint64) []byte {
	b := []byte{3, 1}
	b = le64(b, addr)
	return le64(b, size)
}

func attributeMessage(a attribute) []byte {
	ds := dataspace(a.dims)
	b := []byte{1, 0}
	b = le16(b, uint16(len(a.name)+1))
	b = le16(b, uint16(len(a.dtype)))
	b = le16(b, uint16(len(ds)))
	b = padTo8(append(append(b, a.name...), 0))
	b = padTo8(append(b, a.dtype...))
	b = padTo8(append(b, ds...))
	return append(b, a.data...)
}

// Datatype messages.
var (
	typeFloat64 = func() []byte {
		b := []byte{0x11, 0x20, 63, 0} // version 1, class 1; implied mantissa msb; sign at bit 63
		b = le32(b, 8)
		b = le16(b, 0)
		b = le16(b, 64)
		b = append(b, 52, 11, 0, 52)
		return le32(b, 1023)
	}()
	typeFloat32 = func() []byte {
		b := []byte{0x11, 0x20, 31, 0}
		b = le32(b, 4)
		b = le16(b, 0)
		b = le16(b, 32)
		b = append(b, 23, 8, 0, 23)
		return le32(b, 127)
	}()
	typeInt64 = typeInt(8)
	typeInt32 = typeInt(4)
)

// typeInt is a signed little-endian integer of size bytes.
func typeInt(size int) []byte {
	b := []byte{0x10, 0x08, 0, 0} // version 1, class 0; signed, little-endian
	b = le32(b, uint32(size))
	b = le16(b, 0)
	return le16(b, uint16(8*size))
}

// typeString is a fixed-length, null-padded UTF-8 string of n bytes.
func typeString(n int) []byte {
	b := []byte{0x13, 0x11, 0, 0} // version 1, class 3; null pad, UTF-8
	return le32(b, uint32(n))
}

// typeVLenString is a variable-length, null-terminated UTF-8 string
// (HDF5's H5T_VARIABLE strings, h5py's str): 16 bytes an element, the
// string's length and its global heap ID (collection address, object
// index); the base type is HDF5's, an unsigned byte.
var typeVLenString = func() []byte {
	b := []byte{0x19, 0x01, 0x01, 0} // version 1, class 9; a string, null-terminated, UTF-8
	b = le32(b, 16)
	b = append(b, 0x10, 0, 0, 0) // version 1, class 0; unsigned, little-endian
	b = le32(b, 1)
	b = le16(b, 0)
	return le16(b, 8)
}()

// Global heap collections: a 16-byte header, then objects of a 16-byte
// header and their data padded to 8 bytes, then the free space (object 0)
// to the collection's size, at least 4 096 bytes as the HDF5 library
// makes them.
const (
	heapHeaderSize  = 16
	heapMinSize     = 4096
	heapMaxObjects  = 1<<16 - 1
	heapTargetBytes = 1 << 20 // a reader loads a collection whole
)

// vlenStrings writes v into global heap collections at the end of the
// file and returns the dataset's elements referring to them. An empty
// string is stored as no object, as the HDF5 library stores it.
func (h *h5file) vlenStrings(v []string) ([]byte, error) {
	data := make([]byte, 0, 16*len(v))
	for lo := 0; lo < len(v); {
		hi, size := lo, uint64(heapHeaderSize)
		for hi < len(v) && hi-lo < heapMaxObjects && (hi == lo || size+16+align8(uint64(len(v[hi]))) <= heapTargetBytes) {
			if len(v[hi]) > 0 {
				size += 16 + align8(uint64(len(v[hi])))
			}
			hi++
		}
		total := max(size+16, heapMinSize) // room for the free-space object's header
		col := make([]byte, 0, total)
		col = append(col, "GCOL"...)
		col = append(col, 1, 0, 0, 0)
		col = le64(col, total)
		h.end = align8(h.end)
		addr := h.end
		idx := 0
		for _, s := range v[lo:hi] {
			if strings.IndexByte(s, 0) >= 0 {
				return nil, errors.New("a string holds a NUL byte")
			}
			data = le32(data, uint32(len(s)))
			if len(s) == 0 {
				data = le64(data, 0)
				data = le32(data, 0)
				continue
			}
			idx++
			col = le16(col, uint16(idx))
			col = le16(col, 1) // reference count
			col = le32(col, 0)
			col = le64(col, uint64(len(s)))
			col = padTo8(append(col, s...))
			data = le64(data, addr)
			data = le32(data, uint32(idx))
		}
		col = le16(col, 0) // the free space
		col = le16(col, 0)
		col = le32(col, 0)
		col = le64(col, total-uint64(len(col))+8)
		col = append(col, make([]byte, total-uint64(len(col)))...)
		if _, err := h.write(col); err != nil {
			return nil, err
		}
		lo = hi
	}
	return data, nil
}

func float64Bytes(v []float64) []byte {
	b := make([]byte, 0, 8*len(v))
	for _, x := range v {
		b = le64(b, math.Float64bits(x))
	}
	return b
}

func int64Bytes(v []int64) []byte {
	b := make([]byte, 0, 8*len(v))
	for _, x := range v {
		b = le64(b, uint64(x))
	}
	return b
}

// stringBytes lays out v as fixed-length strings of the longest one's
// width (at least 1 byte) and returns the type and the data.
func stringBytes(v []string) ([]byte, []byte, error) {
	width := 1
	for _, s := range v {
		if strings.IndexByte(s, 0) >= 0 {
			return nil, nil, errors.New("a string holds a NUL byte")
		}
		width = max(width, len(s))
	}
	var b bytes.Buffer
	b.Grow(width * len(v))
	pad := make([]byte, width)
	for _, s := range v {
		b.WriteString(s)
		b.Write(pad[:width-len(s)])
	}
	return typeString(width), b.Bytes(), nil
}

func align8(n uint64) uint64 { return (n + 7) &^ 7 }

func padTo8(b []byte) []byte { return append(b, make([]byte, int(align8(uint64(len(b))))-len(b))...) }

func le16(b []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(b, v) }
func le32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func le64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }
