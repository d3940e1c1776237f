//go:build !linux

package directio

import "os"

// Set reports false except when clearing: outside Linux files are always
// read and written through the page cache.
func Set(f *os.File, on bool) bool { return !on }

func isInvalid(err error) bool { return false }
