package h5

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// HDF5 datatype classes (spec IV.A.2.d).
const (
	classFixed    = 0
	classFloat    = 1
	classString   = 3
	classBitfield = 4
	classOpaque   = 5
	classCompound = 6
	classRef      = 7
	classEnum     = 8
	classVlen     = 9
	classArray    = 10
)

// dtype is a parsed HDF5 datatype, reduced to what this package reads.
type dtype struct {
	class     int
	size      int  // bytes per element in the file
	bigEndian bool // numeric classes
	signed    bool // fixed-point
	vlenStr   bool // variable-length string
	strPad    int  // 0 NUL-terminated, 1 NUL-padded, 2 space-padded
	base      *dtype
	members   []member // compound
}

// member is one field of a compound datatype.
type member struct {
	name   string
	offset int
	typ    *dtype
}

// className names a datatype class for error messages.
func className(c int) string {
	names := map[int]string{0: "integer", 1: "float", 2: "time", 3: "fixed-length string", 4: "bitfield",
		5: "opaque", 6: "compound", 7: "reference", 8: "enum", 9: "variable-length", 10: "array", 11: "complex"}
	if s, ok := names[c]; ok {
		return s
	}
	return fmt.Sprintf("class %d", c)
}

func (t *dtype) String() string {
	switch {
	case t.class == classFixed && t.signed:
		return fmt.Sprintf("int%d", 8*t.size)
	case t.class == classFixed:
		return fmt.Sprintf("uint%d", 8*t.size)
	case t.class == classFloat:
		return fmt.Sprintf("float%d", 8*t.size)
	case t.vlenStr:
		return "variable-length string"
	}
	return fmt.Sprintf("%s (%d bytes)", className(t.class), t.size)
}

// numeric returns the integer or float type that values of t are stored as:
// t itself, or the base type of an enum (h5py stores booleans as enums).
func (t *dtype) numeric() (*dtype, bool) {
	if t.class == classEnum && t.base != nil {
		t = t.base
	}
	switch t.class {
	case classFixed:
		return t, t.size == 1 || t.size == 2 || t.size == 4 || t.size == 8
	case classFloat:
		return t, t.size == 4 || t.size == 8
	}
	return t, false
}

// parseDatatype decodes a datatype message and returns the number of bytes it
// occupies (datatypes nest inside compound, enum, array and vlen types).
func parseDatatype(b []byte) (*dtype, int, error) {
	if len(b) < 8 {
		return nil, 0, fmt.Errorf("%w: datatype message of %d bytes", errFormat, len(b))
	}
	class := int(b[0] & 0x0f)
	version := int(b[0] >> 4)
	bits := uint32(b[1]) | uint32(b[2])<<8 | uint32(b[3])<<16
	t := &dtype{class: class, size: int(binary.LittleEndian.Uint32(b[4:]))}
	p := 8
	need := func(n int) error {
		if p+n > len(b) {
			return fmt.Errorf("%w: %s datatype truncated", errFormat, className(class))
		}
		return nil
	}
	switch class {
	case classFixed, classBitfield:
		t.bigEndian = bits&1 != 0
		t.signed = bits&8 != 0
		if err := need(4); err != nil {
			return nil, 0, err
		}
		bitOff := binary.LittleEndian.Uint16(b[p:])
		prec := binary.LittleEndian.Uint16(b[p+2:])
		p += 4
		if class == classFixed && (bitOff != 0 || int(prec) != 8*t.size) {
			// Packed integers (precision below the storage size) are not
			// produced by h5py, PyTables or CellRanger; reject rather than guess.
			t.class = -1
		}
	case classFloat:
		t.bigEndian = bits&1 != 0
		if bits&0x40 != 0 { // VAX byte order
			t.class = -1
		}
		if err := need(12); err != nil {
			return nil, 0, err
		}
		p += 12
	case 2: // time
		if err := need(2); err != nil {
			return nil, 0, err
		}
		p += 2
	case classString:
		t.strPad = int(bits & 0x0f)
	case classOpaque:
		n := int(bits & 0xff)
		if err := need(n); err != nil {
			return nil, 0, err
		}
		p += n
	case classRef:
	case classCompound:
		n := int(bits & 0xffff)
		for i := 0; i < n; i++ {
			var m member
			end := bytes.IndexByte(b[p:], 0)
			if end < 0 {
				return nil, 0, fmt.Errorf("%w: compound member name unterminated", errFormat)
			}
			m.name = string(b[p : p+end])
			if version < 3 {
				p += (end + 8) &^ 7
			} else {
				p += end + 1
			}
			switch {
			case version < 3:
				if err := need(4); err != nil {
					return nil, 0, err
				}
				m.offset = int(binary.LittleEndian.Uint32(b[p:]))
				p += 4
				if version == 1 {
					p += 1 + 3 + 4 + 4 + 16 // dimensionality, reserved, permutation, reserved, dims
				}
			default:
				w := 1
				for s := t.size; s > 0xff; s >>= 8 {
					w++
				}
				if err := need(w); err != nil {
					return nil, 0, err
				}
				m.offset = int(leUint(b[p:], w))
				p += w
			}
			if err := need(8); err != nil {
				return nil, 0, err
			}
			mt, used, err := parseDatatype(b[p:])
			if err != nil {
				return nil, 0, fmt.Errorf("compound member %q: %w", m.name, err)
			}
			p += used
			m.typ = mt
			t.members = append(t.members, m)
		}
	case classEnum:
		base, used, err := parseDatatype(b[p:])
		if err != nil {
			return nil, 0, fmt.Errorf("enum base type: %w", err)
		}
		p += used
		t.base = base
		n := int(bits & 0xffff)
		for i := 0; i < n; i++ {
			if err := need(0); err != nil { // a padded name may end past the message
				return nil, 0, err
			}
			end := bytes.IndexByte(b[p:], 0)
			if end < 0 {
				return nil, 0, fmt.Errorf("%w: enum member name unterminated", errFormat)
			}
			if version < 3 {
				p += (end + 8) &^ 7
			} else {
				p += end + 1
			}
		}
		if err := need(n * base.size); err != nil {
			return nil, 0, err
		}
		p += n * base.size
	case classVlen:
		t.vlenStr = bits&0x0f == 1
		base, used, err := parseDatatype(b[p:])
		if err != nil {
			return nil, 0, fmt.Errorf("variable-length base type: %w", err)
		}
		p += used
		t.base = base
	case classArray:
		if err := need(1); err != nil {
			return nil, 0, err
		}
		nd := int(b[p])
		p++
		if version < 3 {
			p += 3 + 8*nd
		} else {
			p += 4 * nd
		}
		if err := need(0); err != nil {
			return nil, 0, err
		}
		base, used, err := parseDatatype(b[p:])
		if err != nil {
			return nil, 0, fmt.Errorf("array base type: %w", err)
		}
		p += used
		t.base = base
	default:
		return nil, 0, fmt.Errorf("%w: unknown datatype class %d", errFormat, class)
	}
	if p > len(b) {
		return nil, 0, fmt.Errorf("%w: %s datatype truncated", errFormat, className(class))
	}
	return t, p, nil
}
