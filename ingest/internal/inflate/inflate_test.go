package inflate

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	kflate "github.com/klauspost/compress/flate"
	kzlib "github.com/klauspost/compress/zlib"
)

// inputs returns byte strings of the kinds HDF5 chunks hold and the kinds
// that exercise every block type and code shape: empty, tiny, random
// (stored blocks, long codes), skewed text, long runs (overlapping matches
// with distance 1), and byte-shuffled integer arrays as 10x files store them.
func inputs() map[string][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	in := map[string][]byte{"empty": {}, "one": {7}, "abc": []byte("abcabcabcabcabc")}
	random := make([]byte, 100_000)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	in["random"] = random
	skew := make([]byte, 200_000)
	for i := range skew {
		// Geometric symbol frequencies give codes of every length up to 15.
		k := 0
		for r.Float64() < 0.62 && k < 40 {
			k++
		}
		skew[i] = byte('A' + k)
	}
	in["skewed"] = skew
	in["runs"] = bytes.Repeat([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3}, 30_000)
	in["zeros"] = make([]byte, 300_000)
	idx := make([]byte, 8*65536)
	for i := range 65536 {
		binary.LittleEndian.PutUint64(idx[8*i:], uint64(r.IntN(20000)))
	}
	in["indices-shuffled"] = shuffle(idx, 8)
	// As 10x files store them: each cell's genes (of 20 000) rising, with
	// gaps of mean 20.
	cells := make([]byte, 8*65536)
	for i, g := 0, 0; i < 65536; i++ {
		if g += 1 + int(r.ExpFloat64()*19); g >= 20000 {
			g = r.IntN(40)
		}
		binary.LittleEndian.PutUint64(cells[8*i:], uint64(g))
	}
	in["indices-cells"] = shuffle(cells, 8)
	// One chunk as PyTables writes them, 8 192 elements: a dynamic block
	// or two, so building the Huffman tables weighs more.
	in["indices-cells-8k"] = shuffle(cells[:8*8192], 8)
	data := make([]byte, 4*65536)
	for i := range 65536 {
		binary.LittleEndian.PutUint32(data[4*i:], uint32(1+r.ExpFloat64()*2))
	}
	in["counts-shuffled"] = shuffle(data, 4)
	return in
}

// shuffle applies HDF5's byte shuffle: byte j of element i goes to j*n+i.
func shuffle(p []byte, es int) []byte {
	n := len(p) / es
	out := make([]byte, len(p))
	for i := range n {
		for j := range es {
			out[j*n+i] = p[i*es+j]
		}
	}
	return out
}

