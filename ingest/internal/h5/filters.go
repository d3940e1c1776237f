package h5

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"

	"scpipe/ingest/internal/inflate"
	"scpipe/ingest/internal/lzf"
)

// checkFilters rejects, when a dataset of elemSize-byte elements is opened,
// any filter this package cannot undo, so that no read returns partial
// data, and a byte shuffle of another element size (libhdf5 stores the
// dataset's, and reads straight from the byte planes assume it).
func checkFilters(fs []filter, elemSize int) error {
	for _, f := range fs {
		switch f.id {
		case filterShuffle:
			if shuffleSize(f) < 1 || shuffleSize(f) != elemSize {
				return fmt.Errorf("%w: byte shuffle of %d-byte elements for elements of %d bytes", errFormat, shuffleSize(f), elemSize)
			}
		case filterDeflate, filterFletcher32, filterLZF:
		default:
			name := f.name
			if name == "" {
				name = map[int]string{4: "szip", 5: "nbit", 6: "scaleoffset", 307: "bzip2",
					32001: "blosc", 32004: "lz4", 32008: "bitshuffle", 32015: "zstd"}[f.id]
			}
			return fmt.Errorf("filter %d (%s) is not supported", f.id, name)
		}
	}
	return nil
}

// inflaters recycles zlib decoders (each holds ~50 KiB of tables).
var inflaters = sync.Pool{New: func() any { return new(inflate.Decoder) }}

// byteBufs recycles chunk-sized byte buffers.
var byteBufs sync.Pool

func getBuf(n int) []byte {
	if v, ok := byteBufs.Get().(*[]byte); ok && cap(*v) >= n {
		return (*v)[:n]
	}
	return make([]byte, n)
}

func putBuf(b []byte) {
	if cap(b) == 0 {
		return
	}
	byteBufs.Put(&b)
}

// unfilter undoes the filter pipeline (in reverse order) on a stored chunk.
// want is the decoded size in bytes; the result may be shorter than want
// (but not longer) when a writer stored a truncated edge chunk, and the
// caller checks that the bytes it needs are present. It returns the decoded bytes, which may
// be raw itself or a buffer from the pool; the other buffer is released.
// With planes, a byte shuffle that is the pipeline's first filter (the last
// undone) is left in place when the chunk decoded to want bytes, and
// shuffled reports it: the caller then decodes straight from the planes.
// A deflate filter undone just before such a shuffle leaves long zero runs
// unwritten (see inflate.ZlibElide): the planes they cover whole are
// reported in zero (bit j: plane j), and hold garbage; every other byte is
// written.
//
// No buffer is larger than the stored bytes can decode to through one
// expanding filter (maxInflate times them): want comes from the file, and
// a pipeline that expands twice (deflate upon deflate, which no writer
// makes) would otherwise turn a few hundred bytes into gigabytes.
func unfilter(fs []filter, mask uint32, raw []byte, want int, planes bool) (out []byte, shuffled bool, zero uint64, err error) {
	bound := min(want, maxInflate*len(raw))
	cur := raw
	var spans []inflate.Span
	for i := len(fs) - 1; i >= 0; i-- {
		if mask&(1<<uint(i)) != 0 {
			continue
		}
		f := fs[i]
		if planes && i == 0 && f.id == filterShuffle && len(cur) == want {
			return cur, true, zeroPlanes(cur, f, spans), nil
		}
		materialise(cur, spans)
		spans = nil
		var next []byte
		var err error
		switch f.id {
		case filterDeflate:
			// Zero runs are worth eliding only for a shuffle left undone.
			elide := planes && i == 1 && mask&1 == 0 && fs[0].id == filterShuffle
			next, spans, err = inflateChunk(cur, bound, elide)
		case filterLZF:
			next = getBuf(min(bound, maxLZF*len(cur)))
			var n int
			n, err = lzf.Decode(next, cur)
			next = next[:n]
		case filterShuffle:
			next = getBuf(len(cur))
			unshuffle(next, cur, shuffleSize(f))
		case filterFletcher32:
			if err = verifyFletcher32(cur); err == nil {
				cur = cur[:len(cur)-4]
				continue
			}
		default:
			err = fmt.Errorf("filter %d is not supported", f.id)
		}
		if err != nil {
			putBuf(next)
			return nil, false, 0, fmt.Errorf("filter %d: %w", f.id, err)
		}
		putBuf(cur)
		cur = next
	}
	materialise(cur, spans)
	if len(cur) > want {
		return nil, false, 0, fmt.Errorf("%w: decoded chunk has %d bytes, want %d", errFormat, len(cur), want)
	}
	return cur, false, 0, nil
}

// materialise writes the zeros of the elided spans.
func materialise(b []byte, spans []inflate.Span) {
	for _, z := range spans {
		clear(b[z.Lo:z.Hi])
	}
}

