package outlock

import "path/filepath"

// FreeBytes returns the bytes free to this user on the file system that
// an output at path will be written to: path's, or its nearest existing
// parent's while path does not exist. ok is false where the system cannot
// tell, and then n is 0.
func FreeBytes(path string) (n int64, ok bool) {
	path, err := filepath.Abs(path)
	if err != nil {
		return 0, false
	}
	for {
		if n, ok := statFree(path); ok {
			return n, true
		}
		parent := filepath.Dir(path)
		if parent == path {
			return 0, false
		}
		path = parent
	}
}
