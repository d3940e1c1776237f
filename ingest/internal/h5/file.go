package h5

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
)

// signature is the HDF5 format signature.
const signature = "\x89HDF\r\n\x1a\n"

// errNotHDF5 is wrapped by Open's error for a file without an HDF5 signature.
var errNotHDF5 = errors.New("not an HDF5 file")

// File is an open HDF5 file. Its group tree is loaded at Open; datasets are
// opened on demand. A File may serve several Datasets at once.
type File struct {
	path    string
	os      *os.File
	m       *meta
	root    uint64
	objs    map[uint64]*object // by object header address, loaded at Open
	workers int                // Open's; 1 for a file made without it

	heapMu sync.Mutex
	heaps  map[uint64]map[uint16][]byte // global heap collections by address
}

// IsHDF5 reports whether the file at path carries the HDF5 signature at
// offset 0, 512, 1024, 2048, … (where a user block may push it). It returns
// false, not an error, for a readable file of another format.
func IsHDF5(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("h5: %w", err)
	}
	defer f.Close()
	_, err = findSignature(f)
	if errors.Is(err, errNotHDF5) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("h5: %s: %w", path, err)
	}
	return true, nil
}

func findSignature(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	buf := make([]byte, len(signature))
	for off := int64(0); off+int64(len(signature)) <= st.Size(); {
		if _, err := f.ReadAt(buf, off); err != nil {
			return 0, err
		}
		if string(buf) == signature {
			return off, nil
		}
		if off == 0 {
			off = 512
		} else {
			off *= 2
		}
	}
	return 0, errNotHDF5
}

// Open opens the HDF5 file at path and loads its group tree.
//
// The superblock, object headers, symbol tables, local heaps, link
// messages and dense storage (fractal heaps, version-2 B-trees) are read
// by this package rather than by scigolib/hdf5 v0.14.0, which the package
// used before: that library loads every group at open and allocates
// buffers of sizes read from the file unchecked (a corrupted local heap
// size made it panic or abort the process out of memory, which no
// recover can catch). Here every size is checked against the file's size
// before it is allocated.
//
// A read that covers several chunks decodes them on up to workers
// goroutines, at least 1: the caller (ingest) decides how many.
func Open(path string, workers int) (*File, error) {
	if workers < 1 {
		return nil, fmt.Errorf("h5: %s: %d workers: want at least 1", path, workers)
	}
	osf, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("h5: %w", err)
	}
	f, err := open(path, osf, workers)
	if err != nil {
		osf.Close()
		return nil, fmt.Errorf("h5: %s: %w", path, err)
	}
	return f, nil
}

func open(path string, osf *os.File, workers int) (*File, error) {
	off, err := findSignature(osf)
	if err != nil {
		return nil, err
	}
	if off != 0 {
		return nil, fmt.Errorf("HDF5 files with a %d-byte user block are not supported", off)
	}
	st, err := osf.Stat()
	if err != nil {
		return nil, err
	}
	f, err := newFile(path, &meta{r: osf, size: uint64(st.Size())})
	if err != nil {
		return nil, err
	}
	f.os, f.workers = osf, workers
	return f, nil
}

// newFile reads the superblock and the group tree of the file m reads,
// and completes m with the superblock's sizes.
func newFile(path string, m *meta) (*File, error) {
	b := make([]byte, min(m.size, 256))
	if _, err := m.r.ReadAt(b, 0); err != nil {
		return nil, err
	}
	sb, err := parseSuperblock(b, m.skipChecksums)
	if err != nil {
		return nil, err
	}
	if sb.eof > m.size && !undefinedAddr(sb.eof, sb.offsetSize) {
		return nil, fmt.Errorf("%w: the file is truncated: it has %d of its %d bytes", errFormat, m.size, sb.eof)
	}
	m.offsetSize, m.lengthSize = sb.offsetSize, sb.lengthSize
	f := &File{path: path, m: m, root: sb.root, workers: 1, heaps: map[uint64]map[uint16][]byte{}}
	if err := f.loadTree(sb.root); err != nil {
		return nil, err
	}
	if !f.objs[sb.root].group {
		return nil, fmt.Errorf("%w: the root object is not a group", errFormat)
	}
	return f, nil
}

// Close releases the file. Datasets opened from it become unusable.
func (f *File) Close() error {
	if f.os == nil { // a file read from memory (tests)
		return nil
	}
	if err := f.os.Close(); err != nil {
		return fmt.Errorf("h5: closing %s: %w", f.path, err)
	}
	return nil
}

