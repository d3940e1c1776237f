package anndata

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"scpipe/internal/lookup3"
)

// Appending to an existing file (Writer.Append): the file is copied, and
// what is added goes after its end. The groups that receive new members
// get a new index (local heap, symbol-table nodes, B-tree) written after
// the end too, and the address of that index is patched into their
// symbol-table message (and the superblock's cache of the root's), with
// the header's checksum recomputed where it has one. Nothing of the file is
// moved or rewritten otherwise: its objects, their attributes and data keep
// their bytes, and the old indexes are left unreferenced. Groups must be
// symbol tables (what h5py and the C library write by default, and the
// only kind of version-0 superblocks); groups that store their links in the
// header (libver "latest") are refused.

// appendInfo is what the copied file's superblock says.
type appendInfo struct {
	version   int    // superblock version: 0, 1, 2 or 3
	eofAt     int64  // where the end-of-file address lies
	rootCache int64  // v0, v1: where the root entry's cached B-tree and heap lie; 0: not cached
	size      uint64 // the file's size when copied
}

// existing is a group of the file appended to.
type existing struct {
	entries []indexEntry
	removed map[string]bool
	patch   patchSite
}

// has reports whether the group holds a member name that is not removed.
func (e *existing) has(name string) bool {
	if e == nil || e.removed[name] {
		return false
	}
	for _, x := range e.entries {
		if x.name == name {
			return true
		}
	}
	return false
}

// patchSite locates a symbol-table message's body and, in a version-2
// header, the chunk whose checksum covers it.
type patchSite struct {
	body                 int64
	chunkStart, chunkEnd int64 // v2: checksum over [chunkStart, chunkEnd), stored at chunkEnd; 0, 0: none
}

