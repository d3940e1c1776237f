package h5

import (
	"fmt"
	"math"
)

// attr is an attribute reduced to its type, element count and raw data.
type attr struct {
	typ  *dtype
	n    int
	data []byte
}

// attribute finds attribute name of the object at obj; ok is false if the
// object has no such attribute.
func (f *File) attribute(obj, name string) (a *attr, ok bool, err error) {
	o, _, found := f.lookup(obj)
	if !found {
		return nil, false, fmt.Errorf("h5: %s: object %s not found", f.path, obj)
	}
	a, ok, err = f.findAttribute(o.msgs, name)
	if err != nil {
		return nil, false, fmt.Errorf("h5: %s: attributes of %s: %w", f.path, obj, err)
	}
	return a, ok, nil
}

// findAttribute finds attribute name among those of the object whose
// header holds msgs. The attribute messages, in the header or in dense
// storage, are decoded here, so that every integer width and
// variable-length strings work.
func (f *File) findAttribute(msgs []message, name string) (*attr, bool, error) {
	raw, err := f.m.attributeMessages(msgs)
	if err != nil {
		return nil, false, err
	}
	for _, b := range raw {
		m, err := parseAttribute(b, f.m.lengthSize)
		if err != nil {
			return nil, false, err
		}
		if m.name != name {
			continue
		}
		n, ok := elements(m.space, uint64(len(m.data)))
		if !ok || uint64(n)*uint64(m.typ.size) > uint64(len(m.data)) {
			return nil, false, fmt.Errorf("%w: attribute %s: shape %v of %d-byte elements in %d bytes",
				errFormat, name, m.space, m.typ.size, len(m.data))
		}
		return &attr{typ: m.typ, n: int(n), data: m.data}, true, nil
	}
	return nil, false, nil
}

// strings decodes a string attribute.
func (f *File) strings(a *attr) ([]string, error) {
	if a.typ.class != classString && !a.typ.vlenStr {
		return nil, fmt.Errorf("type %s is not a string", a.typ)
	}
	return f.decodeStrings(a.typ, a.data, a.typ.size, 0, a.n)
}

// int64s decodes an integer attribute, or a float one holding whole
// numbers.
func (a *attr) int64s() ([]int64, error) {
	nt, numeric := a.typ.numeric()
	if !numeric {
		return nil, fmt.Errorf("type %s is not an integer", a.typ)
	}
	out := make([]int64, a.n)
	if nt.class == classFloat {
		fs := make([]float64, a.n)
		dec, _ := newDecoder[float64](a.typ)
		dec(fs, a.data)
		for i, v := range fs {
			if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
				return nil, fmt.Errorf("value %g is not an integer", v)
			}
			out[i] = int64(v)
		}
		return out, nil
	}
	dec, err := newDecoder[int64](a.typ)
	if err != nil {
		return nil, err
	}
	if i := dec(out, a.data); i >= 0 {
		return nil, fmt.Errorf("value %d overflows int64", i)
	}
	return out, nil
}

// AttrStrings returns the string values of attribute name of the object obj
// (fixed-length or variable-length strings; a scalar gives one value).
// ok is false when the attribute does not exist.
func (f *File) AttrStrings(obj, name string) ([]string, bool, error) {
	a, ok, err := f.attribute(obj, name)
	if err != nil || !ok {
		return nil, ok, err
	}
	out, err := f.strings(a)
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
	out, err := a.int64s()
	if err != nil {
		return nil, true, fmt.Errorf("h5: %s: attribute %s of %s: %w", f.path, name, obj, err)
	}
	return out, true, nil
}
