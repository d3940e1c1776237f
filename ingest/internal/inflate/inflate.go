package inflate

import (
	"encoding/binary"
	"errors"
	"fmt"
)

var (
	// errCorrupt is wrapped by every error about a malformed stream.
	errCorrupt = errors.New("inflate: corrupt stream")
	// errTooLong is returned when a stream decodes to more bytes than the
	// destination holds.
	errTooLong = errors.New("inflate: stream decodes to more bytes than the buffer holds")
)

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errCorrupt, fmt.Sprintf(format, args...))
}

// Decoder holds the Huffman tables of the block being decoded, so that
// decoding allocates nothing. Its zero value is ready to use; it is not safe
// for concurrent use.
type Decoder struct {
	litlen  [litlenCap]uint32
	dist    [distCap]uint32
	precode [precodeCap]uint32
	lens    [286 + 30]uint8
	sorted  [320]uint16
}

// Zlib decodes the zlib stream src (header, DEFLATE data, Adler-32 trailer)
// into dst and returns the number of bytes decoded. Bytes after the trailer
// are ignored.
func (d *Decoder) Zlib(dst, src []byte) (int, error) {
	return d.zlib(dst, src, nil)
}

// Span is the byte range [Lo, Hi) of a decoded stream.
type Span struct {
	Lo, Hi int
}

// ZlibElide is Zlib for a caller that can use knowing where the output is
// zero, such as the high byte planes of shuffled small integers. A run of
// zero bytes that matches copy from the byte before them is decoded without
// being written, except for its last 32 KiB (the window that later matches
// may copy from); the unwritten ranges are appended to spans, in increasing
// order and disjoint, and dst holds whatever it held there before. The
// caller must read those bytes as zeros. The Adler-32 is still verified
// over the whole output.
func (d *Decoder) ZlibElide(dst, src []byte, spans []Span) (int, []Span, error) {
	if spans == nil {
		spans = []Span{} // non-nil: elide
	}
	n, err := d.zlib(dst, src, &spans)
	return n, spans, err
}

// zlib decodes like Zlib, eliding zero runs into *spans when spans is not
// nil.
func (d *Decoder) zlib(dst, src []byte, spans *[]Span) (int, error) {
	if len(src) < 2 {
		return 0, corrupt("zlib header truncated")
	}
	cmf, flg := src[0], src[1]
	switch {
	case cmf&15 != 8 || cmf>>4 > 7:
		return 0, corrupt("zlib header: compression method %d, window %d (want deflate, at most 32 KiB)", cmf&15, cmf>>4)
	case (uint(cmf)<<8|uint(flg))%31 != 0:
		return 0, corrupt("zlib header check bits are wrong")
	case flg&0x20 != 0:
		return 0, corrupt("zlib stream needs a preset dictionary")
	}
	first := 0
	var z *elision
	if spans != nil {
		first = len(*spans)
		z = &elision{spans: spans, zs: -1}
	}
	n, end, err := d.decode(dst, src[2:], z)
	if err != nil {
		return n, err
	}
	tail := src[2+end:]
	if len(tail) < 4 {
		return n, corrupt("zlib trailer truncated")
	}
	var got uint32
	if spans == nil {
		got = Adler32(dst[:n])
	} else {
		got = adlerElided(dst[:n], (*spans)[first:])
	}
	if want := binary.BigEndian.Uint32(tail); want != got {
		return n, corrupt("Adler-32 of the decoded data is %08x, the trailer says %08x", got, want)
	}
	return n, nil
}

// bitReader state lives in locals of decode (b: bits, nb: how many of them
// are valid, pos: next byte of src to load); refill keeps at least 56 bits
// valid. Past the end of src it supplies zero bytes and still advances pos,
// so pos−nb/8 > len(src) reveals a stream that ran past its input.

// refill tops up the bit buffer to at least 56 bits. Loading eight bytes at
// once leaves the bits above nb holding the stream's next bits, which the
// next load ORs in again unchanged.
func refill(src []byte, pos int, b uint64, nb uint) (int, uint64, uint) {
	if pos+8 <= len(src) {
		b |= binary.LittleEndian.Uint64(src[pos:]) << nb
		return pos + int((63-nb)>>3), b, nb | 56
	}
	return refillTail(src, pos, b, nb)
}

func refillTail(src []byte, pos int, b uint64, nb uint) (int, uint64, uint) {
	for nb < 56 {
		if pos < len(src) {
			b |= uint64(src[pos]) << nb
		}
		pos++
		nb += 8
	}
	return pos, b, nb
}

