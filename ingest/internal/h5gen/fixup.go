package h5gen

// scigolib/hdf5 v0.14.0 writes three things that other HDF5 readers (the C
// library, h5py) and its own reader do not accept or that differ from what
// CellRanger and h5py write. Rather than fork it, h5gen lets it write the
// file and then corrects those bytes in place, once the writer is closed:
//
//   - Filters. Its filter-pipeline message says version 2 but is laid out
//     as version 1, so no reader finds the filter ids; and its "deflate"
//     chunks are gzip streams where HDF5 filter 1 means zlib streams. The
//     fix rewrites the message as a true version-2 message (it is shorter,
//     the rest of the message is zeroed) and every chunk as a zlib stream:
//     the raw deflate body is kept, the 10-byte gzip header and 8-byte
//     trailer become a 2-byte zlib header and a 4-byte Adler-32, so each
//     chunk shrinks by 12 bytes in place and its B-tree key is updated.
//   - String padding. Fixed-length strings are marked null-terminated;
//     numpy "S" strings (h5py, PyTables, CellRanger) are null-padded, which
//     also lets a string fill its whole width. The fix sets the padding.
//   - Empty datasets. It refuses a zero dimension; h5gen writes one element
//     into a resizable chunked dataset and the fix sets the extent to 0.
//
// Every fix works on a version-2 object header ("OHDR"), whose messages all
// lie in its first chunk for a dataset h5gen creates, and recomputes the
// header's Jenkins lookup3 checksum. The existing checksum is verified
// first, so a layout other than the one expected is an error, not a
// corrupted file.

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"hash/crc32"
	"io"
	"os"

	"github.com/scigolib/hdf5"

	"scpipe/internal/lookup3"
)

// fixKind names a correction.
type fixKind int

const (
	fixFilters fixKind = iota // rewrite the pipeline message and deflate chunks
	fixNullPad                // mark a fixed-length string type null-padded
	fixEmpty                  // set the first dimension to 0
	fixStream                 // set the extent and chunk B-tree of a streamed dataset
)

// fixup is one correction of the dataset at path.
type fixup struct {
	path    string
	kind    fixKind
	deflate int    // fixFilters: deflate level, 0 = none
	shuffle bool   // fixFilters: shuffle present
	extent  uint64 // fixStream: elements
	btree   uint64 // fixStream: address of the chunk B-tree's root
}

// Object header message types (HDF5 format spec IV.A.2).
const (
	msgDataspace = 0x01
	msgDatatype  = 0x03
	msgLayout    = 0x08
	msgPipeline  = 0x0B
)

// HDF5 filter ids.
const (
	filterDeflate = 1
	filterShuffle = 2
)

// applyFixups applies fixes to the closed file name.
func applyFixups(name string, fixes []fixup) (err error) {
	if len(fixes) == 0 {
		return nil
	}
	addrs, err := datasetAddresses(name)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("fixup: %w", err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("fixup: %w", cerr)
		}
	}()
	for _, fx := range fixes {
		addr, ok := addrs[fx.path]
		if !ok {
			return fmt.Errorf("fixup: dataset %s not found in written file", fx.path)
		}
		if err := applyFixup(f, addr, fx); err != nil {
			return fmt.Errorf("fixup %s: %w", fx.path, err)
		}
	}
	return nil
}

// datasetAddresses maps each dataset path of the file to its object header.
func datasetAddresses(name string) (map[string]uint64, error) {
	h, err := hdf5.Open(name)
	if err != nil {
		return nil, fmt.Errorf("fixup: reopen: %w", err)
	}
	addrs := map[string]uint64{}
	h.Walk(func(p string, o hdf5.Object) {
		if d, ok := o.(*hdf5.Dataset); ok {
			addrs[p] = d.Address()
		}
	})
	if err := h.Close(); err != nil {
		return nil, fmt.Errorf("fixup: reopen: %w", err)
	}
	return addrs, nil
}

// applyFixup applies one fix to the dataset whose header is at addr.
func applyFixup(f *os.File, addr uint64, fx fixup) error {
	h, err := readOHDR(f, addr)
	if err != nil {
		return err
	}
	switch fx.kind {
	case fixNullPad:
		dt, err := h.message(msgDatatype)
		if err != nil {
			return err
		}
		if dt[0]&0x0f != 3 {
			return fmt.Errorf("datatype class %d is not a string", dt[0]&0x0f)
		}
		dt[1] = dt[1]&^0x0f | 1 // padding type 1: null pad
	case fixEmpty:
		if err := setExtent(h, 0, false); err != nil {
			return err
		}
	case fixFilters:
		if err := fixFilterPipeline(f, h, fx); err != nil {
			return err
		}
	case fixStream:
		if err := setExtent(h, fx.extent, true); err != nil {
			return err
		}
		layout, err := chunkedLayout(h)
		if err != nil {
			return err
		}
		binary.LittleEndian.PutUint64(layout[3:], fx.btree)
	}
	return h.writeBack(f)
}

