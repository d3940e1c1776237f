package lzf

import (
	"errors"
	"fmt"
)

// errCorrupt is wrapped by every error Decode returns for a malformed stream.
var errCorrupt = errors.New("lzf: corrupt input")

// errShortBuffer is wrapped when the decompressed data does not fit in dst.
var errShortBuffer = errors.New("lzf: destination buffer too small")

// Decode decompresses the LZF stream src into dst and returns the number of
// bytes written. It returns an error wrapping errShortBuffer if the output
// would exceed len(dst), and one wrapping errCorrupt for a truncated literal
// run, a truncated back-reference or a back-reference before the start of the
// output. dst is never written beyond its length.
func Decode(dst, src []byte) (int, error) {
	ip, op := 0, 0
	for ip < len(src) {
		ctrl := int(src[ip])
		ip++
		if ctrl < 32 {
			// Literal run of ctrl+1 bytes.
			n := ctrl + 1
			if ip+n > len(src) {
				return op, fmt.Errorf("%w: literal run of %d bytes at input offset %d overruns the %d-byte input",
					errCorrupt, n, ip-1, len(src))
			}
			if op+n > len(dst) {
				return op, fmt.Errorf("%w: literal run needs %d bytes, %d left", errShortBuffer, n, len(dst)-op)
			}
			copy(dst[op:op+n], src[ip:ip+n])
			ip += n
			op += n
			continue
		}
		n := ctrl >> 5
		if n == 7 {
			if ip >= len(src) {
				return op, fmt.Errorf("%w: back-reference length truncated at input offset %d", errCorrupt, ip)
			}
			n += int(src[ip])
			ip++
		}
		n += 2
		if ip >= len(src) {
			return op, fmt.Errorf("%w: back-reference distance truncated at input offset %d", errCorrupt, ip)
		}
		dist := ((ctrl&0x1f)<<8 | int(src[ip])) + 1
		ip++
		ref := op - dist
		if ref < 0 {
			return op, fmt.Errorf("%w: back-reference distance %d before output start (output offset %d)",
				errCorrupt, dist, op)
		}
		if op+n > len(dst) {
			return op, fmt.Errorf("%w: back-reference needs %d bytes, %d left", errShortBuffer, n, len(dst)-op)
		}
		if dist >= n {
			// Source and destination do not overlap.
			copy(dst[op:op+n], dst[ref:ref+n])
		} else {
			// Overlapping copy repeats the last dist bytes; it must go forward
			// byte by byte (copy would behave like memmove).
			for i := 0; i < n; i++ {
				dst[op+i] = dst[ref+i]
			}
		}
		op += n
	}
	return op, nil
}
