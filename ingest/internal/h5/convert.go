package h5

import (
	"encoding/binary"
	"fmt"
	"math"
)

// number is the set of output element types.
type number interface {
	int32 | int64 | float32 | float64
}

// decoder converts raw elements into T. It returns the index of the first
// element that does not fit T (or -1).
type decoder[T number] func(dst []T, raw []byte) int

// newDecoder returns a decoder from the stored type t into T. Integer outputs
// reject float sources; int32 rejects values outside its range and int64
// rejects uint64 values above MaxInt64.
func newDecoder[T number](t *dtype) (decoder[T], error) {
	nt, ok := t.numeric()
	if !ok {
		return nil, fmt.Errorf("element type %s is not numeric", t)
	}
	var zero T
	intOut := any(zero) == any(int32(0)) || any(zero) == any(int64(0))
	if intOut && nt.class == classFloat {
		return nil, fmt.Errorf("element type %s is not an integer type", nt)
	}
	var order binary.ByteOrder = binary.LittleEndian
	if nt.bigEndian {
		order = binary.BigEndian
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if any(zero) == any(int32(0)) {
		lo, hi = math.MinInt32, math.MaxInt32
	}
	es := nt.size
	if nt.class == classFloat {
		if es == 4 {
			return func(dst []T, raw []byte) int {
				for i := range dst {
					dst[i] = T(math.Float32frombits(order.Uint32(raw[4*i:])))
				}
				return -1
			}, nil
		}
		return func(dst []T, raw []byte) int {
			for i := range dst {
				dst[i] = T(math.Float64frombits(order.Uint64(raw[8*i:])))
			}
			return -1
		}, nil
	}
	// Fast paths for the layouts 10x and AnnData files use.
	if !nt.bigEndian && nt.signed {
		switch es {
		case 4:
			return func(dst []T, raw []byte) int {
				raw = raw[:4*len(dst)]
				for i := range dst {
					dst[i] = T(int32(binary.LittleEndian.Uint32(raw[4*i:])))
				}
				return -1
			}, nil
		case 8:
			if !intOut || hi == math.MaxInt64 {
				return func(dst []T, raw []byte) int {
					raw = raw[:8*len(dst)]
					for i := range dst {
						dst[i] = T(int64(binary.LittleEndian.Uint64(raw[8*i:])))
					}
					return -1
				}, nil
			}
			return func(dst []T, raw []byte) int {
				raw = raw[:8*len(dst)]
				for i := range dst {
					v := int64(binary.LittleEndian.Uint64(raw[8*i:]))
					if v < lo || v > hi {
						return i
					}
					dst[i] = T(v)
				}
				return -1
			}, nil
		}
	}
	signed := nt.signed
	return func(dst []T, raw []byte) int {
		for i := range dst {
			b := raw[es*i : es*i+es]
			var u uint64
			switch es {
			case 1:
				u = uint64(b[0])
			case 2:
				u = uint64(order.Uint16(b))
			case 4:
				u = uint64(order.Uint32(b))
			case 8:
				u = order.Uint64(b)
			}
			if signed {
				v := int64(u<<(64-8*es)) >> (64 - 8*es) // sign-extend
				if intOut && (v < lo || v > hi) {
					return i
				}
				dst[i] = T(v)
				continue
			}
			if intOut && u > uint64(hi) {
				return i
			}
			dst[i] = T(u)
		}
		return -1
	}, nil
}

// read fills dst with elements [start, start+len(dst)) converted to T.
func read[T number](d *Dataset, start int64, dst []T) error {
	dec, err := newDecoder[T](d.typ)
	if err != nil {
		return d.errorf("%w", err)
	}
	misfit := func(off int64, i int) error {
		if i < 0 {
			return nil
		}
		return d.errorf("element %d (%s) does not fit %T", start+off+int64(i), d.typ, dst[0])
	}
	var planes planesFunc
	if pdec := newPlaneDecoder(d.typ, dec); pdec != nil {
		planes = func(off int64, raw []byte, n, from, count int, zero uint64) error {
			return misfit(off, pdec(dst[off:off+int64(count)], raw, n, from, zero))
		}
	}
	es := int64(d.elemSize)
	return d.visit(start, int64(len(dst)), func(off int64, raw []byte) error {
		return misfit(off, dec(dst[off:off+int64(len(raw))/es], raw))
	}, planes)
}

// ReadInt64 reads elements [start, start+len(dst)) in row-major order into
// dst. The dataset must hold integers (or an enum of integers); unsigned
// values above MaxInt64 are an error.
func (d *Dataset) ReadInt64(start int64, dst []int64) error { return read(d, start, dst) }

// ReadInt32 is ReadInt64 for int32 output; a value outside the int32 range is
// an error naming the element. It is the hot path for 10x `indices`.
func (d *Dataset) ReadInt32(start int64, dst []int32) error { return read(d, start, dst) }

// ReadFloat64 reads elements [start, start+len(dst)) of any numeric type,
// converted to float64 (64-bit integers beyond 2^53 lose precision).
func (d *Dataset) ReadFloat64(start int64, dst []float64) error { return read(d, start, dst) }

// ReadFloat32 reads elements [start, start+len(dst)) of any numeric type,
// rounded to float32.
func (d *Dataset) ReadFloat32(start int64, dst []float32) error { return read(d, start, dst) }
