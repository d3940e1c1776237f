//go:build !amd64 || purego

package ingest

// useRiseBytes is false: this build has no assembly loop.
var useRiseBytes = false

func riseBytes(gaps []byte, s *riseState, words []uint64, geneMap []int32) int { return 0 }
