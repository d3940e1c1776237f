package h5

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Object header message types this package interprets (HDF5 spec IV.A.2).
const (
	msgDataspace    = 0x0001
	msgDatatype     = 0x0003
	msgFillOld      = 0x0004
	msgFill         = 0x0005
	msgLayout       = 0x0008
	msgFilters      = 0x000B
	msgContinuation = 0x0010
)

// message is one raw object header message.
type message struct {
	typ   uint16
	flags uint8
	data  []byte
}

// errFormat is wrapped by errors about malformed file structures.
var errFormat = errors.New("malformed HDF5 structure")

// meta holds the superblock sizes needed to decode addresses and lengths,
// and the file's size, against which every size read from the file is
// checked before anything is allocated for it. All HDF5 metadata is
// little-endian.
type meta struct {
	r          io.ReaderAt
	size       uint64 // bytes in the file
	offsetSize int
	lengthSize int

	skipChecksums bool // see checksummed
}

// uint reads a little-endian unsigned integer of n (1..8) bytes.
func leUint(b []byte, n int) uint64 {
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// undefinedAddr reports whether an address of n bytes is all ones (HDF5's
// "undefined address").
func undefinedAddr(a uint64, n int) bool {
	if n >= 8 {
		return a == ^uint64(0)
	}
	return a == (uint64(1)<<(8*n))-1
}

// maxBlock is the largest metadata block read at once: object header
// chunks, heaps and B-tree nodes are kilobytes, a global heap collection
// of long strings a few megabytes.
const maxBlock = 1 << 30

// readAt reads exactly n bytes at off. A block that does not lie inside the
// file is an error before anything is allocated: the size was read from the
// file, and a corrupted one may ask for any amount of memory.
func (m *meta) readAt(off uint64, n int) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("%w: block of negative size at offset %d", errFormat, off)
	}
	if err := m.inFile(off, uint64(n)); err != nil {
		return nil, fmt.Errorf("%w: %w", errFormat, err)
	}
	if n > maxBlock {
		return nil, fmt.Errorf("%w: implausible block size %d at offset %d", errFormat, n, off)
	}
	b := make([]byte, n)
	if _, err := m.r.ReadAt(b, int64(off)); err != nil {
		return nil, fmt.Errorf("reading %d bytes at offset %d: %w", n, off, err)
	}
	return b, nil
}

// errPastEnd is wrapped by errors about structures that do not fit in the
// file.
var errPastEnd = errors.New("runs past the end of the file")

// inFile checks that the n bytes at off lie inside the file.
func (m *meta) inFile(off, n uint64) error {
	if off > m.size || n > m.size-off {
		return fmt.Errorf("%d bytes at offset %d of a %d-byte file: %w", n, off, m.size, errPastEnd)
	}
	return nil
}

// objectHeader reads the messages of the object header at addr, following
// continuation blocks. It understands version 1 headers (superblock v0/v1
// files written by PyTables and h5py) and version 2 "OHDR" headers.
// Adapted from the layout documented in the HDF5 file format specification
// (section IV.A).
func (m *meta) objectHeader(addr uint64) ([]message, error) {
	sig, err := m.readAt(addr, 4)
	if err != nil {
		return nil, fmt.Errorf("object header at %d: %w", addr, err)
	}
	if string(sig) == "OHDR" {
		return m.objectHeaderV2(addr)
	}
	return m.objectHeaderV1(addr)
}

func (m *meta) objectHeaderV1(addr uint64) ([]message, error) {
	h, err := m.readAt(addr, 16)
	if err != nil {
		return nil, fmt.Errorf("object header at %d: %w", addr, err)
	}
	if h[0] != 1 {
		return nil, fmt.Errorf("%w: object header at %d has unknown version %d", errFormat, addr, h[0])
	}
	nmsgs := int(binary.LittleEndian.Uint16(h[2:]))
	size := binary.LittleEndian.Uint32(h[8:])
	hm := headerMessages{m: m, addr: addr, blocks: []headerBlock{{addr + 16, uint64(size)}}}
	for len(hm.blocks) > 0 && len(hm.msgs) < nmsgs {
		buf, err := hm.nextBlock()
		if err != nil {
			return nil, err
		}
		for p := 0; p+8 <= len(buf) && len(hm.msgs) < nmsgs; {
			typ := binary.LittleEndian.Uint16(buf[p:])
			sz := int(binary.LittleEndian.Uint16(buf[p+2:]))
			flags := buf[p+4]
			if p, err = hm.add(buf, p+8, sz, typ, flags); err != nil {
				return nil, err
			}
		}
	}
	return hm.msgs, nil
}

// headerBlock is a block of an object header's messages.
type headerBlock struct{ off, size uint64 }

