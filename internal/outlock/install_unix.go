//go:build unix

package outlock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// install renames tmp into output's place relative to output's folder
// opened once: the folder is pinned by its descriptor, its real path is
// read from the descriptor, the inputs CheckInputs checked output against
// are checked again at that path, and every rename and the removal of a
// replaced folder act on the pinned folder. A folder on output's path
// swapped for a link after the check (mv d d.old; ln -s RUN d) is either
// seen by the check or has no effect on what is replaced.
func install(tmp string, ti fs.FileInfo, output string) error {
	dir, err := openFolder(filepath.Dir(output))
	if err != nil {
		return err
	}
	defer dir.Close()
	real, err := folderPath(dir)
	if err != nil {
		return err
	}
	dfd, base := int(dir.Fd()), filepath.Base(output)
	var st unix.Stat_t
	oerr := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW)
	if oerr != nil && !errors.Is(oerr, unix.ENOENT) {
		return fmt.Errorf("%s: %w", output, oerr)
	}
	exists := oerr == nil
	var oi fs.FileInfo
	if exists {
		if oi, err = os.Lstat(filepath.Join(dir.procPath, base)); err != nil || !sameStat(oi, &st) {
			return fmt.Errorf("%s changed while it was being replaced: nothing replaced", output)
		}
	}
	if err := recheck(output, filepath.Join(real, base), oi, exists); err != nil {
		return err
	}
	tdir := dir
	if filepath.Dir(tmp) != filepath.Dir(output) {
		if tdir, err = openFolder(filepath.Dir(tmp)); err != nil {
			return err
		}
		defer tdir.Close()
	}
	tfd, tbase := int(tdir.Fd()), filepath.Base(tmp)
	if err := unix.Fstatat(tfd, tbase, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || !sameStat(ti, &st) {
		return fmt.Errorf("%s: the new output %s is no longer where it was written: nothing replaced", output, tmp)
	}
	var old string
	if exists && oi.IsDir() && !ti.IsDir() {
		return fmt.Errorf("%s is a folder: a file does not replace it", output)
	} else if exists && ti.IsDir() {
		old = filepath.Base(asideOf(tmp, output))
		if err := unix.Renameat(dfd, base, dfd, old); err != nil {
			return fmt.Errorf("move the old %s aside: %w", output, err)
		}
	}
	if err := unix.Renameat(tfd, tbase, dfd, base); err != nil {
		if old != "" {
			unix.Renameat(dfd, old, dfd, base) // put the old output back; the rename's error is the one to report
		}
		return fmt.Errorf("rename %s into place: %w", output, err)
	}
	if err := fsync(dir.File); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync %s: %w", filepath.Dir(output), err)
	}
	if old != "" {
		if err := os.RemoveAll(filepath.Join(dir.procPath, old)); err != nil {
			return fmt.Errorf("%s replaced, but removing the old copy %s failed: %w", output, filepath.Join(real, old), err)
		}
	}
	return nil
}

// pinnedFolder is a folder opened once, and a path that names it whatever
// happens to the path it was opened by: /proc/self/fd/N where the system
// has it, else its real path at the moment it was opened.
type pinnedFolder struct {
	*os.File
	procPath string
}

func openFolder(name string) (*pinnedFolder, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is not a folder", name)
	}
	d := &pinnedFolder{File: f}
	proc := fmt.Sprintf("/proc/self/fd/%d", f.Fd())
	if pi, err := os.Stat(proc); err == nil && os.SameFile(pi, fi) {
		d.procPath = proc
		return d, nil
	}
	real, err := Resolve(name)
	if err == nil {
		var ri fs.FileInfo
		if ri, err = os.Stat(real); err == nil && !os.SameFile(ri, fi) {
			err = fmt.Errorf("it changed while it was opened")
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("folder %s: %w", name, err)
	}
	d.procPath = real
	return d, nil
}

// folderPath returns the real path of the open folder d: read from the
// descriptor where the system tells it, else its path when opened.
func folderPath(d *pinnedFolder) (string, error) {
	if filepath.IsAbs(d.procPath) && filepath.Dir(d.procPath) != "/proc/self/fd" {
		return d.procPath, nil
	}
	real, err := os.Readlink(d.procPath)
	if err != nil {
		return "", fmt.Errorf("folder %s: %w", d.Name(), err)
	}
	return real, nil
}

// sameStat reports whether fi and st describe one file.
func sameStat(fi fs.FileInfo, st *unix.Stat_t) bool {
	s, ok := fi.Sys().(*syscall.Stat_t)
	return ok && uint64(s.Dev) == uint64(st.Dev) && uint64(s.Ino) == uint64(st.Ino)
}
