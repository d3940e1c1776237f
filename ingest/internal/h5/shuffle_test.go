package h5

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestUnshuffle compares the fast element sizes against the byte-at-a-time
// reference at lengths around every boundary, with trailing partial
// elements, random bytes and values whose high byte planes are zero (the
// int64 indices case the 8-byte path shortcuts), and checks nothing is
// written past the output.
func TestUnshuffle(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	for _, es := range []int{1, 2, 3, 4, 8} {
		for _, n := range []int{0, 1, 2, 7, 8, 9, 63, 64, 65, 1000} {
			for _, tail := range []int{0, es - 1} {
				for _, zeroHigh := range []int{0, 1, 4, 7} {
					name := fmt.Sprintf("es=%d/n=%d/tail=%d/zero-high=%d", es, n, tail, zeroHigh)
					elems := make([]byte, n*es+tail)
					for i := range elems {
						elems[i] = byte(rng.Uint32())
					}
					for i := 0; i < n; i++ {
						for j := es - min(zeroHigh, es-1); j < es; j++ {
							elems[i*es+j] = 0 // high bytes of small values
						}
					}
					// Shuffle with the definition: byte j of element i at j*n+i.
					src := make([]byte, len(elems))
					for i := 0; i < n; i++ {
						for j := 0; j < es; j++ {
							src[j*n+i] = elems[i*es+j]
						}
					}
					copy(src[n*es:], elems[n*es:])
					const guard = 0xA5
					dst := bytes.Repeat([]byte{guard}, len(src)+8)
					unshuffle(dst[:len(src)], src, es)
					if !bytes.Equal(dst[:len(src)], elems) {
						t.Fatalf("%s: unshuffle differs from the original elements", name)
					}
					for _, b := range dst[len(src):] {
						if b != guard {
							t.Fatalf("%s: wrote past the output", name)
						}
					}
					ref := make([]byte, len(src))
					unshuffleBytes(ref, src, es)
					if !bytes.Equal(ref, elems) {
						t.Fatalf("%s: reference differs from the original elements", name)
					}
				}
			}
		}
	}
}

// BenchmarkUnshuffle measures the fast paths against the reference on a
// 64 Ki-element chunk of small counts (high bytes zero, as 10x stores them).
func BenchmarkUnshuffle(b *testing.B) {
	const n = 1 << 16
	rng := rand.New(rand.NewPCG(1, 2))
	for _, es := range []int{4, 8} {
		src := make([]byte, n*es)
		for i := range 2 * n {
			src[i] = byte(rng.Uint32())
		}
		dst := make([]byte, len(src))
		for _, impl := range []struct {
			name string
			fn   func(dst, src []byte, es int)
		}{{"fast", unshuffle}, {"reference", unshuffleBytes}} {
			b.Run(fmt.Sprintf("es=%d/%s", es, impl.name), func(b *testing.B) {
				b.SetBytes(int64(len(src)))
				for b.Loop() {
					impl.fn(dst, src, es)
				}
			})
		}
	}
}

// TestAllZero sets each byte of slices of every length up to 100 in turn:
// allZero must see it wherever it falls among the 32-byte steps and the tail.
func TestAllZero(t *testing.T) {
	t.Parallel()
	for n := range 101 {
		p := make([]byte, n)
		if !allZero(p) {
			t.Fatalf("len %d: zeros reported non-zero", n)
		}
		for i := range p {
			p[i] = 0x80
			if allZero(p) {
				t.Fatalf("len %d: byte %d missed", n, i)
			}
			p[i] = 0
		}
	}
}
