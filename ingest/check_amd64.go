//go:build amd64 && !purego

package ingest

import "golang.org/x/sys/cpu"

// useAVX2 selects checkEntriesAVX2 for compressed.check and
// addCountedAVX2 for addCounted; tests switch it off to run the Go loops.
var useAVX2 = cpu.X86.HasAVX2

// checkEntriesAVX2 reports whether, of the first len(minor) rounded down to
// a multiple of 8 entries, every minor index is below lim (as an unsigned
// number, so negatives fail) and every value is ≥ 0 and finite. lim must be
// positive and val at least as long as minor.
//
//go:noescape
func checkEntriesAVX2(minor []int32, val []float64, lim uint32) bool