// Path returns the file's path as given to Open.
func (f *File) Path() string { return f.path }

// Child is one member of a group.
type Child struct {
	Name    string
	IsGroup bool
}

// lookup finds the object at path ("/" or "" is the root group).
func (f *File) lookup(path string) (*object, uint64, bool) {
	addr := f.root
	obj := f.objs[addr]
	for _, part := range strings.Split(strings.Trim(path, "/"), "/") {
		if part == "" {
			continue
		}
		i := sort.Search(len(obj.links), func(i int) bool { return obj.links[i].name >= part })
		if i == len(obj.links) || obj.links[i].name != part {
			return nil, 0, false
		}
		addr = obj.links[i].addr
		obj = f.objs[addr]
	}
	return obj, addr, true
}

// Children lists the members of the group at path, sorted by name.
func (f *File) Children(group string) ([]Child, error) {
	obj, _, ok := f.lookup(group)
	if !ok {
		return nil, fmt.Errorf("h5: %s: group %s not found", f.path, group)
	}
	if !obj.group {
		return nil, fmt.Errorf("h5: %s: %s is not a group", f.path, group)
	}
	out := make([]Child, len(obj.links))
	for i, l := range obj.links {
		out[i] = Child{Name: l.name, IsGroup: f.objs[l.addr].group}
	}
	return out, nil
}

// Exists reports whether an object (group or dataset) exists at path.
func (f *File) Exists(path string) bool {
	_, _, ok := f.lookup(path)
	return ok
}

// IsGroup reports whether path names a group.
func (f *File) IsGroup(path string) bool {
	obj, _, ok := f.lookup(path)
	return ok && obj.group
}

// Dataset opens the dataset at path. Its chunk index is read on the first read.
func (f *File) Dataset(path string) (*Dataset, error) {
	obj, _, ok := f.lookup(path)
	if !ok {
		return nil, fmt.Errorf("h5: %s: dataset %s not found", f.path, path)
	}
	if !obj.has(msgLayout) {
		return nil, fmt.Errorf("h5: %s: %s is not a dataset", f.path, path)
	}
	return f.openDataset(path, obj.msgs)
}

// numericDataset opens path and checks that its elements are numbers.
func (f *File) numericDataset(path string) (*Dataset, error) {
	d, err := f.Dataset(path)
	if err != nil {
		return nil, err
	}
	if _, ok := d.typ.numeric(); !ok {
		return nil, d.errorf("element type %s is not numeric", d.typ)
	}
	return d, nil
}

// rawAll reads every element's raw bytes.
func (d *Dataset) rawAll() ([]byte, error) {
	if d.n*int64(d.elemSize) > 1<<32 {
		return nil, d.errorf("%d elements are too many to load at once", d.n)
	}
	out := make([]byte, d.n*int64(d.elemSize))
	es := int64(d.elemSize)
	err := d.visit(0, d.n, func(off int64, raw []byte) error {
		copy(out[off*es:], raw)
		return nil
	}, nil)
	return out, err
}

// Strings reads a 1-D (or scalar) dataset of fixed-length strings (NUL- or
// space-padded, trimmed) or variable-length strings.
func (f *File) Strings(path string) ([]string, error) {
	d, err := f.Dataset(path)
	if err != nil {
		return nil, err
	}
	if len(d.shape) > 1 {
		return nil, d.errorf("string dataset has rank %d, want 1", len(d.shape))
	}
	if d.typ.class != classString && !d.typ.vlenStr {
		return nil, d.errorf("element type %s is not a string", d.typ)
	}
	raw, err := d.rawAll()
	if err != nil {
		return nil, err
	}
	out, err := f.decodeStrings(d.typ, raw, d.elemSize, 0, int(d.n))
	if err != nil {
		return nil, d.errorf("%w", err)
	}
	return out, nil
}