// chunkedLayout returns h's layout message, which must be a version-3
// chunked layout (its B-tree address at byte 3).
func chunkedLayout(h *ohdr) ([]byte, error) {
	layout, err := h.message(msgLayout)
	if err != nil {
		return nil, err
	}
	if len(layout) < 11 || layout[0] != 3 || layout[1] != 2 {
		return nil, fmt.Errorf("unexpected layout message version %d class %d", layout[0], layout[1])
	}
	return layout, nil
}

// setExtent sets the dimension of the 1-D dataset whose header is h to n,
// and its maximum dimension too when max is set and the message has one.
func setExtent(h *ohdr, n uint64, max bool) error {
	ds, err := h.message(msgDataspace)
	if err != nil {
		return err
	}
	if ds[0] != 1 || ds[1] != 1 || len(ds) < 16 {
		return fmt.Errorf("unexpected dataspace message version %d rank %d", ds[0], ds[1])
	}
	binary.LittleEndian.PutUint64(ds[8:], n)
	if max && ds[2]&1 != 0 { // maximum dimensions follow
		if len(ds) < 24 {
			return errors.New("dataspace message truncated")
		}
		binary.LittleEndian.PutUint64(ds[16:], n)
	}
	return nil
}

// fixFilterPipeline rewrites the pipeline message of h and, with deflate,
// every chunk of the dataset.
func fixFilterPipeline(f *os.File, h *ohdr, fx fixup) error {
	pl, err := h.message(msgPipeline)
	if err != nil {
		return err
	}
	layout, err := chunkedLayout(h)
	if err != nil {
		return err
	}
	rank := int(layout[2]) // dataset rank + 1 (the element size)
	if len(layout) < 11+4*rank {
		return errors.New("layout message truncated")
	}
	elem := binary.LittleEndian.Uint32(layout[11+4*(rank-1):])

	// Version 2 pipeline: no reserved bytes, no names for ids < 256.
	msg := []byte{2, 0}
	add := func(id uint16, cd uint32) {
		msg[1]++
		msg = binary.LittleEndian.AppendUint16(msg, id)
		msg = binary.LittleEndian.AppendUint16(msg, 1) // flags: optional, as h5py sets
		msg = binary.LittleEndian.AppendUint16(msg, 1) // one client value
		msg = binary.LittleEndian.AppendUint32(msg, cd)
	}
	if fx.shuffle {
		add(filterShuffle, elem)
	}
	if fx.deflate > 0 {
		add(filterDeflate, uint32(fx.deflate))
	}
	if len(msg) > len(pl) {
		return fmt.Errorf("pipeline message of %d bytes cannot hold %d", len(pl), len(msg))
	}
	clear(pl)
	copy(pl, msg)

	if fx.deflate == 0 {
		return nil
	}
	bt := binary.LittleEndian.Uint64(layout[3:])
	sizes := map[string]uint32{}
	return rezlibTree(f, bt, rank, sizes, fx.deflate)
}

// rezlibTree walks the version-1 chunk B-tree at addr, turning every gzip
// chunk into a zlib chunk in place and updating the chunk sizes in the keys
// (leaf keys, and internal keys that copy them). sizes maps a key's
// coordinates to its chunk's new size.
func rezlibTree(f *os.File, addr uint64, rank int, sizes map[string]uint32, level int) error {
	var head [24]byte
	if _, err := f.ReadAt(head[:], int64(addr)); err != nil {
		return fmt.Errorf("chunk B-tree at %#x: %w", addr, err)
	}
	if string(head[:4]) != "TREE" || head[4] != 1 {
		return fmt.Errorf("no chunk B-tree node at %#x", addr)
	}
	nodeLevel := head[5]
	entries := int(binary.LittleEndian.Uint16(head[6:]))
	keySize := 8 + 8*rank
	body := make([]byte, entries*(keySize+8)+keySize)
	if _, err := f.ReadAt(body, int64(addr)+24); err != nil {
		return fmt.Errorf("chunk B-tree at %#x: %w", addr, err)
	}
	for i := range entries {
		key := body[i*(keySize+8):]
		child := binary.LittleEndian.Uint64(key[keySize:])
		if nodeLevel > 0 {
			if err := rezlibTree(f, child, rank, sizes, level); err != nil {
				return err
			}
			continue
		}
		n := binary.LittleEndian.Uint32(key)
		chunk := make([]byte, n)
		if _, err := f.ReadAt(chunk, int64(child)); err != nil {
			return fmt.Errorf("chunk at %#x: %w", child, err)
		}
		z, err := gzipToZlib(chunk, level)
		if err != nil {
			return fmt.Errorf("chunk at %#x: %w", child, err)
		}
		if _, err := f.WriteAt(z, int64(child)); err != nil {
			return fmt.Errorf("chunk at %#x: %w", child, err)
		}
		sizes[string(key[8:keySize])] = uint32(len(z))
	}
	for i := 0; i <= entries; i++ {
		key := body[i*(keySize+8):]
		if n, ok := sizes[string(key[8:keySize])]; ok {
			binary.LittleEndian.PutUint32(key, n)
		}
	}
	if _, err := f.WriteAt(body, int64(addr)+24); err != nil {
		return fmt.Errorf("chunk B-tree at %#x: %w", addr, err)
	}
	return nil
}

