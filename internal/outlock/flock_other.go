//go:build !unix

package outlock

import (
	"errors"
	"os"
)

var (
	errHeld        = errors.New("held by another process")
	errUnsupported = errors.New("locks not supported on this system")
)

// flock reports that outputs cannot be locked here.
func flock(f *os.File, shared bool) error { return errUnsupported }