// headerMessages gathers the messages of the object header at addr,
// queueing the continuation blocks its messages point to.
type headerMessages struct {
	m      *meta
	addr   uint64
	msgs   []message
	blocks []headerBlock
	read   uint64 // bytes of blocks read so far
}

// nextBlock reads the next queued block. The blocks of a header do not
// overlap, so together they cannot exceed the file: more means that
// continuation messages loop.
func (hm *headerMessages) nextBlock() ([]byte, error) {
	bl := hm.blocks[0]
	hm.blocks = hm.blocks[1:]
	if bl.size > maxBlock || hm.read+bl.size > hm.m.size {
		return nil, fmt.Errorf("%w: object header at %d: blocks of more bytes than the file holds (continuations loop?)", errFormat, hm.addr)
	}
	hm.read += bl.size
	buf, err := hm.m.readAt(bl.off, int(bl.size))
	if err != nil {
		return nil, fmt.Errorf("object header at %d: %w", hm.addr, err)
	}
	return buf, nil
}

// add records the message of type typ whose sz bytes of data start at
// buf[p], queues the block of a continuation message, and returns the
// position after the data.
func (hm *headerMessages) add(buf []byte, p, sz int, typ uint16, flags byte) (int, error) {
	if p+sz > len(buf) {
		return 0, fmt.Errorf("%w: object header at %d: message of %d bytes overruns its block", errFormat, hm.addr, sz)
	}
	msg := message{typ: typ, flags: flags, data: buf[p : p+sz]}
	hm.msgs = append(hm.msgs, msg)
	if typ == msgContinuation {
		off, length, err := hm.m.continuation(msg.data)
		if err != nil {
			return 0, fmt.Errorf("object header at %d: %w", hm.addr, err)
		}
		hm.blocks = append(hm.blocks, headerBlock{off, length})
	}
	return p + sz, nil
}

func (m *meta) continuation(d []byte) (off, length uint64, err error) {
	if len(d) < m.offsetSize+m.lengthSize {
		return 0, 0, fmt.Errorf("%w: short continuation message", errFormat)
	}
	return leUint(d, m.offsetSize), leUint(d[m.offsetSize:], m.lengthSize), nil
}

func (m *meta) objectHeaderV2(addr uint64) ([]message, error) {
	h, err := m.readAt(addr, 6+16+4+8)
	if err != nil {
		// A tiny header at the end of the file: retry with the minimum size.
		if h, err = m.readAt(addr, 7); err != nil {
			return nil, fmt.Errorf("object header at %d: %w", addr, err)
		}
	}
	if h[4] != 2 {
		return nil, fmt.Errorf("%w: OHDR at %d has unknown version %d", errFormat, addr, h[4])
	}
	flags := h[5]
	p := 6
	if flags&0x20 != 0 {
		p += 16
	}
	if flags&0x10 != 0 {
		p += 4
	}
	sizeBytes := 1 << (flags & 3)
	if p+sizeBytes > len(h) {
		return nil, fmt.Errorf("%w: OHDR at %d truncated", errFormat, addr)
	}
	chunk0 := leUint(h[p:], sizeBytes)
	p += sizeBytes
	if chunk0 > maxBlock {
		return nil, fmt.Errorf("%w: OHDR at %d: first chunk of %d bytes", errFormat, addr, chunk0)
	}
	// The first block is read from the signature on, which its checksum
	// covers; continuation blocks carry signature "OCHK" and a checksum.
	hm := headerMessages{m: m, addr: addr, blocks: []headerBlock{{addr, uint64(p) + chunk0 + 4}}}
	for first := true; len(hm.blocks) > 0; first = false {
		buf, err := hm.nextBlock()
		if err != nil {
			return nil, err
		}
		if !first && (len(buf) < 8 || string(buf[:4]) != "OCHK") {
			return nil, fmt.Errorf("%w: object header at %d: continuation block lacks OCHK signature", errFormat, addr)
		}
		if !m.checksummed(buf) {
			return nil, fmt.Errorf("%w: object header at %d: checksum mismatch", errFormat, addr)
		}
		if first {
			buf = buf[p : len(buf)-4]
		} else {
			buf = buf[4 : len(buf)-4]
		}
		hdr := 4
		if flags&0x04 != 0 {
			hdr = 6
		}
		for p := 0; p+hdr <= len(buf); {
			typ := uint16(buf[p])
			sz := int(binary.LittleEndian.Uint16(buf[p+1:]))
			mflags := buf[p+3]
			if p, err = hm.add(buf, p+hdr, sz, typ, mflags); err != nil {
				return nil, err
			}
		}
	}
	return hm.msgs, nil
}
