//go:build amd64 && !purego

package ingest

// useRiseBytes selects riseBytes in setRising; tests switch it off to run
// the Go loop alone.
var useRiseBytes = true

// riseBytes does, for the rising gaps of one and two bytes at the start of
// gaps, what setRising's loop does gene by gene:
//
//	for each gap d ≥ 1 (gapCode(d), uvarint) while s.last+d < len(geneMap) {
//		s.last += d
//		o := geneMap[s.last]
//		if o < 0 {
//			s.dropped++
//			continue
//		}
//		if o>>6 != s.word {
//			s.acc = 0
//		}
//		s.acc |= 1 << (o & 63)
//		words[o>>6] = s.acc
//		s.word = o >> 6
//	}
//
// and counts the gaps of two bytes in s.long. Groups of eight one-byte
// gaps take one check each; the gaps around another are read one by one.
// It stops before a gap that falls, repeats a gene, passes the end of
// geneMap, takes three bytes or more or is cut by the end of gaps, and
// returns the bytes it read; −1 if geneMap maps a gene past words, which it
// then leaves unwritten from that gene on. The caller goes on with its
// loop.
//
//go:noescape
func riseBytes(gaps []byte, s *riseState, words []uint64, geneMap []int32) int
