//go:build !amd64 || purego

package shard

// useGFNI is false: this build has no assembly transposition, and
// transpose64 is the Go twin alone.
var useGFNI = false

// transpose64 transposes a 64×64 bit matrix in place (see transpose64Go).
func transpose64(a *[64]uint64) { transpose64Go(a) }
