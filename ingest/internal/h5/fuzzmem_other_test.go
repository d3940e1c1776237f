//go:build !unix

package h5

// limitMemory does nothing where address-space limits are not available.
func limitMemory() {}
