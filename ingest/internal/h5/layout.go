package h5

import (
	"encoding/binary"
	"fmt"
)

// Storage layout classes.
const (
	layoutCompact    = 0
	layoutContiguous = 1
	layoutChunked    = 2
)

// Chunk index types of layout message version 4.
const (
	indexBTreeV1    = 0 // layout versions 1..3
	indexSingle     = 1
	indexImplicit   = 2
	indexFixedArray = 3
	indexExtArray   = 4
	indexBTreeV2    = 5
)

func indexName(t int) string {
	switch t {
	case indexBTreeV1:
		return "version-1 B-tree"
	case indexSingle:
		return "single chunk"
	case indexImplicit:
		return "implicit"
	case indexFixedArray:
		return "fixed array"
	case indexExtArray:
		return "extensible array"
	case indexBTreeV2:
		return "version-2 B-tree"
	}
	return fmt.Sprintf("unknown (%d)", t)
}

// layout is a parsed data layout message.
type layout struct {
	class     int
	addr      uint64   // contiguous data or chunk index address
	size      uint64   // contiguous data size in bytes
	compact   []byte   // compact raw data
	chunk     []uint64 // chunk dimensions in elements (rank entries)
	indexType int
	// Single-chunk index with filters: the stored size and filter mask.
	singleSize uint64
	singleMask uint32
	pageBits   int // fixed array
}

// filter is one entry of the filter pipeline.
type filter struct {
	id     int
	name   string
	flags  int
	client []uint32
}

// Filter identifiers (H5Zpublic.h and the registered-filter list).
const (
	filterDeflate    = 1
	filterShuffle    = 2
	filterFletcher32 = 3
	filterLZF        = 32000
)

// parseDataspace returns the dimensions of a dataspace message: none for
// a scalar, {0} for a null dataspace (no element).
func parseDataspace(b []byte, lengthSize int) ([]int64, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("%w: dataspace message too short", errFormat)
	}
	version, rank := b[0], int(b[1])
	var p int
	switch version {
	case 1:
		p = 8
	case 2:
		p = 4
		if b[3] == 2 { // null dataspace
			return []int64{0}, nil
		}
	default:
		return nil, fmt.Errorf("%w: dataspace version %d", errFormat, version)
	}
	if p+rank*lengthSize > len(b) {
		return nil, fmt.Errorf("%w: dataspace truncated", errFormat)
	}
	dims := make([]int64, rank)
	for i := range dims {
		d := leUint(b[p:], lengthSize)
		if d > 1<<53 {
			return nil, fmt.Errorf("%w: dataspace dimension %d is %d", errFormat, i, d)
		}
		dims[i] = int64(d)
		p += lengthSize
	}
	return dims, nil
}

func (m *meta) parseLayout(b []byte, rank int) (*layout, error) {
	if len(b) < 2 {
		return nil, fmt.Errorf("%w: layout message too short", errFormat)
	}
	l := &layout{}
	version := b[0]
	need := func(n int) error {
		if n > len(b) {
			return fmt.Errorf("%w: layout message (version %d) truncated", errFormat, version)
		}
		return nil
	}
	os, ls := m.offsetSize, m.lengthSize
	switch version {
	case 1, 2:
		if err := need(8); err != nil {
			return nil, err
		}
		nd := int(b[1])
		l.class = int(b[2])
		if nd < 1 {
			return nil, fmt.Errorf("%w: layout message of rank %d", errFormat, nd)
		}
		p := 8
		if l.class != layoutCompact {
			if err := need(p + os); err != nil {
				return nil, err
			}
			l.addr = leUint(b[p:], os)
			p += os
		}
		if err := need(p + 4*nd); err != nil {
			return nil, err
		}
		dims := make([]uint64, nd)
		for i := range dims {
			dims[i] = uint64(binary.LittleEndian.Uint32(b[p:]))
			p += 4
		}
		switch l.class {
		case layoutChunked:
			l.chunk = dims[:nd-1]
		case layoutContiguous:
			l.size = 0 // computed from the dataspace by the caller
		case layoutCompact:
			if err := need(p + 4); err != nil {
				return nil, err
			}
			n := int(binary.LittleEndian.Uint32(b[p:]))
			p += 4
			if err := need(p + n); err != nil {
				return nil, err
			}
			l.compact = b[p : p+n]
		}
	case 3, 4:
		l.class = int(b[1])
		p := 2
		switch l.class {
		case layoutCompact:
			if err := need(p + 2); err != nil {
				return nil, err
			}
			n := int(binary.LittleEndian.Uint16(b[p:]))
			p += 2
			if err := need(p + n); err != nil {
				return nil, err
			}
			l.compact = b[p : p+n]
		case layoutContiguous:
			if err := need(p + os + ls); err != nil {
				return nil, err
			}
			l.addr = leUint(b[p:], os)
			l.size = leUint(b[p+os:], ls)
		case layoutChunked:
			if version == 3 {
				if err := need(p + 1 + os); err != nil {
					return nil, err
				}
				nd := int(b[p])
				p++
				l.addr = leUint(b[p:], os)
				p += os
				if err := need(p + 4*nd); err != nil {
					return nil, err
				}
				for i := 0; i < nd-1; i++ {
					l.chunk = append(l.chunk, uint64(binary.LittleEndian.Uint32(b[p+4*i:])))
				}
				l.indexType = indexBTreeV1
				break
			}
			if err := need(p + 3); err != nil {
				return nil, err
			}
			flags := b[p]
			nd := int(b[p+1])
			w := int(b[p+2])
			p += 3
			if w < 1 || w > 8 {
				return nil, fmt.Errorf("%w: layout chunk dimension width %d", errFormat, w)
			}
			if err := need(p + w*nd + 1); err != nil {
				return nil, err
			}
			for i := 0; i < nd-1; i++ {
				l.chunk = append(l.chunk, leUint(b[p+w*i:], w))
			}
			p += w * nd
			l.indexType = int(b[p])
			p++
			switch l.indexType {
			case indexSingle:
				if flags&2 != 0 {
					if err := need(p + ls + 4); err != nil {
						return nil, err
					}
					l.singleSize = leUint(b[p:], ls)
					l.singleMask = binary.LittleEndian.Uint32(b[p+ls:])
					p += ls + 4
				}
			case indexImplicit:
			case indexFixedArray:
				if err := need(p + 1); err != nil {
					return nil, err
				}
				l.pageBits = int(b[p])
				p++
			case indexExtArray:
				p += 5
			case indexBTreeV2:
				p += 6
			}
			if err := need(p + os); err != nil {
				return nil, err
			}
			l.addr = leUint(b[p:], os)
		default:
			return nil, fmt.Errorf("%w: layout class %d", errFormat, l.class)
		}
	default:
		return nil, fmt.Errorf("%w: layout message version %d", errFormat, version)
	}
	if l.class != layoutCompact && l.class != layoutContiguous && l.class != layoutChunked {
		return nil, fmt.Errorf("%w: layout class %d", errFormat, l.class)
	}
	if l.class == layoutChunked {
		if len(l.chunk) != rank {
			return nil, fmt.Errorf("%w: chunk rank %d differs from dataspace rank %d", errFormat, len(l.chunk), rank)
		}
		for i, c := range l.chunk {
			if c == 0 {
				return nil, fmt.Errorf("%w: chunk dimension %d is zero", errFormat, i)
			}
		}
	}
	return l, nil
}