// openAppend reads the superblock and root group of the copied file f.
func openAppend(f *os.File) (*h5file, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	sb := make([]byte, 100)
	if _, err := f.ReadAt(sb, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if !bytes.Equal(sb[:8], signature) {
		return nil, errors.New("not an HDF5 file (no signature at offset 0)")
	}
	h := &h5file{f: f, root: &node{group: true}, app: &appendInfo{version: int(sb[8]), size: uint64(st.Size())}}
	le := binary.LittleEndian
	var rootAddr uint64
	switch v := h.app.version; v {
	case 0, 1:
		if sb[13] != 8 || sb[14] != 8 {
			return nil, fmt.Errorf("%d-byte addresses and %d-byte lengths (only 8 are supported)", sb[13], sb[14])
		}
		h.leafK, h.internalK = int(le.Uint16(sb[16:])), int(le.Uint16(sb[18:]))
		o := int64(24)
		if v == 1 {
			o += 4
		}
		if le.Uint64(sb[o:]) != 0 {
			return nil, errors.New("a base address other than 0 is not supported")
		}
		h.app.eofAt = o + 16
		entry := o + 32
		rootAddr = le.Uint64(sb[entry+8:])
		if le.Uint32(sb[entry+16:]) == 1 {
			h.app.rootCache = entry + 24
		}
	case 2, 3:
		if sb[9] != 8 || sb[10] != 8 {
			return nil, fmt.Errorf("%d-byte addresses and %d-byte lengths (only 8 are supported)", sb[9], sb[10])
		}
		if le.Uint64(sb[12:]) != 0 {
			return nil, errors.New("a base address other than 0 is not supported")
		}
		if le.Uint64(sb[20:]) != undef {
			return nil, errors.New("a superblock extension (non-default B-tree parameters) is not supported")
		}
		h.leafK, h.internalK = 4, 16 // the library's defaults, which a superblock without extension implies
		h.app.eofAt = 28
		rootAddr = le.Uint64(sb[36:])
	default:
		return nil, fmt.Errorf("superblock version %d is not supported", v)
	}
	if h.leafK < 1 || h.internalK < 1 {
		return nil, fmt.Errorf("group K values %d and %d", h.leafK, h.internalK)
	}
	old, err := h.readGroup(rootAddr)
	if err != nil {
		return nil, fmt.Errorf("root group: %w", err)
	}
	h.root.old, h.root.addr = old, rootAddr
	h.end = align8(h.app.size)
	return h, nil
}

func (h *h5file) read(addr uint64, n int) ([]byte, error) {
	if addr == undef || addr+uint64(n) > h.app.size || n < 0 {
		return nil, fmt.Errorf("address %#x+%d beyond the file's %d bytes", addr, n, h.app.size)
	}
	b := make([]byte, n)
	_, err := h.f.ReadAt(b, int64(addr))
	return b, err
}

// message is one message of an object header.
type headerMessage struct {
	typ  int
	body []byte
	site patchSite
}

// objectHeader reads the messages of the object header at addr (version 1
// or 2, continuation blocks followed).
func (h *h5file) objectHeader(addr uint64) ([]headerMessage, error) {
	prefix, err := h.read(addr, 16)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	var msgs []headerMessage
	if prefix[0] == 1 { // version 1
		n := int(le.Uint16(prefix[2:]))
		chunks := [][2]uint64{{addr + 16, uint64(le.Uint32(prefix[8:]))}}
		for len(chunks) > 0 && len(msgs) < n {
			c := chunks[0]
			chunks = chunks[1:]
			b, err := h.read(c[0], int(c[1]))
			if err != nil {
				return nil, err
			}
			for p := 0; p+8 <= len(b) && len(msgs) < n; {
				typ, size := int(le.Uint16(b[p:])), int(le.Uint16(b[p+2:]))
				if p+8+size > len(b) {
					return nil, fmt.Errorf("object header %#x: a message overruns its block", addr)
				}
				body := b[p+8 : p+8+size]
				msgs = append(msgs, headerMessage{typ, body, patchSite{body: int64(c[0]) + int64(p+8)}})
				if typ == 0x10 && size >= 16 {
					chunks = append(chunks, [2]uint64{le.Uint64(body), le.Uint64(body[8:])})
				}
				p += 8 + size
			}
		}
		return msgs, nil
	}
	if !bytes.Equal(prefix[:4], []byte("OHDR")) || prefix[4] != 2 {
		return nil, fmt.Errorf("object header %#x: unknown version", addr)
	}
	flags := prefix[5]
	p := uint64(6)
	if flags&0x20 != 0 {
		p += 16
	}
	if flags&0x10 != 0 {
		p += 4
	}
	sizeBytes := uint64(1) << (flags & 3)
	hdr, err := h.read(addr+p, int(sizeBytes))
	if err != nil {
		return nil, err
	}
	var size uint64
	for i := int(sizeBytes) - 1; i >= 0; i-- {
		size = size<<8 | uint64(hdr[i])
	}
	chunks := [][3]uint64{{addr, addr + p + sizeBytes, size}} // chunk start, messages start, their length
	for len(chunks) > 0 {
		c := chunks[0]
		chunks = chunks[1:]
		b, err := h.read(c[1], int(c[2]))
		if err != nil {
			return nil, err
		}
		end := int64(c[1] + c[2])
		if sum, err := h.read(uint64(end), 4); err != nil || le.Uint32(sum) != lookup3.Sum(mustRead(h, c[0], end)) {
			return nil, fmt.Errorf("object header %#x: bad checksum", addr)
		}
		hsize := 4
		if flags&0x04 != 0 {
			hsize = 6
		}
		for q := 0; q+hsize <= len(b); {
			typ, msize := int(b[q]), int(le.Uint16(b[q+1:]))
			if q+hsize+msize > len(b) {
				return nil, fmt.Errorf("object header %#x: a message overruns its chunk", addr)
			}
			body := b[q+hsize : q+hsize+msize]
			msgs = append(msgs, headerMessage{typ, body, patchSite{int64(c[1]) + int64(q+hsize), int64(c[0]), end}})
			if typ == 0x10 && msize >= 16 {
				at, length := le.Uint64(body), le.Uint64(body[8:])
				if length < 8 {
					return nil, fmt.Errorf("object header %#x: a continuation of %d bytes", addr, length)
				}
				chunks = append(chunks, [3]uint64{at, at + 4, length - 8}) // "OCHK" … checksum
			}
			q += hsize + msize
		}
	}
	return msgs, nil
}

func mustRead(h *h5file, from uint64, to int64) []byte {
	b, err := h.read(from, int(to-int64(from)))
	if err != nil {
		return nil
	}
	return b
}

// readGroup reads the links of the symbol-table group whose header is at
// addr. It fails on a dataset and on a group of links in its header.
func (h *h5file) readGroup(addr uint64) (*existing, error) {
	msgs, err := h.objectHeader(addr)
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		switch m.typ {
		case 0x11:
			if len(m.body) < 16 {
				return nil, errors.New("a short symbol-table message")
			}
			le := binary.LittleEndian
			g := &existing{removed: map[string]bool{}, patch: m.site}
			heap, err := h.localHeap(le.Uint64(m.body[8:]))
			if err != nil {
				return nil, err
			}
			if err := h.walkBTree(le.Uint64(m.body), heap, g, 0); err != nil {
				return nil, err
			}
			return g, nil
		case 0x02, 0x06:
			return nil, errNewStyleGroup
		case 0x08:
			return nil, errDataset
		}
	}
	return nil, errors.New("neither a group nor a dataset")
}

var (
	errNewStyleGroup = errors.New("a group that keeps its links in its header (h5py libver='latest' or track_order), which this writer cannot extend: write the file again with h5py's defaults (anndata's write_h5ad does)")
	errDataset       = errors.New("a dataset where a group is needed")
)

// localHeap returns the data segment of the local heap at addr.
func (h *h5file) localHeap(addr uint64) ([]byte, error) {
	b, err := h.read(addr, 32)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(b[:4], []byte("HEAP")) {
		return nil, fmt.Errorf("no local heap at %#x", addr)
	}
	le := binary.LittleEndian
	return h.read(le.Uint64(b[24:]), int(le.Uint64(b[8:])))
}

