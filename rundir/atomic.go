package rundir

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// tempInfix marks the temporary files of WriteFileAtomic; Fits ignores them.
const tempInfix = ".tmp-"

// WriteFileAtomic writes path through write, so that path holds either its
// old content or the complete new content, never a part.
//
// The bytes go to a temporary file in the same directory (named
// ".<base>.tmp-<random>"), which is synced, closed, made world-readable
// (mode 0644), renamed over path, and then the directory itself is synced so
// that the rename survives a crash. If write or any step fails, the
// temporary file is removed and an existing file at path is left untouched.
//
// The writer handed to write is buffered and has no Close method, so
// encoders that close their sink when they are done cannot close the file
// behind our back.
func WriteFileAtomic(path string, write func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+tempInfix+"*")
	if err != nil {
		return fmt.Errorf("rundir: %s: create temporary file: %w", path, err)
	}
	tmp := f.Name()
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				f.Close() // the write already failed; its error is the one to report
			}
			os.Remove(tmp)
		}
	}()

	bw := bufio.NewWriterSize(f, 1<<20)
	if err = write(struct{ io.Writer }{bw}); err != nil {
		return fmt.Errorf("rundir: %s: write: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("rundir: %s: write: %w", path, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("rundir: %s: chmod: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("rundir: %s: sync: %w", path, err)
	}
	closed = true
	if err = f.Close(); err != nil {
		return fmt.Errorf("rundir: %s: close: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rundir: %s: rename into place: %w", path, err)
	}
	if err = syncDir(dir); err != nil {
		// The file is in place; only its durability across a crash is in doubt.
		return fmt.Errorf("rundir: %s: sync directory: %w", path, err)
	}
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); cerr != nil && err == nil {
		err = cerr
	}
	// Some file systems (and non-Linux kernels) refuse fsync on directories.
	if errors.Is(err, os.ErrInvalid) {
		return nil
	}
	return err
}
