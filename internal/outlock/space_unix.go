//go:build unix

package outlock

import "golang.org/x/sys/unix"

// statFree returns the bytes free to an unprivileged user on the file
// system of path.
func statFree(path string) (int64, bool) {
	var st unix.Statfs_t
	if unix.Statfs(path, &st) != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}
