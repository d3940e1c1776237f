package h5

import (
	"encoding/binary"
	"fmt"
	"scpipe/internal/lookup3"
)

// superblock holds what the reader needs of an HDF5 superblock (spec
// II.A): the widths of addresses and lengths, and the root group's object
// header.
type superblock struct {
	version    int
	offsetSize int
	lengthSize int
	root       uint64 // object header address of the root group
	eof        uint64 // end-of-file address: the file's size when written
}

// parseSuperblock decodes the superblock at the start of b (a file's
// first bytes, signature included), versions 0 to 3, checking the
// checksum of versions 2 and 3 unless skipChecksum.
func parseSuperblock(b []byte, skipChecksum bool) (*superblock, error) {
	short := fmt.Errorf("%w: superblock truncated", errFormat)
	if len(b) < 16 || string(b[:8]) != signature {
		return nil, short
	}
	sb := &superblock{version: int(b[8])}
	var p int // position of the base address
	switch sb.version {
	case 0, 1:
		sb.offsetSize, sb.lengthSize = int(b[13]), int(b[14])
		p = 24
		if sb.version == 1 {
			p = 28 // indexed storage internal node K and reserved bytes
		}
	case 2, 3:
		sb.offsetSize, sb.lengthSize = int(b[9]), int(b[10])
		p = 12
	default:
		return nil, fmt.Errorf("%w: superblock version %d", errFormat, sb.version)
	}
	if !validSize(sb.offsetSize) || !validSize(sb.lengthSize) {
		return nil, fmt.Errorf("%w: offset size %d, length size %d", errFormat, sb.offsetSize, sb.lengthSize)
	}
	os := sb.offsetSize
	// Base, (free space or extension), end-of-file and (driver or root)
	// addresses; v0/v1 then hold the root group's symbol table entry,
	// whose second field is its object header address.
	need := p + 4*os + 4 // v2/v3: the checksum
	if sb.version < 2 {
		need += 2*os - 4
	}
	if len(b) < need {
		return nil, short
	}
	if base := leUint(b[p:], os); base != 0 {
		return nil, fmt.Errorf("HDF5 files with base address %d are not supported", base)
	}
	sb.eof = leUint(b[p+2*os:], os)
	if sb.version < 2 {
		sb.root = leUint(b[p+5*os:], os)
	} else {
		sb.root = leUint(b[p+3*os:], os)
		if !skipChecksum && binary.LittleEndian.Uint32(b[p+4*os:]) != lookup3.Sum(b[:p+4*os]) {
			return nil, fmt.Errorf("%w: superblock checksum mismatch", errFormat)
		}
	}
	return sb, nil
}

// validSize reports whether n is a width HDF5 allows for addresses and
// lengths.
func validSize(n int) bool { return n == 2 || n == 4 || n == 8 }
