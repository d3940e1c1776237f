//go:build !unix

package outlock

// statFree reports that free space cannot be told here.
func statFree(path string) (int64, bool) { return 0, false }
