package inflate

import "math/bits"

// A table entry packs, from the low bits up: the number of bits the code
// takes (5 bits), its kind (3 bits), the number of extra bits that follow
// it or, for a subtable pointer, the subtable's index bits (8 bits), and a
// value (16 bits): the literal byte, the base of a length or distance, or
// the subtable's offset in the table.
const (
	kindLiteral = 0 << 5
	kindBase    = 1 << 5 // a length or distance base; extra bits follow
	kindEnd     = 2 << 5 // end of block
	kindSub     = 3 << 5 // points to a subtable
	kindInvalid = 4 << 5 // a code the format does not allow here
	kindMask    = 7 << 5
	bitsMask    = 31
)

// entry returns a table entry without its code length.
func entry(kind, extra, value uint32) uint32 { return value<<16 | extra<<8 | kind }

// Primary index bits of the tables. Codes longer than these continue in a
// subtable with maxLen−primary index bits.
const (
	litlenBits  = 10
	distBits    = 8
	precodeBits = 7
	maxCodeLen  = 15
)

// Table capacities: the primary table plus at most one subtable per code
// longer than the primary bits (≤ 288 such litlen codes of ≤ 15 bits, ≤ 30
// distance codes).
const (
	litlenCap  = 1<<litlenBits + 288<<(maxCodeLen-litlenBits)
	distCap    = 1<<distBits + 30<<(maxCodeLen-distBits)
	precodeCap = 1 << precodeBits
)