// decode decodes the raw DEFLATE stream at the start of src into dst; it
// returns the bytes decoded and the bytes of src used (up to the byte that
// holds the final block's last bit).
func (d *Decoder) decode(dst, src []byte, z *elision) (out, used int, err error) {
	var b uint64
	var nb uint
	pos := 0
	for {
		pos, b, nb = refill(src, pos, b, nb)
		final := b & 1
		typ := b >> 1 & 3
		b, nb = b>>3, nb-3
		var lt *[litlenCap]uint32
		var dt *[distCap]uint32
		switch typ {
		case 0:
			// Stored: skip to the byte boundary, then LEN, NLEN, bytes.
			b, nb = b>>(nb&7), nb&^7
			at := pos - int(nb/8) // first byte not yet consumed
			if at+4 > len(src) {
				return out, 0, corrupt("stored block header truncated")
			}
			ln := int(binary.LittleEndian.Uint16(src[at:]))
			if ^binary.LittleEndian.Uint16(src[at+2:]) != uint16(ln) {
				return out, 0, corrupt("stored block length %d does not match its complement", ln)
			}
			at += 4
			if at+ln > len(src) {
				return out, 0, corrupt("stored block of %d bytes truncated", ln)
			}
			if out+ln > len(dst) {
				return out, 0, errTooLong
			}
			if ln > 0 {
				// An empty stored block, which Go's compress/flate ends
				// every stream with and zlib writes at each full flush,
				// adds nothing: a zero run open before it goes on.
				z.end(dst, out)
			}
			out += copy(dst[out:], src[at:at+ln])
			pos, b, nb = at+ln, 0, 0
		case 1:
			lt, dt = fixedLitlen, fixedDist
		case 2:
			if pos, b, nb, err = d.readCodes(src, pos, b, nb); err != nil {
				return out, 0, err
			}
			lt, dt = &d.litlen, &d.dist
		default:
			return out, 0, corrupt("block type 3")
		}
		if lt != nil {
			out, pos, b, nb, err = decodeBlock(dst, src, out, pos, b, nb, lt, dt, z)
		}
		if pos-int(nb/8) > len(src) {
			// Past the end of src the bits were zeros, whatever they decoded to.
			return out, 0, corrupt("stream truncated")
		}
		if err != nil {
			return out, 0, err
		}
		if final != 0 {
			z.final(out)
			return out, pos - int(nb/8), nil
		}
	}
}

// decodeBlock decodes the Huffman-coded data of one block with the
// literal/length table lt and distance table dt, up to its end-of-block
// code. Literals whose codes fit the primary table (at most litlenBits bits)
// are decoded back to back while that many bits remain; any other symbol
// starts with at least 48 bits valid, enough for a length code with its
// extra bits and a distance code with its own (15+5+15+13). With z not
// nil, a long match that repeats a zero byte, or a zero run left open by
// the previous block, goes on in zeroRun.
func decodeBlock(dst, src []byte, out, pos int, b uint64, nb uint, lt *[litlenCap]uint32, dt *[distCap]uint32, z *elision) (int, int, uint64, uint, error) {
	const lmask = 1<<litlenBits - 1
	if z != nil && z.zs >= 0 {
		var end bool
		var err error
		out, pos, b, nb, end, err = zeroRun(dst, src, out, pos, b, nb, lt, dt, z)
		if err != nil || end {
			return out, pos, b, nb, err
		}
	}
decode:
	for {
		pos, b, nb = refill(src, pos, b, nb)
		e := lt[b&lmask]
		// A literal's low byte holds only its code's length: comparing
		// it leaves e whole, which the compiler then keeps in a register.
		for uint8(e) < kindBase {
			if out >= len(dst) {
				return out, pos, b, nb, errTooLong
			}
			n := uint(e & bitsMask)
			b, nb = b>>n, nb-n
			dst[out] = byte(e >> 16)
			out++
			if nb < litlenBits {
				continue decode
			}
			e = lt[b&lmask]
		}
		if nb < 48 {
			// Refilling leaves the low nb bits, and so e, as they are.
			pos, b, nb = refill(src, pos, b, nb)
		}
		e, b, nb = consume(e, b, nb, lt[:], litlenBits)
		switch e & kindMask {
		case kindLiteral:
			if out >= len(dst) {
				return out, pos, b, nb, errTooLong
			}
			dst[out] = byte(e >> 16)
			out++
			continue
		case kindEnd:
			return out, pos, b, nb, nil
		case kindInvalid:
			return out, pos, b, nb, corrupt("invalid literal/length code")
		}
		var length, dist int
		length, dist, b, nb = readMatch(e, b, nb, dt)
		if uint(dist-1) >= uint(out) || out+length > len(dst) {
			return out, pos, b, nb, matchError(len(dst), out, length, dist)
		}
		if z != nil && dist == 1 && length >= minZeroMatch && dst[out-1] == 0 {
			var end bool
			var err error
			z.zs = out
			out, pos, b, nb, end, err = zeroRun(dst, src, out+length, pos, b, nb, lt, dt, z)
			if err != nil || end {
				return out, pos, b, nb, err
			}
			continue
		}
		copyMatch(dst, out, dist, length)
		out += length
	}
}

