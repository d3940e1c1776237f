package directio

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// Set sets or clears f's O_DIRECT flag and reports whether it now has the
// asked state; file systems without direct I/O (tmpfs on older kernels,
// some network file systems) refuse it.
func Set(f *os.File, on bool) bool {
	fd := uintptr(f.Fd())
	flags, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
	if err != nil {
		return false
	}
	if on {
		flags |= unix.O_DIRECT
	} else {
		flags &^= unix.O_DIRECT
	}
	_, err = unix.FcntlInt(fd, unix.F_SETFL, flags)
	return err == nil
}

// isInvalid reports whether err is EINVAL, which a direct transfer the
// device cannot align gets.
func isInvalid(err error) bool { return errors.Is(err, unix.EINVAL) }
