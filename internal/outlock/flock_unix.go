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

// flock takes a flock(2) on f without waiting: shared or exclusive. On
// Linux NFS clients flock is carried out as a POSIX lock of the whole file
// (a read lock for a shared one), which the server arbitrates between
// clients; Lustre arbitrates it between clients when mounted with -o flock.
// Taking an exclusive lock on a file already locked shared through f
// converts the lock, which is not atomic: the shared lock is dropped first,
// even when the exclusive one is then refused.
func flock(f *os.File, shared bool) error {
	how := unix.LOCK_EX
	if shared {
		how = unix.LOCK_SH
	}
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
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