func zlibBytes(t testing.TB, p []byte, level int) []byte {
	var buf bytes.Buffer
	w, err := zlib.NewWriterLevel(&buf, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(p)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestZlibRoundTrip decodes what compress/zlib writes at every level
// (stored, Huffman-only, fixed and dynamic codes) and what klauspost's
// encoder writes, into buffers of exactly the size, and checks that one byte
// less is errTooLong.
func TestZlibRoundTrip(t *testing.T) {
	t.Parallel()
	var d Decoder
	for name, p := range inputs() {
		for _, level := range []int{flate.HuffmanOnly, flate.NoCompression, 1, 4, 6, 9} {
			t.Run(fmt.Sprintf("%s/level%d", name, level), func(t *testing.T) {
				z := zlibBytes(t, p, level)
				dst := make([]byte, len(p))
				n, err := d.Zlib(dst, z)
				if err != nil || n != len(p) || !bytes.Equal(dst, p) {
					t.Fatalf("Zlib: n = %d of %d, err %v, equal %v", n, len(p), err, bytes.Equal(dst[:n], p))
				}
				// Bigger buffer: same n; trailing bytes after the stream ignored.
				big := make([]byte, len(p)+100)
				if n, err := d.Zlib(big, append(z, 1, 2, 3)); err != nil || n != len(p) || !bytes.Equal(big[:n], p) {
					t.Fatalf("Zlib into a larger buffer: n = %d, err %v", n, err)
				}
				if len(p) > 0 {
					if _, err := d.Zlib(dst[:len(p)-1], z); !errors.Is(err, errTooLong) {
						t.Fatalf("one byte short: err %v, want errTooLong", err)
					}
				}
			})
		}
		t.Run(name+"/klauspost", func(t *testing.T) {
			var buf bytes.Buffer
			w, _ := kflate.NewWriter(&buf, 4)
			w.Write(p)
			w.Close()
			dst := make([]byte, len(p))
			n, used, err := d.decode(dst, buf.Bytes(), nil)
			if err != nil || n != len(p) || used != buf.Len() || !bytes.Equal(dst, p) {
				t.Fatalf("decode: n = %d of %d, used %d of %d, err %v", n, len(p), used, buf.Len(), err)
			}
		})
	}
}

// TestCorruptStreams checks that every truncation of a valid stream gives
// an error, and every single-bit flip of a small one the outcome
// compress/zlib gives, never a panic.
func TestCorruptStreams(t *testing.T) {
	t.Parallel()
	var d Decoder
	in := inputs()
	for _, name := range []string{"abc", "skewed", "indices-shuffled"} {
		p := in[name][:min(len(in[name]), 3000)]
		z := zlibBytes(t, p, 6)
		dst := make([]byte, len(p))
		for cut := range len(z) {
			if _, err := d.Zlib(dst, z[:cut]); err == nil {
				t.Fatalf("%s cut to %d of %d bytes: no error", name, cut, len(z))
			}
		}
		for bit := range 8 * len(z) {
			c := bytes.Clone(z)
			c[bit/8] ^= 1 << (bit % 8)
			n, err := d.Zlib(dst, c)
			// compress/zlib must agree: Adler-32 misses a few flips (one
			// here turns the data into a different string with the same
			// checksum), and both decoders must then return the same bytes.
			want, werr := readAllZlib(c)
			if len(want) > len(dst) {
				continue
			}
			if (err == nil) != (werr == nil) || err == nil && !bytes.Equal(dst[:n], want) {
				t.Fatalf("%s bit %d flipped: %d bytes, err %v; compress/zlib: %d bytes, err %v", name, bit, n, err, len(want), werr)
			}
		}
	}
}

func readAllZlib(src []byte) ([]byte, error) {
	zr, err := zlib.NewReader(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(zr, 1<<20))
}

// TestHeaderErrors checks the zlib header and trailer checks.
func TestHeaderErrors(t *testing.T) {
	t.Parallel()
	z := zlibBytes(t, []byte("hello, hello, hello"), 6)
	cases := map[string][]byte{
		"short":      z[:1],
		"method":     append([]byte{0x79, z[1]}, z[2:]...),
		"check bits": append([]byte{z[0], z[1] ^ 1}, z[2:]...),
		"dictionary": append([]byte{0x78, 0xbb}, z[2:]...),
		"trailer":    z[:len(z)-2],
		"checksum":   append(bytes.Clone(z[:len(z)-1]), z[len(z)-1]^1),
		"block type": {0x78, 0x9c, 0x07},
	}
	var d Decoder
	for name, src := range cases {
		if _, err := d.Zlib(make([]byte, 64), src); !errors.Is(err, errCorrupt) {
			t.Errorf("%s: err %v, want errCorrupt", name, err)
		}
	}
}

// TestAdler32 compares Adler32 with hash/adler32 at every length up to a few
// blocks past adlerNmax, on bytes of 0xff (the worst case for overflow) and
// random bytes, with the assembly blocks (where the CPU has them) and with
// the Go path alone.
func TestAdler32(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	defer func(v bool) { useAVX2 = v }(useAVX2)
	for _, asm := range []bool{useAVX2, false} {
		useAVX2 = asm
		for _, fill := range []string{"ff", "random"} {
			p := make([]byte, 3*adlerNmax+100)
			for i := range p {
				p[i] = 0xff
				if fill == "random" {
					p[i] = byte(r.Uint32())
				}
			}
			for n := 0; n <= len(p); n += 1 + n/50 {
				for _, off := range []int{0, 1, 31} {
					q := p[min(off, n):n]
					if got, want := Adler32(q), adler32.Checksum(q); got != want {
						t.Fatalf("asm %v, %s, %d bytes: %08x, want %08x", asm, fill, len(q), got, want)
					}
				}
			}
		}
	}
}

// FuzzDecode compares decode (raw DEFLATE) with compress/flate on arbitrary input: when
// either decodes without error into 64 KiB, both must, to the same bytes.
// checkSpans checks the output of an eliding decode against want: the
// spans lie in order within the output and hold zeros in want, and
// clearing them gives want.
func checkSpans(got, want []byte, spans []Span) string {
	if len(got) != len(want) {
		return fmt.Sprintf("decoded %d bytes, want %d", len(got), len(want))
	}
	at := 0
	for _, z := range spans {
		if z.Lo < at || z.Hi <= z.Lo || z.Hi > len(got) {
			return fmt.Sprintf("spans %v: out of order or range (%d bytes)", spans, len(got))
		}
		if slices.ContainsFunc(want[z.Lo:z.Hi], func(b byte) bool { return b != 0 }) {
			return fmt.Sprintf("span %v holds non-zero bytes", z)
		}
		clear(got[z.Lo:z.Hi])
		at = z.Hi
	}
	if !bytes.Equal(got, want) {
		return "decoded bytes differ outside the spans"
	}
	return ""
}

// TestZlibElide decodes streams with long zero runs (in shuffled integer
// planes, at the end, across block boundaries, copied from further back
// than one byte) with ZlibElide into buffers of garbage, and checks that
// the runs are elided, that everything else is written, and that a wrong
// Adler-32 is still found.
func TestZlibElide(t *testing.T) {
	in := inputs()
	r := rand.New(rand.NewPCG(3, 4))
	mixed := make([]byte, 0, 2<<20)
	for len(mixed) < 2<<20 {
		mixed = append(mixed, make([]byte, r.IntN(200_000))...)
		for range r.IntN(5000) {
			mixed = append(mixed, byte(r.Uint32()))
		}
	}
	in["mixed"] = mixed
	in["period-3-zeros"] = append(bytes.Repeat([]byte{0, 0, 1}, 5000), make([]byte, 100_000)...)
	for name, p := range in {
		for _, level := range []int{0, 1, 4, 9} {
			z := zlibBytes(t, p, level)
			dst := bytes.Repeat([]byte{0xa5}, len(p))
			var d Decoder
			n, spans, err := d.ZlibElide(dst, z, nil)
			if err != nil {
				t.Fatalf("%s level %d: %v", name, level, err)
			}
			if msg := checkSpans(dst[:n], p, spans); msg != "" {
				t.Fatalf("%s level %d: %s", name, level, msg)
			}
			elided := 0
			for _, z := range spans {
				elided += z.Hi - z.Lo
			}
			if name == "zeros" && level > 0 && elided < len(p)-2*windowSize {
				t.Errorf("%s level %d: %d of %d zero bytes elided", name, level, elided, len(p))
			}
			if len(p) > 0 {
				bad := slices.Clone(z)
				bad[len(bad)-1] ^= 1
				if _, _, err := d.ZlibElide(dst, bad, nil); !errors.Is(err, errCorrupt) {
					t.Errorf("%s level %d: wrong Adler-32 gave %v", name, level, err)
				}
			}
		}
	}
}

// TestZlibElideEmptyStoredBlocks checks that an empty stored block does not
// end a zero run: Go's compress/flate ends every stream with one and writes
// one at each Flush, as zlib does at a sync or full flush. The run must be
// elided whole, but for what the encoder writes before its first long
// match, as if the stream had no such block; before, a run shorter than the
// window was written out in full.
func TestZlibElideEmptyStoredBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	head := make([]byte, 5000)
	for i := range head {
		head[i] = byte(1 + r.IntN(255))
	}
	tests := []struct {
		name    string
		run     int   // zero bytes after head, the end of the stream
		flushAt []int // offsets into the run where the writer flushes
	}{
		{"short run, final empty block", 16 << 10, nil},
		{"long run, final empty block", 200 << 10, nil},
		{"flush inside the run", 24 << 10, []int{10 << 10}},
		{"flushes inside the run", 100 << 10, []int{1000, 40 << 10, 70 << 10}},
		{"flush before the run", 16 << 10, []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, _ := zlib.NewWriterLevel(&buf, 4)
			w.Write(head)
			at := 0
			for _, f := range tt.flushAt {
				w.Write(make([]byte, f-at))
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
				at = f
			}
			w.Write(make([]byte, tt.run-at))
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			want := append(slices.Clone(head), make([]byte, tt.run)...)
			dst := bytes.Repeat([]byte{0xa5}, len(want))
			var d Decoder
			n, spans, err := d.ZlibElide(dst, buf.Bytes(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if msg := checkSpans(dst[:n], want, spans); msg != "" {
				t.Fatal(msg)
			}
			elided := 0
			for _, z := range spans {
				elided += z.Hi - z.Lo
			}
			// Each flush makes the encoder start the run anew: a literal,
			// then matches shorter than minZeroMatch at most.
			if slack := (1 + len(tt.flushAt)) * 2 * minZeroMatch; elided < tt.run-slack {
				t.Errorf("%d of the run's %d zero bytes elided (spans %v)", elided, tt.run, spans)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	for _, p := range inputs() {
		var buf bytes.Buffer
		w, _ := flate.NewWriter(&buf, 6)
		w.Write(p[:min(len(p), 2000)])
		w.Close()
		f.Add(buf.Bytes())
	}
	f.Add([]byte{0x03, 0x00})
	f.Add([]byte{0x01, 0x03, 0x00, 0xfc, 0xff, 'a', 'b', 'c'})
	f.Fuzz(func(t *testing.T, src []byte) {
		const limit = 64 << 10
		var d Decoder
		dst := make([]byte, limit)
		n, _, err := d.decode(dst, src, nil)
		want, werr := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(src)), limit+1))
		if len(want) > limit {
			return // beyond our buffer: errTooLong is right, flate's answer unknown
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("decode err %v, compress/flate err %v", err, werr)
		}
		if err == nil && !bytes.Equal(dst[:n], want) {
			t.Fatalf("decode decoded %d bytes, compress/flate %d, different", n, len(want))
		}
		// Eliding zero runs decodes the same, into a buffer of garbage.
		for i := range dst {
			dst[i] = 0xa5
		}
		spans := []Span{}
		ne, _, eerr := d.decode(dst, src, &elision{spans: &spans, zs: -1})
		if (eerr == nil) != (err == nil) {
			t.Fatalf("decode err %v, eliding err %v", err, eerr)
		}
		if err == nil {
			if msg := checkSpans(dst[:ne], want, spans); msg != "" {
				t.Fatal(msg)
			}
		}
	})
}

// BenchmarkZlib decodes a 512 KiB chunk of byte-shuffled int64 indices and
// a 256 KiB chunk of shuffled int32 counts, as 10x HDF5 files store them
// (deflate level 4), with this package and with klauspost's zlib reader.
func BenchmarkZlib(b *testing.B) {
	in := inputs()
	for _, name := range []string{"indices-shuffled", "indices-cells", "indices-cells-8k", "counts-shuffled", "skewed"} {
		p := in[name]
		z := zlibBytes(b, p, 4)
		dst := make([]byte, len(p))
		b.Run(name+"/inflate", func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			var d Decoder
			for b.Loop() {
				if _, err := d.Zlib(dst, z); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/inflate-elide", func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			var d Decoder
			spans := make([]Span, 0, 8)
			for b.Loop() {
				if _, _, err := d.ZlibElide(dst, z, spans[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/klauspost", func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			br := bytes.NewReader(z)
			zr, _ := kzlib.NewReader(br)
			for b.Loop() {
				br.Reset(z)
				zr.(kzlib.Resetter).Reset(br, nil)
				if _, err := io.ReadFull(zr, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("adler32/inflate", func(b *testing.B) {
		b.SetBytes(int64(len(in["random"])))
		for b.Loop() {
			Adler32(in["random"])
		}
	})
	b.Run("adler32/inflate-go", func(b *testing.B) {
		defer func(v bool) { useAVX2 = v }(useAVX2)
		useAVX2 = false
		p := in["random"]
		b.SetBytes(int64(len(p)))
		for b.Loop() {
			Adler32(p)
		}
	})
	b.Run("adler32/hash", func(b *testing.B) {
		p := in["random"]
		b.SetBytes(int64(len(p)))
		for b.Loop() {
			adler32.Checksum(p)
		}
	})
}

// BenchmarkReadCodes reads a dynamic block's header and builds its three
// tables, as every block of a chunk costs: the first block of a chunk of
// counts.
func BenchmarkReadCodes(b *testing.B) {
	var buf bytes.Buffer
	w, _ := kzlib.NewWriterLevel(&buf, 4)
	w.Write(inputs()["counts-shuffled"])
	w.Close()
	src := buf.Bytes()[2:]
	var d Decoder
	pos, bb, nb := refill(src, 0, 0, 0)
	if bb>>1&3 != 2 {
		b.Skipf("first block is of type %d, not dynamic", bb>>1&3)
	}
	bb, nb = bb>>3, nb-3
	for b.Loop() {
		if _, _, _, err := d.readCodes(src, pos, bb, nb); err != nil {
			b.Fatal(err)
		}
	}
}
