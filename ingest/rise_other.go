//go:build !amd64 || purego

package ingest

// useRiseBytes is false: this build has no assembly loop, and setRising's
// Go loop sets every gene.
var useRiseBytes = false

// riseBytes reads no gap in this build: the caller's loop goes on from the
// first.
func riseBytes(gaps []byte, s *riseState, words []uint64, geneMap []int32) int { return 0 }
