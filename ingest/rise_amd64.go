//go:build amd64 && !purego

package ingest

// useRiseBytes selects riseBytes in setRising; tests switch it off to run
// the Go loop alone.
var useRiseBytes = true

// riseBytes does, for the one-byte rising gaps at the start of gaps, what
// setRising's loop does gene by gene, eight gaps at a time:
//
//	for _, c := range gaps { // while c is even, 2 ≤ c ≤ 126
//		s.last += int32(c >> 1)
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
// It stops at the first gap that is not one, at the last 8 bytes of gaps
// when fewer remain, and before a group of eight whose genes could pass
// the end of geneMap (s.last+504 ≥ len(geneMap)), and returns the gaps it
// read; −1 if geneMap maps a gene past words, which it then leaves
// unwritten from that gene on. The caller goes on with its loop.
//
//go:noescape
func riseBytes(gaps []byte, s *riseState, words []uint64, geneMap []int32) int