// gzipToZlib rewraps the deflate body of a gzip member (as Go's gzip.Writer
// writes it, with a bare 10-byte header) as a zlib stream, after checking
// the gzip trailer against the inflated data.
func gzipToZlib(gz []byte, level int) ([]byte, error) {
	if len(gz) < 18 || gz[0] != 0x1f || gz[1] != 0x8b || gz[2] != 8 || gz[3] != 0 {
		return nil, errors.New("not a bare gzip member")
	}
	body := gz[10 : len(gz)-8]
	raw, err := io.ReadAll(flate.NewReader(bytes.NewReader(body)))
	if err != nil {
		return nil, fmt.Errorf("inflate: %w", err)
	}
	trailer := gz[len(gz)-8:]
	if crc32.ChecksumIEEE(raw) != binary.LittleEndian.Uint32(trailer) || uint32(len(raw)) != binary.LittleEndian.Uint32(trailer[4:]) {
		return nil, errors.New("gzip trailer does not match the data")
	}
	// zlib header: deflate with a 32 KiB window, FLEVEL from the level
	// (RFC 1950), FCHECK making the 16-bit header a multiple of 31.
	var flevel byte
	switch {
	case level >= 7:
		flevel = 3
	case level == 6:
		flevel = 2
	case level >= 2:
		flevel = 1
	}
	cmf, flg := byte(0x78), flevel<<6
	flg += byte(31 - (uint(cmf)<<8|uint(flg))%31)
	z := make([]byte, 0, len(body)+6)
	z = append(z, cmf, flg)
	z = append(z, body...)
	return binary.BigEndian.AppendUint32(z, adler32.Checksum(raw)), nil
}

// ohdr is the first chunk of a version-2 object header, read into memory.
type ohdr struct {
	addr uint64
	buf  []byte // from the signature to just before the checksum
	msgs []ohdrMsg
}

// ohdrMsg locates one message's data in ohdr.buf.
type ohdrMsg struct {
	typ       byte
	off, size int
}

// readOHDR reads and checks the version-2 object header at addr.
func readOHDR(f *os.File, addr uint64) (*ohdr, error) {
	var pre [32]byte
	if _, err := f.ReadAt(pre[:], int64(addr)); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("object header at %#x: %w", addr, err)
	}
	if string(pre[:4]) != "OHDR" || pre[4] != 2 {
		return nil, fmt.Errorf("no version-2 object header at %#x", addr)
	}
	flags := pre[5]
	pos := 6
	if flags&0x20 != 0 {
		pos += 16 // access, modification, change, birth times
	}
	if flags&0x10 != 0 {
		pos += 4 // attribute phase change values
	}
	width := 1 << (flags & 3)
	var size uint64
	for i := range width {
		size |= uint64(pre[pos+i]) << (8 * i)
	}
	pos += width
	h := &ohdr{addr: addr, buf: make([]byte, pos+int(size))}
	if _, err := f.ReadAt(h.buf, int64(addr)); err != nil {
		return nil, fmt.Errorf("object header at %#x: %w", addr, err)
	}
	var sum [4]byte
	if _, err := f.ReadAt(sum[:], int64(addr)+int64(len(h.buf))); err != nil {
		return nil, fmt.Errorf("object header at %#x: %w", addr, err)
	}
	if got, want := lookup3.Sum(h.buf), binary.LittleEndian.Uint32(sum[:]); got != want {
		return nil, fmt.Errorf("object header at %#x: checksum %#x, computed %#x", addr, want, got)
	}
	msgHead := 4
	if flags&0x04 != 0 {
		msgHead = 6 // creation order tracked
	}
	for pos+msgHead <= len(h.buf) {
		typ := h.buf[pos]
		n := int(binary.LittleEndian.Uint16(h.buf[pos+1:]))
		pos += msgHead
		if pos+n > len(h.buf) {
			return nil, fmt.Errorf("object header at %#x: message %#x overruns the chunk", addr, typ)
		}
		h.msgs = append(h.msgs, ohdrMsg{typ: typ, off: pos, size: n})
		pos += n
	}
	return h, nil
}

// message returns the data of the only message of type typ, aliasing h.buf.
func (h *ohdr) message(typ byte) ([]byte, error) {
	var found []byte
	for _, m := range h.msgs {
		if m.typ == typ {
			if found != nil {
				return nil, fmt.Errorf("object header at %#x: several messages of type %#x", h.addr, typ)
			}
			found = h.buf[m.off : m.off+m.size]
		}
	}
	if found == nil {
		return nil, fmt.Errorf("object header at %#x: no message of type %#x", h.addr, typ)
	}
	return found, nil
}

// writeBack writes h with a fresh checksum.
func (h *ohdr) writeBack(f *os.File) error {
	out := binary.LittleEndian.AppendUint32(bytes.Clone(h.buf), lookup3.Sum(h.buf))
	if _, err := f.WriteAt(out, int64(h.addr)); err != nil {
		return fmt.Errorf("object header at %#x: %w", h.addr, err)
	}
	return nil
}