// zeroPlanes returns the byte planes of b, shuffled by f, that are zero:
// those that elided spans (increasing, disjoint) cover but for bytes that
// are written and zero, such as a run's first byte, which is a literal. It
// writes the zeros of the spans' bytes in every other plane.
func zeroPlanes(b []byte, f filter, spans []inflate.Span) uint64 {
	es := shuffleSize(f)
	n := len(b) / es
	var zero uint64
	for j := 0; j < min(es, 64) && n > 0 && len(spans) > 0; j++ {
		lo, hi := j*n, (j+1)*n
		for len(spans) > 0 && spans[0].Hi <= lo {
			spans = spans[1:]
		}
		// The spans meeting the plane, and whether the bytes between them
		// are zero.
		k, at, zeros := 0, lo, true
		for ; k < len(spans) && spans[k].Lo < hi; k++ {
			zeros = zeros && allZero(b[at:max(at, spans[k].Lo)])
			at = min(spans[k].Hi, hi)
		}
		if k == 0 {
			continue
		}
		if zeros && allZero(b[at:hi]) {
			zero |= 1 << j
			continue
		}
		for _, z := range spans[:k] {
			clear(b[max(z.Lo, lo):min(z.Hi, hi)])
		}
	}
	// Spans past the planes' bytes, or in planes beyond 64.
	for _, z := range spans {
		if z.Hi > min(es, 64)*n {
			clear(b[max(z.Lo, min(es, 64)*n):z.Hi])
		}
	}
	return zero
}

// maxLZF bounds how many times larger than its input LZF data decodes to:
// a three-byte back reference copies at most 264 bytes.
const maxLZF = 88

// inflateChunk decodes a deflate-filtered chunk into a pooled buffer of want
// bytes, returning fewer when the stream is shorter (an edge chunk some
// writers truncate) and an error when it is longer. With elide, long zero
// runs are left unwritten and listed (see inflate.ZlibElide). The buffer
// is no larger than the stream can decode to: want comes from the file,
// and a corrupted chunk shape must not allocate gigabytes for a short
// stream.
func inflateChunk(src []byte, want int, elide bool) ([]byte, []inflate.Span, error) {
	want = min(want, maxInflate*len(src))
	if len(src) >= 2 && src[0] == 0x1f && src[1] == 0x8b {
		// A gzip member instead of a zlib stream: scigolib/hdf5 v0.14.0's
		// writer produces these when shuffle precedes deflate.
		zr, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, nil, fmt.Errorf("deflate (gzip framing): %w", err)
		}
		out, err := readInflated(zr, want)
		return out, nil, err
	}
	d := inflaters.Get().(*inflate.Decoder)
	defer inflaters.Put(d)
	out := getBuf(want)
	var n int
	var spans []inflate.Span
	var err error
	if elide {
		n, spans, err = d.ZlibElide(out, src, nil)
	} else {
		n, err = d.Zlib(out, src)
	}
	if err != nil {
		putBuf(out)
		return nil, nil, fmt.Errorf("deflate: %w", err)
	}
	return out[:n], spans, nil
}

// readInflated reads up to want bytes; a shorter stream yields a shorter
// buffer, which the caller accepts only for a dataset's edge chunk.
func readInflated(zr io.Reader, want int) ([]byte, error) {
	out := getBuf(want)
	n, err := io.ReadFull(zr, out)
	if err == io.ErrUnexpectedEOF {
		return out[:n], nil
	}
	if err != nil {
		putBuf(out)
		return nil, fmt.Errorf("deflate: inflated %d of %d bytes: %w", n, want, err)
	}
	return out, nil
}

// shuffleSize returns the element size of a shuffle filter, its first
// client value (0 when absent: checkFilters rejects it).
func shuffleSize(f filter) int {
	if len(f.client) == 0 {
		return 0
	}
	return int(f.client[0])
}

// unshuffle reverses HDF5's byte shuffle: byte j of element i was stored at
// j*n+i. Trailing bytes that do not form a whole element are left in place.
// The element sizes of 10x and AnnData arrays (2, 4, 8) gather one element
// from its byte planes per iteration and store it with one write, several
// times faster than scattering byte by byte (unshuffleBytes, the reference).
func unshuffle(dst, src []byte, es int) {
	n := len(src) / es
	switch {
	case es <= 1 || n <= 1:
		copy(dst, src)
		return
	case es == 2:
		unshuffle2(dst[:2*n], src[:n], src[n:2*n])
	case es == 4:
		unshuffle4(dst[:4*n], src[:n], src[n:2*n], src[2*n:3*n], src[3*n:4*n])
	case es == 8:
		unshuffle8(dst[:8*n], src[:8*n], n)
	default:
		unshuffleBytes(dst, src, es)
		return
	}
	copy(dst[n*es:], src[n*es:])
}

// unshuffleBytes is the byte-at-a-time reference for any element size.
func unshuffleBytes(dst, src []byte, es int) {
	n := len(src) / es
	for j := 0; j < es; j++ {
		s := src[j*n : (j+1)*n]
		for i, b := range s {
			dst[i*es+j] = b
		}
	}
	copy(dst[n*es:], src[n*es:])
}

