//go:build !unix

package ingest

// cpuSeconds is unavailable here.
func cpuSeconds() float64 { return -1 }

// syncDisks does nothing here.
func syncDisks() {}