// Symbol meanings (entries without code length) of the three alphabets.
var litlenInfo, distInfo, precodeInfo = func() (l [288]uint32, d [32]uint32, p [19]uint32) {
	for s := range 256 {
		l[s] = entry(kindLiteral, 0, uint32(s))
	}
	l[256] = entry(kindEnd, 0, 0)
	lenBase := [29]uint32{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
		35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lenExtra := [29]uint32{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
		3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	for i := range lenBase {
		l[257+i] = entry(kindBase, lenExtra[i], lenBase[i])
	}
	l[286], l[287] = kindInvalid, kindInvalid
	distBase := [30]uint32{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
		257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	for i := range distBase {
		extra := uint32(0)
		if i >= 2 {
			extra = uint32(i/2 - 1)
		}
		d[i] = entry(kindBase, extra, distBase[i])
	}
	d[30], d[31] = kindInvalid, kindInvalid
	for s := range p {
		p[s] = entry(kindLiteral, 0, uint32(s))
	}
	return
}()

// buildTable fills t with the decoding table of the canonical Huffman code
// whose code lengths are lens (0: symbol unused), with primary index bits
// pb; info gives each symbol's entry. It reports false for an
// over-subscribed code, and for an incomplete one unless it has a single
// code of length 1 or, when allowEmpty, no code at all (RFC 1951 permits
// both for distances; a distance the code lacks then decodes as invalid).
// sorted is scratch space of at least len(lens) entries.
func buildTable(t []uint32, lens []uint8, info []uint32, pb uint, allowEmpty bool, sorted []uint16) bool {
	// Two histograms, of even and odd symbols, halve the chain of
	// increments of one counter that runs of equal lengths make.
	var count, odd [maxCodeLen + 1]int
	for i := 0; i+1 < len(lens); i += 2 {
		count[lens[i]]++
		odd[lens[i+1]]++
	}
	if len(lens)%2 != 0 {
		count[lens[len(lens)-1]]++
	}
	left, codes, minLen, maxLen := 1, 0, 0, 0
	for l := 1; l <= maxCodeLen; l++ {
		count[l] += odd[l]
		left = left<<1 - count[l]
		if left < 0 {
			return false
		}
		if count[l] > 0 {
			codes += count[l]
			maxLen = l
			if minLen == 0 {
				minLen = l
			}
		}
	}
	primary := 1 << pb
	if left > 0 && !(codes == 1 && count[1] == 1) && !(codes == 0 && allowEmpty) {
		return false
	}
	// A complete code fills every entry, of the primary table and of each
	// subtable; an incomplete one leaves some, which must decode as invalid.
	incomplete := left > 0
	if codes == 0 {
		for i := range t[:primary] {
			t[i] = kindInvalid
		}
		return true
	}
	// Symbols in canonical order: by code length, then by symbol.
	var next [maxCodeLen + 1]int
	for l := 1; l < maxCodeLen; l++ {
		next[l+1] = next[l] + count[l]
	}
	next[0] = codes // the unused symbols go after the codes, out of the way
	for s, l := range lens {
		sorted[next[l]] = uint16(s)
		next[l]++
	}
	// The primary table grows by doubling: the codes of length l go into
	// its first 2^l entries, which are then copied up to make 2^(l+1). Each
	// code shorter than pb so fills its replicas in sequential copies,
	// not in a store per replica; a dynamic block's tables are built anew
	// for each block, which weighs with small chunks.
	size := 1 << min(minLen, int(pb))
	if incomplete {
		for i := range t[:size] {
			t[i] = kindInvalid
		}
	}
	code, i := 0, 0 // the next code, of length l, and its symbol's place in sorted
	for l := minLen; l <= min(maxLen, int(pb)); l++ {
		for ; size < 1<<l; size *= 2 {
			copy(t[size:2*size], t[:size])
		}
		for _, s := range sorted[i : i+count[l]] {
			t[reverse(code, l)] = info[s] | uint32(l)
			code++
		}
		i += count[l]
		code <<= 1
	}
	for ; size < primary; size *= 2 {
		copy(t[size:2*size], t[:size])
	}
	if maxLen <= int(pb) {
		return true
	}
	// Codes longer than pb share a subtable per pb-bit prefix (the code's
	// first pb bits, the low bits of its reversal). Canonical codes rise,
	// so those of one prefix come one after another.
	subBits := uint(maxLen - int(pb))
	free, prefix := primary, -1
	for l := int(pb) + 1; l <= maxLen; l++ {
		for _, s := range sorted[i : i+count[l]] {
			rev := reverse(code, l)
			p := rev & (primary - 1)
			if top := code >> (l - int(pb)); top != prefix {
				prefix = top
				t[p] = entry(kindSub, uint32(subBits), uint32(free)) | uint32(pb)
				if incomplete {
					for i := range t[free : free+1<<subBits] {
						t[free+i] = kindInvalid
					}
				}
				free += 1 << subBits
			}
			sub := int(t[p] >> 16)
			for j := rev >> pb; j < 1<<subBits; j += 1 << uint(l-int(pb)) {
				t[sub+j] = info[s] | uint32(l-int(pb))
			}
			code++
		}
		i += count[l]
		code <<= 1
	}
	return true
}

// reverse returns the low n bits of code in reverse order: DEFLATE sends
// Huffman codes most significant bit first into a least-significant-first
// bit stream.
func reverse(code, n int) int {
	return int(bits.Reverse16(uint16(code)) >> (16 - n))
}

// fixedLitlen and fixedDist are the tables of RFC 1951's fixed code (block
// type 1).
var fixedLitlen, fixedDist = func() (*[litlenCap]uint32, *[distCap]uint32) {
	var lens [288]uint8
	for i := range lens {
		switch {
		case i < 144:
			lens[i] = 8
		case i < 256:
			lens[i] = 9
		case i < 280:
			lens[i] = 7
		default:
			lens[i] = 8
		}
	}
	var sorted [320]uint16
	l := new([litlenCap]uint32)
	if !buildTable(l[:], lens[:], litlenInfo[:], litlenBits, false, sorted[:]) {
		panic("inflate: fixed literal/length code does not build")
	}
	var dl [32]uint8
	for i := range dl {
		dl[i] = 5
	}
	d := new([distCap]uint32)
	if !buildTable(d[:], dl[:], distInfo[:], distBits, false, sorted[:]) {
		panic("inflate: fixed distance code does not build")
	}
	return l, d
}()
