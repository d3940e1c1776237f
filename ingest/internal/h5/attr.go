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
// object has no such attribute. The attribute messages, in the object's
// header or in dense storage, are decoded here, so that every integer width
// and variable-length strings work.
func (f *File) attribute(obj, name string) (a *attr, ok bool, err error) {
	o, _, found := f.lookup(obj)
	if !found {
		return nil, false, fmt.Errorf("h5: %s: object %s not found", f.path, obj)
	}
	msgs, err := f.m.attributeMessages(o.msgs)
	if err != nil {
		return nil, false, fmt.Errorf("h5: %s: attributes of %s: %w", f.path, obj, err)
	}
	for _, b := range msgs {
		m, err := parseAttribute(b, f.m.lengthSize)
		if err != nil {
			return nil, false, fmt.Errorf("h5: %s: attributes of %s: %w", f.path, obj, err)
		}
		if m.name != name {
			continue
		}
		n, ok := elements(m.space, uint64(len(m.data)))
		if !ok || uint64(n)*uint64(m.typ.size) > uint64(len(m.data)) {
			return nil, false, fmt.Errorf("h5: %s: attribute %s of %s: %w: shape %v of %d-byte elements in %d bytes",
				f.path, name, obj, errFormat, m.space, m.typ.size, len(m.data))
		}
		return &attr{typ: m.typ, n: int(n), data: m.data}, true, nil
	}
	return nil, false, nil
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
