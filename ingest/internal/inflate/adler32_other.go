//go:build !amd64 || purego

package inflate

// This build has no assembly: useAVX2 is false, so adler32Words takes
// every byte, and adlerBlocks, should it be called, adds none and says so.

// useAVX2 is false: this build has no assembly Adler-32.
var useAVX2 = false

// adlerBlocks adds no bytes to s1, s2 in this build: the caller adds them all.
func adlerBlocks(s1, s2 uint32, p []byte) (uint32, uint32, int) { return s1, s2, 0 }