// consume follows e, the entry of table t (of primary index bits pb) for
// the low bits of b, to its subtable entry when it points to one, and drops
// the code's bits.
func consume(e uint32, b uint64, nb uint, t []uint32, pb uint) (uint32, uint64, uint) {
	if e&kindMask == kindSub {
		b, nb = b>>pb, nb-pb
		e = t[e>>16+uint32(b)&(1<<(e>>8&0xff)-1)]
	}
	return e, b >> (e & bitsMask), nb - uint(e&bitsMask)
}

// readMatch reads the rest of a match whose length code's entry is e: the
// length's extra bits, the distance code and its extra bits. A distance
// code the block's code lacks gives dist = 0, which the callers refuse (matchError says why).
func readMatch(e uint32, b uint64, nb uint, dt *[distCap]uint32) (length, dist int, _ uint64, _ uint) {
	extra := e >> 8 & 0xff
	length = int(e>>16) + int(b&(1<<extra-1))
	b, nb = b>>extra, nb-uint(extra)
	e, b, nb = consume(dt[b&(1<<distBits-1)], b, nb, dt[:], distBits)
	if e&kindMask != kindBase {
		return length, 0, b, nb
	}
	extra = e >> 8 & 0xff
	dist = int(e>>16) + int(b&(1<<extra-1))
	return length, dist, b >> extra, nb - uint(extra)
}

// matchError says why a match of length bytes from dist back at out, in an
// output of n bytes, is refused: it has no distance, reaches before the
// output or overruns it.
func matchError(n, out, length, dist int) error {
	switch {
	case dist == 0:
		return corrupt("invalid distance code")
	case dist > out:
		return corrupt("distance %d reaches before the start of the output (%d bytes)", dist, out)
	}
	return errTooLong
}

// windowSize is the farthest back a DEFLATE match may copy from.
const windowSize = 1 << 15

// minZeroMatch is the shortest repeat of a zero byte that starts eliding:
// long zero runs come as matches of the longest length, 258, and shorter
// ones would only pay zeroRun's overhead.
const minZeroMatch = 128

// elision is the state of ZlibElide's decoding.
type elision struct {
	spans *[]Span // where elided runs are recorded
	zs    int     // start of the open zero run, -1 if none
}

// zeroRun goes on with the open zero run [z.zs, out) without writing it:
// it decodes symbols while they add zeros (zero literals, and matches whose
// source lies in the run), then ends the run (see end) and decodes the
// symbol that stopped it as decodeBlock would. At the block's end it
// returns end = true and leaves the run open for the next block. The
// refill before each symbol leaves at least 48 bits, enough for the
// longest match (see decodeBlock).
func zeroRun(dst, src []byte, out, pos int, b uint64, nb uint, lt *[litlenCap]uint32, dt *[distCap]uint32, z *elision) (_, _ int, _ uint64, _ uint, end bool, err error) {
	const lmask = 1<<litlenBits - 1
	for {
		pos, b, nb = refill(src, pos, b, nb)
		e := lt[b&lmask]
		e, b, nb = consume(e, b, nb, lt[:], litlenBits)
		switch e & kindMask {
		case kindLiteral:
			if out >= len(dst) {
				return out, pos, b, nb, false, errTooLong
			}
			if lit := byte(e >> 16); lit != 0 {
				z.end(dst, out)
				dst[out] = lit
				return out + 1, pos, b, nb, false, nil
			}
			out++
			continue
		case kindEnd:
			return out, pos, b, nb, true, nil
		case kindInvalid:
			return out, pos, b, nb, false, corrupt("invalid literal/length code")
		}
		var length, dist int
		length, dist, b, nb = readMatch(e, b, nb, dt)
		if uint(dist-1) >= uint(out) || out+length > len(dst) {
			return out, pos, b, nb, false, matchError(len(dst), out, length, dist)
		}
		if out-dist >= z.zs {
			out += length
			continue
		}
		z.end(dst, out)
		copyMatch(dst, out, dist, length)
		return out + length, pos, b, nb, false, nil
	}
}

// end ends the open zero run, if any, at out: it writes the zeros that
// later matches may copy (the last windowSize bytes) and records the rest
// as elided. It does nothing on a nil z.
func (z *elision) end(dst []byte, out int) {
	if z == nil || z.zs < 0 {
		return
	}
	keep := max(z.zs, out-windowSize)
	clear(dst[keep:out])
	z.record(keep)
}

// final ends the open zero run, if any, at the end of the stream at out,
// where nothing can copy from it.
func (z *elision) final(out int) {
	if z != nil && z.zs >= 0 {
		z.record(out)
	}
}

