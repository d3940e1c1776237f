package lzf

import (
	"bytes"
	"errors"
	"math/rand"
	"testing"
)

// compress is a small reference LZF compressor (greedy, hash of 3 bytes),
// emitting literal runs of up to 32 bytes and back-references of 3..264
// bytes at distances up to 8192, the full range the format allows.
func compress(src []byte) []byte {
	var out, lit []byte
	flush := func() {
		for len(lit) > 0 {
			n := min(len(lit), 32)
			out = append(out, byte(n-1))
			out = append(out, lit[:n]...)
			lit = lit[n:]
		}
	}
	table := map[[3]byte]int{}
	for i := 0; i < len(src); {
		if i+3 <= len(src) {
			key := [3]byte{src[i], src[i+1], src[i+2]}
			ref, ok := table[key]
			table[key] = i
			if ok && i-ref <= 8192 {
				n := 0
				for i+n < len(src) && n < 264 && src[ref+n] == src[i+n] {
					n++
				}
				if n >= 3 {
					flush()
					dist := i - ref - 1
					l := n - 2
					if l < 7 {
						out = append(out, byte(l<<5|dist>>8))
					} else {
						out = append(out, byte(7<<5|dist>>8), byte(l-7))
					}
					out = append(out, byte(dist))
					i += n
					continue
				}
			}
		}
		lit = append(lit, src[i])
		i++
	}
	flush()
	return out
}

func TestDecodeHandmade(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want []byte
	}{
		{"empty", nil, nil},
		{"one literal", []byte{0, 'a'}, []byte("a")},
		{"32-byte literal", append([]byte{31}, bytes.Repeat([]byte("x"), 32)...), bytes.Repeat([]byte("x"), 32)},
		// "ab" then a 3-byte copy at distance 2: overlapping repeat.
		{"overlap", []byte{1, 'a', 'b', 1 << 5, 1}, []byte("ababa")},
		// Distance 1, length 7+255+2 = 264: the longest run-length repeat.
		{"longest run", []byte{0, 'z', 7 << 5, 255, 0}, bytes.Repeat([]byte("z"), 265)},
		// Length field 7 with extension 0: 9 bytes.
		{"extended length 0", []byte{0, 'q', 7 << 5, 0, 0}, bytes.Repeat([]byte("q"), 10)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := make([]byte, len(tc.want))
			n, err := Decode(dst, tc.in)
			if err != nil || !bytes.Equal(dst[:n], tc.want) {
				t.Fatalf("Decode = %q, %v; want %q", dst[:n], err, tc.want)
			}
			if len(tc.want) > 0 {
				// One byte short must be an error, not a partial write.
				if _, err := Decode(make([]byte, len(tc.want)-1), tc.in); !errors.Is(err, errShortBuffer) {
					t.Errorf("short destination: err = %v, want errShortBuffer", err)
				}
			}
		})
	}
}

func TestDecodeCorrupt(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
	}{
		{"literal overruns input", []byte{5, 'a', 'b'}},
		{"reference before start", []byte{0, 'a', 1 << 5, 5}},
		{"distance byte missing", []byte{0, 'a', 1 << 5}},
		{"length byte missing", []byte{0, 'a', 7 << 5}},
		{"reference with no output", []byte{1 << 5, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Decode(make([]byte, 1000), tc.in); !errors.Is(err, errCorrupt) {
				t.Fatalf("err = %v, want errCorrupt", err)
			}
		})
	}
}

// TestRoundTrip compresses random data of every kind of redundancy and sizes
// around the literal (32) and reference (264, 8192) limits.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	gens := map[string]func(n int) []byte{
		"random": func(n int) []byte { b := make([]byte, n); rng.Read(b); return b },
		"runs": func(n int) []byte {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(i / (1 + rng.Intn(300)) % 3)
			}
			return b
		},
		"zeros": func(n int) []byte { return make([]byte, n) },
		"far repeats": func(n int) []byte {
			b := make([]byte, n)
			rng.Read(b[:min(n, 5000)])
			for i := 5000; i < n; i++ {
				b[i] = b[i-5000+rng.Intn(2)]
			}
			return b
		},
		"int32 counts": func(n int) []byte {
			b := make([]byte, n)
			for i := 0; i+4 <= n; i += 4 {
				b[i] = byte(rng.Intn(4))
			}
			return b
		},
	}
	sizes := []int{1, 2, 3, 31, 32, 33, 63, 64, 65, 263, 264, 265, 266, 8191, 8192, 8193, 20000, 100000}
	for name, gen := range gens {
		for _, n := range sizes {
			src := gen(n)
			c := compress(src)
			dst := make([]byte, n)
			got, err := Decode(dst, c)
			if err != nil || got != n || !bytes.Equal(dst, src) {
				t.Fatalf("%s n=%d: round trip failed (n=%d, err=%v)", name, n, got, err)
			}
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte{0, 'a'}, 4)
	f.Add([]byte{1, 'a', 'b', 1 << 5, 1}, 5)
	f.Add([]byte{0, 'z', 7 << 5, 255, 0}, 265)
	f.Add(compress([]byte("the quick brown fox jumps over the quick brown dog")), 64)
	f.Fuzz(func(t *testing.T, in []byte, size int) {
		if size < 0 || size > 1<<16 {
			return
		}
		// Guard bytes beyond len(dst) catch out-of-bounds writes.
		buf := make([]byte, size+16)
		for i := size; i < len(buf); i++ {
			buf[i] = 0xa5
		}
		n, err := Decode(buf[:size:size], in)
		if n < 0 || n > size {
			t.Fatalf("n = %d outside 0..%d", n, size)
		}
		for i := size; i < len(buf); i++ {
			if buf[i] != 0xa5 {
				t.Fatalf("write beyond destination at %d", i)
			}
		}
		if err == nil {
			// A valid stream decodes identically after re-compression.
			again := make([]byte, n)
			if m, err := Decode(again, compress(buf[:n])); err != nil || m != n || !bytes.Equal(again, buf[:n]) {
				t.Fatalf("re-compressed output does not round-trip: %v", err)
			}
		}
	})
}