// walkBTree collects the entries of the symbol-table nodes under the group
// B-tree node at addr.
func (h *h5file) walkBTree(addr uint64, heap []byte, g *existing, depth int) error {
	if depth > 16 {
		return errors.New("a group B-tree deeper than 16 levels")
	}
	hdr, err := h.read(addr, 24)
	if err != nil {
		return err
	}
	if !bytes.Equal(hdr[:4], []byte("TREE")) || hdr[4] != 0 {
		return fmt.Errorf("no group B-tree node at %#x", addr)
	}
	le := binary.LittleEndian
	level, n := hdr[5], int(le.Uint16(hdr[6:]))
	b, err := h.read(addr+24, 8+16*n)
	if err != nil {
		return err
	}
	for i := range n {
		child := le.Uint64(b[8+16*i:])
		if level > 0 {
			if err := h.walkBTree(child, heap, g, depth+1); err != nil {
				return err
			}
			continue
		}
		sn, err := h.read(child, 8)
		if err != nil {
			return err
		}
		if !bytes.Equal(sn[:4], []byte("SNOD")) {
			return fmt.Errorf("no symbol-table node at %#x", child)
		}
		k := int(le.Uint16(sn[6:]))
		ents, err := h.read(child+8, 40*k)
		if err != nil {
			return err
		}
		for j := range k {
			var e indexEntry
			raw := ents[40*j : 40*j+40]
			if err := decodeEntry(raw, &e); err != nil {
				return err
			}
			off := le.Uint64(raw)
			if off >= uint64(len(heap)) {
				return fmt.Errorf("a link name at heap offset %d beyond the heap's %d bytes", off, len(heap))
			}
			end := bytes.IndexByte(heap[off:], 0)
			if end < 0 {
				return errors.New("a link name without its terminating NUL")
			}
			e.name = string(heap[off : off+uint64(end)])
			g.entries = append(g.entries, e)
		}
	}
	return nil
}

// decodeEntry reads a 40-byte symbol-table entry (its name aside).
func decodeEntry(b []byte, e *indexEntry) error {
	if len(b) < 40 {
		return errors.New("a short symbol-table entry")
	}
	le := binary.LittleEndian
	e.addr, e.cache = le.Uint64(b[8:]), le.Uint32(b[16:])
	copy(e.scratch[:], b[24:40])
	return nil
}

// openExisting returns the member name of the existing group n as a node
// that can receive members, or nil when n has no such member.
func (h *h5file) openExisting(n *node, name string) (*node, error) {
	for _, e := range n.old.entries {
		if e.name != name || n.old.removed[name] {
			continue
		}
		g, err := h.readGroup(e.addr)
		if errors.Is(err, errDataset) {
			return nil, fmt.Errorf("%s is a dataset in the file (anndata before 0.7 stored obsm and varm so): write the file again with anndata 0.7 or later", name)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		c := &node{name: name, group: true, old: g, addr: e.addr}
		n.children = append(n.children, c)
		return c, nil
	}
	return nil, nil
}

// remove drops the member at path, of the file or added, if there is one.
func (h *h5file) remove(path string) error {
	i := len(path) - 1
	for i >= 0 && path[i] != '/' {
		i--
	}
	parent, err := h.lookup(path[:i+1], false)
	if err != nil {
		return nil // no parent: nothing to remove
	}
	name := path[i+1:]
	for j, c := range parent.children {
		if c.name == name {
			parent.children = append(parent.children[:j], parent.children[j+1:]...)
			break
		}
	}
	if parent.old.has(name) {
		parent.old.removed[name] = true
	}
	return nil
}

// patchGroup points the symbol-table message of an existing group at its
// new index.
func (h *h5file) patchGroup(n *node) error {
	var b []byte
	b = le64(b, n.btree)
	b = le64(b, n.heap)
	site := n.old.patch
	if _, err := h.f.WriteAt(b, site.body); err != nil {
		return err
	}
	if site.chunkEnd > site.chunkStart {
		chunk := make([]byte, site.chunkEnd-site.chunkStart)
		if _, err := h.f.ReadAt(chunk, site.chunkStart); err != nil {
			return err
		}
		if _, err := h.f.WriteAt(le32(nil, lookup3.Sum(chunk)), site.chunkEnd); err != nil {
			return err
		}
	}
	if n == h.root && h.app.rootCache != 0 {
		if _, err := h.f.WriteAt(b, h.app.rootCache); err != nil {
			return err
		}
	}
	return nil
}

// commitAppend sets the superblock's end of file (and its checksum).
func (h *h5file) commitAppend() error {
	h.end = align8(h.end)
	if err := h.f.Truncate(int64(h.end)); err != nil {
		return err
	}
	if _, err := h.f.WriteAt(le64(nil, h.end), h.app.eofAt); err != nil {
		return err
	}
	if h.app.version >= 2 {
		sb := make([]byte, 44)
		if _, err := h.f.ReadAt(sb, 0); err != nil {
			return err
		}
		if _, err := h.f.WriteAt(le32(nil, lookup3.Sum(sb)), 44); err != nil {
			return err
		}
	}
	return nil
}