// record records [z.zs, hi) as elided, if not empty, and closes the run.
func (z *elision) record(hi int) {
	if hi > z.zs {
		*z.spans = append(*z.spans, Span{z.zs, hi})
	}
	z.zs = -1
}

// copyMatch copies length bytes from dist bytes back to dst[out:]. The
// copies overlap when dist < length; each round then doubles what is
// copied, as the pattern repeats with period dist.
func copyMatch(dst []byte, out, dist, length int) {
	src, end := out-dist, out+length
	if length <= 16 && out+16 <= len(dst) {
		// Most matches are short: sixteen bytes in two moves, whatever
		// the length, leave no loop exit to mispredict.
		switch {
		case dist >= 8:
			binary.LittleEndian.PutUint64(dst[out:], binary.LittleEndian.Uint64(dst[src:]))
			binary.LittleEndian.PutUint64(dst[out+8:], binary.LittleEndian.Uint64(dst[src+8:]))
			return
		case dist == 1:
			v := uint64(dst[src]) * 0x0101010101010101
			binary.LittleEndian.PutUint64(dst[out:], v)
			binary.LittleEndian.PutUint64(dst[out+8:], v)
			return
		}
	}
	if dist == 1 && end+8 <= len(dst) {
		// A run of one byte (the zero planes of shuffled integers): eight
		// copies of it at a time, possibly past end as below.
		v := uint64(dst[src]) * 0x0101010101010101
		for ; out < end; out += 8 {
			binary.LittleEndian.PutUint64(dst[out:], v)
		}
		return
	}
	if dist >= 8 && end+8 <= len(dst) {
		// Eight bytes at a time, possibly writing up to 7 bytes past end,
		// which later output overwrites; dist ≥ 8 keeps every read behind
		// the writes.
		for ; out < end; out, src = out+8, src+8 {
			binary.LittleEndian.PutUint64(dst[out:], binary.LittleEndian.Uint64(dst[src:]))
		}
		return
	}
	for out < end {
		out += copy(dst[out:end], dst[src:out])
	}
}

// readCodes reads a dynamic block's code lengths and builds d.litlen and
// d.dist.
func (d *Decoder) readCodes(src []byte, pos int, b uint64, nb uint) (int, uint64, uint, error) {
	pos, b, nb = refill(src, pos, b, nb)
	nlit := int(b&31) + 257
	ndist := int(b>>5&31) + 1
	nclen := int(b>>10&15) + 4
	b, nb = b>>14, nb-14
	if nlit > 286 || ndist > 30 {
		return pos, b, nb, corrupt("%d literal/length and %d distance codes", nlit, ndist)
	}
	var clens [19]uint8
	order := [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
	for _, s := range order[:nclen] {
		if nb < 3 {
			pos, b, nb = refill(src, pos, b, nb)
		}
		clens[s] = uint8(b & 7)
		b, nb = b>>3, nb-3
	}
	if !buildTable(d.precode[:], clens[:], precodeInfo[:], precodeBits, false, d.sorted[:]) {
		return pos, b, nb, corrupt("bad code-length code")
	}
	lens := d.lens[:nlit+ndist]
	for i := 0; i < len(lens); {
		pos, b, nb = refill(src, pos, b, nb)
		e := d.precode[b&(1<<precodeBits-1)]
		if e&kindMask == kindInvalid {
			return pos, b, nb, corrupt("invalid code-length code")
		}
		b, nb = b>>(e&bitsMask), nb-uint(e&bitsMask)
		sym := e >> 16
		if sym < 16 {
			lens[i] = uint8(sym)
			i++
			continue
		}
		var rep int
		var val uint8
		switch sym {
		case 16:
			if i == 0 {
				return pos, b, nb, corrupt("code length repeat with no previous length")
			}
			rep, val = 3+int(b&3), lens[i-1]
			b, nb = b>>2, nb-2
		case 17:
			rep = 3 + int(b&7)
			b, nb = b>>3, nb-3
		default:
			rep = 11 + int(b&127)
			b, nb = b>>7, nb-7
		}
		if i+rep > len(lens) {
			return pos, b, nb, corrupt("code lengths overrun %d codes", len(lens))
		}
		for k := range rep {
			lens[i+k] = val
		}
		i += rep
	}
	if lens[256] == 0 {
		return pos, b, nb, corrupt("block has no end-of-block code")
	}
	if !buildTable(d.litlen[:], lens[:nlit], litlenInfo[:], litlenBits, false, d.sorted[:]) {
		return pos, b, nb, corrupt("bad literal/length code")
	}
	if !buildTable(d.dist[:], lens[nlit:], distInfo[:], distBits, true, d.sorted[:]) {
		return pos, b, nb, corrupt("bad distance code")
	}
	return pos, b, nb, nil
}