func parseFilters(b []byte) ([]filter, error) {
	if len(b) < 2 {
		return nil, fmt.Errorf("%w: filter pipeline message too short", errFormat)
	}
	version, n := b[0], int(b[1])
	p := 2
	// scigolib/hdf5 v0.14.0's writer labels a version-1 style message (six
	// reserved bytes, name lengths always present, no padding after client
	// values) as version 2. Filter id 0 is reserved, so a version-2 message
	// whose first filter id would be 0 can only be that variant.
	scigolib := version == 2 && len(b) >= 10 && n > 0 && binary.LittleEndian.Uint16(b[2:]) == 0 &&
		binary.LittleEndian.Uint32(b[4:]) == 0 && binary.LittleEndian.Uint16(b[8:]) != 0
	switch {
	case version == 1 || scigolib:
		p = 8
	case version != 2:
		return nil, fmt.Errorf("%w: filter pipeline version %d", errFormat, version)
	}
	fs := make([]filter, 0, n)
	for i := 0; i < n; i++ {
		if p+2 > len(b) {
			return nil, fmt.Errorf("%w: filter pipeline truncated", errFormat)
		}
		var f filter
		f.id = int(binary.LittleEndian.Uint16(b[p:]))
		p += 2
		nameLen := 0
		if version == 1 || scigolib || f.id >= 256 {
			if p+2 > len(b) {
				return nil, fmt.Errorf("%w: filter pipeline truncated", errFormat)
			}
			nameLen = int(binary.LittleEndian.Uint16(b[p:]))
			p += 2
		}
		if p+4 > len(b) {
			return nil, fmt.Errorf("%w: filter pipeline truncated", errFormat)
		}
		f.flags = int(binary.LittleEndian.Uint16(b[p:]))
		nvals := int(binary.LittleEndian.Uint16(b[p+2:]))
		p += 4
		if version == 1 || scigolib {
			nameLen = (nameLen + 7) &^ 7
		}
		if p+nameLen+4*nvals > len(b) {
			return nil, fmt.Errorf("%w: filter pipeline truncated", errFormat)
		}
		name := b[p : p+nameLen]
		for j, c := range name {
			if c == 0 {
				name = name[:j]
				break
			}
		}
		f.name = string(name)
		p += nameLen
		for j := 0; j < nvals; j++ {
			f.client = append(f.client, binary.LittleEndian.Uint32(b[p:]))
			p += 4
		}
		if version == 1 && nvals%2 == 1 {
			p += 4
		}
		fs = append(fs, f)
	}
	return fs, nil
}

// parseFill returns the fill value bytes of a fill value message, or nil if
// the fill value is undefined (reads then yield zeros, as libhdf5 does).
func parseFill(b []byte, newStyle bool) ([]byte, error) {
	short := fmt.Errorf("%w: fill value message truncated", errFormat)
	if !newStyle {
		if len(b) < 4 {
			return nil, short
		}
		n := int(binary.LittleEndian.Uint32(b))
		if 4+n > len(b) {
			return nil, short
		}
		return b[4 : 4+n], nil
	}
	if len(b) < 2 {
		return nil, short
	}
	switch b[0] {
	case 1, 2:
		if len(b) < 4 {
			return nil, short
		}
		defined := b[3] != 0
		if b[0] == 2 && !defined {
			return nil, nil
		}
		if len(b) < 8 {
			if b[0] == 1 {
				return nil, nil
			}
			return nil, short
		}
		n := int(binary.LittleEndian.Uint32(b[4:]))
		if 8+n > len(b) {
			return nil, short
		}
		if n == 0 {
			return nil, nil
		}
		return b[8 : 8+n], nil
	case 3:
		if b[1]&0x20 == 0 {
			return nil, nil
		}
		if len(b) < 6 {
			return nil, short
		}
		n := int(binary.LittleEndian.Uint32(b[2:]))
		if 6+n > len(b) {
			return nil, short
		}
		return b[6 : 6+n], nil
	}
	return nil, fmt.Errorf("%w: fill value message version %d", errFormat, b[0])
}
