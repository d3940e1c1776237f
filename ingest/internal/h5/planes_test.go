package h5

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
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

// TestPlaneDecoderGo is TestPlaneDecoder's plain paths for the Go loops
// that the assembly widening stands in for. Not parallel: it switches the
// assembly off for the package.
func TestPlaneDecoderGo(t *testing.T) {
	if !useAVX2 {
		t.Skip("TestPlaneDecoder already runs the Go loops")
	}
	useAVX2 = false
	defer func() { useAVX2 = true }()
	for _, es := range []int{4, 8} {
		typ := &dtype{class: classFixed, size: es}
		checkPlanes[int32](t, typ)
		checkPlanes[float64](t, typ)
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
			gi := pdec(got, planes, n, from, 0)
			if gi != wi || (wi < 0 && fmt.Sprint(got) != fmt.Sprint(want)) {
				t.Fatalf("%T from %d-bit values, run [%d, %d): planes give %v (bad %d), unshuffled %v (bad %d)",
					got, bitsMax, from, from+m, got[:min(m, 4)], gi, want[:min(m, 4)], wi)
			}
			// Planes marked zero are read as zeros whatever they hold:
			// garbage there changes nothing.
			zero, garbled := uint64(0), slices.Clone(planes)
			for j := range es {
				if allZero(planes[j*n : (j+1)*n]) {
					zero |= 1 << j
					for i := range n {
						garbled[j*n+i] = byte(0xa5 + i)
					}
				}
			}
			if gi := pdec(got, garbled, n, from, zero); gi != wi || (wi < 0 && fmt.Sprint(got) != fmt.Sprint(want)) {
				t.Fatalf("%T from %d-bit values, run [%d, %d), planes %b marked zero: %v (bad %d), want %v (bad %d)",
					got, bitsMax, from, from+m, zero, got[:min(m, 4)], gi, want[:min(m, 4)], wi)
			}
		}
	}
}

// TestUnfilterElides undoes shuffle and deflate on chunks of small 8- and
// 4-byte integers, as 10x files store indices and counts, and checks that
// the zero high planes are reported and not written, and that every other
// byte is; and that without planes the chunk comes back whole.
func TestUnfilterElides(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		es, n    int
		bitsMax  int
		wantZero uint64
	}{
		{8, 65536, 15, 0b11111100},
		{4, 65536, 4, 0b1110},
		{8, 65536, 40, 0b11100000},
		// Zero planes shorter than the window, at the stream's end: elided
		// past the empty stored block compress/zlib ends the stream with.
		{8, 1000, 15, 0b11111100},
	} {
		elems := make([]byte, tc.n*tc.es)
		for i := range tc.n {
			v := r.Uint64() >> (64 - tc.bitsMax)
			if tc.es == 4 {
				binary.LittleEndian.PutUint32(elems[i*4:], uint32(v))
			} else {
				binary.LittleEndian.PutUint64(elems[i*8:], v)
			}
		}
		shuffled := make([]byte, len(elems))
		for i := range tc.n {
			for j := range tc.es {
				shuffled[j*tc.n+i] = elems[i*tc.es+j]
			}
		}
		var z bytes.Buffer
		w, _ := zlib.NewWriterLevel(&z, 4)
		w.Write(shuffled)
		w.Close()
		fs := []filter{{id: filterShuffle, client: []uint32{uint32(tc.es)}}, {id: filterDeflate}}
		for _, planes := range []bool{true, false} {
			raw := getBuf(z.Len())
			copy(raw, z.Bytes())
			// A pooled buffer full of garbage, as after earlier chunks.
			g := getBuf(len(elems))
			for i := range g {
				g[i] = 0xa5
			}
			putBuf(g)
			out, isShuffled, zero, err := unfilter(fs, 0, raw, len(elems), planes)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("es %d, n %d, %d bits, planes %v", tc.es, tc.n, tc.bitsMax, planes)
			if !planes {
				if isShuffled || zero != 0 || !bytes.Equal(out, elems) {
					t.Fatalf("%s: shuffled %v, zero %b, or bytes differ", name, isShuffled, zero)
				}
				continue
			}
			if !isShuffled || zero != tc.wantZero {
				t.Fatalf("%s: shuffled %v, zero planes %b, want %b", name, isShuffled, zero, tc.wantZero)
			}
			for j := range tc.es {
				if zero>>j&1 == 0 && !bytes.Equal(out[j*tc.n:(j+1)*tc.n], shuffled[j*tc.n:(j+1)*tc.n]) {
					t.Fatalf("%s: plane %d, not marked zero, differs", name, j)
				}
			}
		}
	}
}

// TestWiden checks the assembly widening of one and two byte planes into
// float64 and int32 against the Go loops, for every length up to 70 and at
// odd offsets into the planes.
func TestWiden(t *testing.T) {
	if !useAVX2 {
		t.Skip("no assembly widening on this CPU or build")
	}
	r := rand.New(rand.NewPCG(9, 9))
	p0, p1 := make([]byte, 100), make([]byte, 100)
	for i := range p0 {
		p0[i], p1[i] = byte(r.Uint32()), byte(r.Uint32())
	}
	for n := range 71 {
		for _, off := range []int{0, 3} {
			a, b := p0[off:off+n], p1[off:off+n]
			checkWiden[float64](t, n, a, b)
			checkWiden[int32](t, n, a, b)
		}
	}
}

func checkWiden[T float64 | int32](t *testing.T, n int, p0, p1 []byte) {
	t.Helper()
	want1, want2 := make([]T, n), make([]T, n)
	for i := range n {
		want1[i], want2[i] = T(p0[i]), T(uint32(p0[i])|uint32(p1[i])<<8)
	}
	got1, got2 := make([]T, n), make([]T, n)
	widen1(got1, p0)
	widen2(got2, p0, p1)
	if !slices.Equal(got1, want1) || !slices.Equal(got2, want2) {
		t.Fatalf("%T, %d elements: widen1 %v, widen2 %v; want %v, %v", got1, n, got1, got2, want1, want2)
	}
}
