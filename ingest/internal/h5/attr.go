package h5

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/scigolib/hdf5"
)

// attr is an attribute reduced to its type, element count and raw data.
type attr struct {
	typ  *dtype
	n    int
	data []byte
}

// attribute finds attribute name of the object at obj; ok is false if the
// object has no such attribute. scigolib parses the attribute messages
// (including dense attribute storage); the values are decoded here so that
// every integer width and variable-length strings work.
func (f *File) attribute(obj, name string) (a *attr, ok bool, err error) {
	o, found := f.lookup(obj)
	if !found {
		return nil, false, fmt.Errorf("h5: %s: object %s not found", f.path, obj)
	}
	var list []attrView
	switch x := o.(type) {
	case *hdf5.Group:
		as, err := x.Attributes()
		if err != nil {
			return nil, false, fmt.Errorf("h5: %s: attributes of %s: %w", f.path, obj, err)
		}
		for _, a := range as {
			list = append(list, attrView{a.Name, encodeDatatype(uint8(a.Datatype.Class), a.Datatype.Version,
				a.Datatype.Size, a.Datatype.ClassBitField, a.Datatype.Properties), a.Dataspace.Dimensions,
				uint8(a.Dataspace.Type), a.Data})
		}
	case *hdf5.Dataset:
		as, err := x.Attributes()
		if err != nil {
			return nil, false, fmt.Errorf("h5: %s: attributes of %s: %w", f.path, obj, err)
		}
		for _, a := range as {
			list = append(list, attrView{a.Name, encodeDatatype(uint8(a.Datatype.Class), a.Datatype.Version,
				a.Datatype.Size, a.Datatype.ClassBitField, a.Datatype.Properties), a.Dataspace.Dimensions,
				uint8(a.Dataspace.Type), a.Data})
		}
	default:
		return nil, false, fmt.Errorf("h5: %s: %s has no attributes", f.path, obj)
	}
	for _, v := range list {
		if v.name != name {
			continue
		}
		t, _, err := parseDatatype(v.rawType)
		if err != nil {
			return nil, false, fmt.Errorf("h5: %s: attribute %s of %s: %w", f.path, name, obj, err)
		}
		n := 1
		if v.spaceType == 2 { // null dataspace
			n = 0
		}
		for _, d := range v.dims {
			n *= int(d)
		}
		if n*t.size > len(v.data) {
			return nil, false, fmt.Errorf("h5: %s: attribute %s of %s: %w: %d elements of %d bytes in %d bytes",
				f.path, name, obj, errFormat, n, t.size, len(v.data))
		}
		return &attr{typ: t, n: n, data: v.data}, true, nil
	}
	return nil, false, nil
}

// attrView holds the exported fields of scigolib's attribute type.
type attrView struct {
	name      string
	rawType   []byte
	dims      []uint64
	spaceType uint8
	data      []byte
}

// encodeDatatype rebuilds a datatype message from scigolib's parsed fields.
func encodeDatatype(class, version uint8, size, bits uint32, props []byte) []byte {
	b := make([]byte, 8+len(props))
	b[0] = class&0x0f | version<<4
	b[1], b[2], b[3] = byte(bits), byte(bits>>8), byte(bits>>16)
	binary.LittleEndian.PutUint32(b[4:], size)
	copy(b[8:], props)
	return b
}

// AttrStrings returns the string values of attribute name of the object obj
// (fixed-length or variable-length strings; a scalar gives one value).
// ok is false when the attribute does not exist.
func (f *File) AttrStrings(obj, name string) ([]string, bool, error) {
	a, ok, err := f.attribute(obj, name)
	if err != nil || !ok {
		return nil, ok, err
	}
	if a.typ.class != classString && !a.typ.vlenStr {
		return nil, true, fmt.Errorf("h5: %s: attribute %s of %s has type %s, not a string", f.path, name, obj, a.typ)
	}
	out, err := f.decodeStrings(a.typ, a.data, a.typ.size, 0, a.n)
	if err != nil {
		return nil, true, fmt.Errorf("h5: %s: attribute %s of %s: %w", f.path, name, obj, err)
	}
	return out, true, nil
}

// AttrString returns a string attribute holding one value (a scalar or a
// one-element array). ok is false when the attribute does not exist.
func (f *File) AttrString(obj, name string) (string, bool, error) {
	ss, ok, err := f.AttrStrings(obj, name)
	if err != nil || !ok {
		return "", ok, err
	}
	if len(ss) != 1 {
		return "", true, fmt.Errorf("h5: %s: attribute %s of %s holds %d strings, want 1", f.path, name, obj, len(ss))
	}
	return ss[0], true, nil
}

// AttrInt64s returns the values of an integer attribute (any width,
// signed or unsigned), such as the `shape` attribute of an h5ad sparse
// group. Float attributes are accepted when every value is a whole number.
// ok is false when the attribute does not exist.
func (f *File) AttrInt64s(obj, name string) ([]int64, bool, error) {
	a, ok, err := f.attribute(obj, name)
	if err != nil || !ok {
		return nil, ok, err
	}
	nt, numeric := a.typ.numeric()
	if !numeric {
		return nil, true, fmt.Errorf("h5: %s: attribute %s of %s has type %s, not an integer", f.path, name, obj, a.typ)
	}
	out := make([]int64, a.n)
	if nt.class == classFloat {
		fs := make([]float64, a.n)
		dec, _ := newDecoder[float64](a.typ)
		dec(fs, a.data)
		for i, v := range fs {
			if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
				return nil, true, fmt.Errorf("h5: %s: attribute %s of %s: value %g is not an integer", f.path, name, obj, v)
			}
			out[i] = int64(v)
		}
		return out, true, nil
	}
	dec, err := newDecoder[int64](a.typ)
	if err != nil {
		return nil, true, fmt.Errorf("h5: %s: attribute %s of %s: %w", f.path, name, obj, err)
	}
	if i := dec(out, a.data); i >= 0 {
		return nil, true, fmt.Errorf("h5: %s: attribute %s of %s: value %d overflows int64", f.path, name, obj, i)
	}
	return out, true, nil
}