// CompoundStrings reads the string member field of every element of a 1-D
// compound dataset (AnnData 0.5 stores obs/var tables this way, with the
// names in field "index").
func (f *File) CompoundStrings(path, field string) ([]string, error) {
	d, err := f.Dataset(path)
	if err != nil {
		return nil, err
	}
	if d.typ.class != classCompound {
		return nil, d.errorf("element type %s is not compound", d.typ)
	}
	var m *member
	var names []string
	for i := range d.typ.members {
		names = append(names, d.typ.members[i].name)
		if d.typ.members[i].name == field {
			m = &d.typ.members[i]
		}
	}
	if m == nil {
		return nil, d.errorf("compound has no field %q (fields: %s)", field, strings.Join(names, ", "))
	}
	if m.typ.class != classString && !m.typ.vlenStr {
		return nil, d.errorf("compound field %q has type %s, not a string", field, m.typ)
	}
	if m.offset+m.typ.size > d.elemSize {
		return nil, d.errorf("%w: compound field %q exceeds the element", errFormat, field)
	}
	raw, err := d.rawAll()
	if err != nil {
		return nil, err
	}
	out, err := f.decodeStrings(m.typ, raw, d.elemSize, m.offset, int(d.n))
	if err != nil {
		return nil, d.errorf("field %q: %w", field, err)
	}
	return out, nil
}

// decodeStrings decodes n strings of type t found at byte offset off of each
// stride-byte element of raw.
func (f *File) decodeStrings(t *dtype, raw []byte, stride, off, n int) ([]string, error) {
	out := make([]string, n)
	for i := range out {
		b := raw[i*stride+off : i*stride+off+t.size]
		if t.vlenStr {
			s, err := f.vlenString(b)
			if err != nil {
				return nil, fmt.Errorf("string %d: %w", i, err)
			}
			out[i] = s
			continue
		}
		out[i] = fixedString(b, t.strPad)
	}
	return out, nil
}

// fixedString trims a fixed-length string: at the first NUL, and trailing
// spaces when space-padded.
func fixedString(b []byte, pad int) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if pad == 2 {
		b = bytes.TrimRight(b, " ")
	}
	return string(b)
}

// vlenString resolves a variable-length string reference: length (4 bytes),
// global heap collection address, object index (4 bytes).
func (f *File) vlenString(b []byte) (string, error) {
	os := f.m.offsetSize
	if len(b) < 8+os {
		return "", fmt.Errorf("%w: variable-length reference of %d bytes", errFormat, len(b))
	}
	n := int(leUint(b, 4))
	addr := leUint(b[4:], os)
	idx := uint16(leUint(b[4+os:], 4))
	if n == 0 || addr == 0 || undefinedAddr(addr, os) {
		return "", nil
	}
	obj, err := f.heapObject(addr, idx)
	if err != nil {
		return "", err
	}
	if n > len(obj) {
		return "", fmt.Errorf("%w: string of %d bytes in a %d-byte heap object", errFormat, n, len(obj))
	}
	return string(obj[:n]), nil
}

// heapObject returns object idx of the global heap collection at addr,
// parsing and caching the whole collection on first use.
func (f *File) heapObject(addr uint64, idx uint16) ([]byte, error) {
	f.heapMu.Lock()
	defer f.heapMu.Unlock()
	col, ok := f.heaps[addr]
	if !ok {
		var err error
		if col, err = f.readHeap(addr); err != nil {
			return nil, fmt.Errorf("global heap at %d: %w", addr, err)
		}
		f.heaps[addr] = col
	}
	obj, ok := col[idx]
	if !ok {
		return nil, fmt.Errorf("%w: global heap at %d has no object %d", errFormat, addr, idx)
	}
	return obj, nil
}

func (f *File) readHeap(addr uint64) (map[uint16][]byte, error) {
	ls := f.m.lengthSize
	h, err := f.m.readAt(addr, 8+ls)
	if err != nil {
		return nil, err
	}
	if string(h[:4]) != "GCOL" {
		return nil, fmt.Errorf("%w: missing GCOL signature", errFormat)
	}
	size := leUint(h[8:], ls)
	b, err := f.m.readAt(addr, int(size))
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: collection of %d bytes runs past the end of the file", errFormat, size)
		}
		return nil, err
	}
	col := map[uint16][]byte{}
	for p := 8 + ls; p+8+ls <= len(b); {
		idx := uint16(leUint(b[p:], 2))
		n := int(leUint(b[p+8:], ls))
		p += 8 + ls
		if idx == 0 { // free space: the rest of the collection
			break
		}
		if n < 0 || n > len(b)-p {
			return nil, fmt.Errorf("%w: heap object %d of %d bytes overruns the collection", errFormat, idx, n)
		}
		col[idx] = b[p : p+n]
		p += (n + 7) &^ 7
	}
	return col, nil
}
