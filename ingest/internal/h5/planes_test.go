package h5

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestPlaneDecoder compares decoding straight from byte planes with
// unshuffling and decoding, for 4- and 8-byte signed and unsigned integers
// read as every output type, on runs that take each path: values below 2¹⁶
// and 2²⁴ (read from the low planes), larger, negative and out-of-range ones
// (unshuffled and range-checked), at several offsets into the chunk.
func TestPlaneDecoder(t *testing.T) {
	t.Parallel()
	for _, es := range []int{4, 8} {
		for _, signed := range []bool{true, false} {
			typ := &dtype{class: classFixed, size: es, signed: signed}
			t.Run(fmt.Sprintf("size%d/signed=%v", es, signed), func(t *testing.T) {
				checkPlanes[int32](t, typ)
				checkPlanes[int64](t, typ)
				checkPlanes[float32](t, typ)
				checkPlanes[float64](t, typ)
			})
		}
	}
	if newPlaneDecoder(&dtype{class: classFloat, size: 8}, decoder[float64](nil)) != nil {
		t.Error("a plane decoder for floats")
	}
	if newPlaneDecoder(&dtype{class: classFixed, size: 8, signed: true, bigEndian: true}, decoder[int64](nil)) != nil {
		t.Error("a plane decoder for big-endian integers")
	}
}

func checkPlanes[T number](t *testing.T, typ *dtype) {
	t.Helper()
	dec, err := newDecoder[T](typ)
	if err != nil {
		t.Fatal(err)
	}
	pdec := newPlaneDecoder(typ, dec)
	if pdec == nil {
		t.Fatalf("no plane decoder for %v", typ)
	}
	es := typ.size
	r := rand.New(rand.NewPCG(uint64(es), 1))
	const n = 300
	for _, bitsMax := range []int{8, 16, 24, 31, 8*es - 1, 8 * es} {
		elems := make([]byte, n*es)
		for i := range n {
			v := r.Uint64() >> (64 - bitsMax)
			if bitsMax == 8*es && i%7 == 0 {
				v = ^uint64(0) // -1 when signed: the sign plane is set
			}
			if es == 4 {
				binary.LittleEndian.PutUint32(elems[i*es:], uint32(v))
			} else {
				binary.LittleEndian.PutUint64(elems[i*es:], v)
			}
		}
		planes := make([]byte, len(elems))
		for i := range n {
			for j := range es {
				planes[j*n+i] = elems[i*es+j]
			}
		}
		for _, run := range [][2]int{{0, n}, {17, 100}, {n - 1, 1}, {5, 0}} {
			from, m := run[0], run[1]
			want, got := make([]T, m), make([]T, m)
			wi := dec(want, elems[from*es:(from+m)*es])
			gi := pdec(got, planes, n, from)
			if gi != wi || (wi < 0 && fmt.Sprint(got) != fmt.Sprint(want)) {
				t.Fatalf("%T from %d-bit values, run [%d, %d): planes give %v (bad %d), unshuffled %v (bad %d)",
					got, bitsMax, from, from+m, got[:min(m, 4)], gi, want[:min(m, 4)], wi)
			}
		}
	}
}
