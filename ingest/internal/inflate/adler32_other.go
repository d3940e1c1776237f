//go:build !amd64 || purego

package inflate

// useAVX2 is false: this build has no assembly Adler-32.
var useAVX2 = false

// adler32Blocks is never called in this build (useAVX2 is false).
func adler32Blocks(p []byte) (sum, weighted, prefix uint64) {
	panic("inflate: no assembly Adler-32 in this build")
}