func unshuffle2(dst, p0, p1 []byte) {
	p1 = p1[:len(p0)]
	for i := range p0 {
		binary.LittleEndian.PutUint16(dst[2*i:], uint16(p0[i])|uint16(p1[i])<<8)
	}
}

func unshuffle4(dst, p0, p1, p2, p3 []byte) {
	p1, p2, p3 = p1[:len(p0)], p2[:len(p0)], p3[:len(p0)]
	for i := range p0 {
		binary.LittleEndian.PutUint32(dst[4*i:],
			uint32(p0[i])|uint32(p1[i])<<8|uint32(p2[i])<<16|uint32(p3[i])<<24)
	}
}

// unshuffle8 handles 64-bit elements. Count data stored as int64 has mostly
// zero high bytes, and a plane that is zero throughout contributes nothing:
// skipping such planes halves the work for 10x indices and indptr.
func unshuffle8(dst, src []byte, n int) {
	var planes [8][]byte
	used := planes[:0]
	var shifts [8]uint
	for j := range 8 {
		p := src[j*n : (j+1)*n]
		if !allZero(p) {
			shifts[len(used)] = uint(8 * j)
			used = append(used, p)
		}
	}
	if len(used) == 8 {
		p0, p1, p2, p3 := used[0][:n], used[1][:n], used[2][:n], used[3][:n]
		p4, p5, p6, p7 := used[4][:n], used[5][:n], used[6][:n], used[7][:n]
		for i := range n {
			binary.LittleEndian.PutUint64(dst[8*i:],
				uint64(p0[i])|uint64(p1[i])<<8|uint64(p2[i])<<16|uint64(p3[i])<<24|
					uint64(p4[i])<<32|uint64(p5[i])<<40|uint64(p6[i])<<48|uint64(p7[i])<<56)
		}
		return
	}
	// Low planes are the ones that vary: assemble them, then OR in any
	// other non-zero plane.
	clear(dst)
	k := 0
	if len(used) >= 2 && shifts[0] == 0 && shifts[1] == 8 {
		p0, p1 := used[0][:n], used[1][:n]
		for i := range n {
			binary.LittleEndian.PutUint64(dst[8*i:], uint64(p0[i])|uint64(p1[i])<<8)
		}
		k = 2
	}
	for ; k < len(used); k++ {
		p, sh := used[k][:n], shifts[k]
		for i := range n {
			o := dst[8*i : 8*i+8]
			binary.LittleEndian.PutUint64(o, binary.LittleEndian.Uint64(o)|uint64(p[i])<<sh)
		}
	}
}

// allZero reports whether every byte of p is zero, 32 at a time into four
// accumulators, so that the loads are not serialised on one register.
func allZero(p []byte) bool {
	var a, b, c, d uint64
	for len(p) >= 32 {
		q := p[:32:32]
		a |= binary.LittleEndian.Uint64(q)
		b |= binary.LittleEndian.Uint64(q[8:])
		c |= binary.LittleEndian.Uint64(q[16:])
		d |= binary.LittleEndian.Uint64(q[24:])
		p = p[32:]
	}
	for _, x := range p {
		a |= uint64(x)
	}
	return a|b|c|d == 0
}

// verifyFletcher32 checks the trailing checksum the Fletcher32 filter stores.
// Like libhdf5 it also accepts the byte-swapped form older versions wrote.
func verifyFletcher32(b []byte) error {
	if len(b) < 4 {
		return fmt.Errorf("%w: chunk of %d bytes cannot hold a Fletcher32 checksum", errFormat, len(b))
	}
	data := b[:len(b)-4]
	stored := binary.LittleEndian.Uint32(b[len(b)-4:])
	sum := fletcher32(data)
	swapped := (sum&0x00ff00ff)<<8 | (sum&0xff00ff00)>>8
	if stored != sum && stored != swapped {
		return fmt.Errorf("%w: Fletcher32 checksum mismatch (stored %#08x, computed %#08x)", errFormat, stored, sum)
	}
	return nil
}

// fletcher32 is H5_checksum_fletcher32: 16-bit big-endian words, sums
// folded every 360 words.
func fletcher32(data []byte) uint32 {
	var s1, s2 uint32
	n := len(data) / 2
	p := 0
	for n > 0 {
		t := min(n, 360)
		n -= t
		for ; t > 0; t-- {
			s1 += uint32(data[p])<<8 | uint32(data[p+1])
			p += 2
			s2 += s1
		}
		s1 = (s1 & 0xffff) + (s1 >> 16)
		s2 = (s2 & 0xffff) + (s2 >> 16)
	}
	if len(data)%2 == 1 {
		s1 += uint32(data[p]) << 8
		s2 += s1
		s1 = (s1 & 0xffff) + (s1 >> 16)
		s2 = (s2 & 0xffff) + (s2 >> 16)
	}
	s1 = (s1 & 0xffff) + (s1 >> 16)
	s2 = (s2 & 0xffff) + (s2 >> 16)
	return s2<<16 | s1
}
