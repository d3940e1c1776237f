//go:build unix

package outlock

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

var (
	errHeld        = errors.New("held by another process")
	errUnsupported = errors.New("locks not supported")
)

// flock takes an exclusive flock(2) on f without waiting. On Linux NFS
// clients flock is carried out as a POSIX lock of the whole file, which the
// server arbitrates between clients; Lustre arbitrates it between clients
// when mounted with -o flock.
func flock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return errHeld
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOLCK):
			return errors.Join(errUnsupported, err)
		}
		return err
	}
}
