//go:build !unix

package outlock

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// install renames tmp into output's place by name: without openat(2) and
// renameat(2) the folder cannot be pinned, so the inputs are checked again
// by name just before.
func install(tmp string, ti fs.FileInfo, output string) error {
	out, err := Resolve(output)
	if err != nil {
		return fmt.Errorf("output %s: %w", output, err)
	}
	oi, oerr := os.Lstat(output)
	if err := recheck(output, out, oi, oerr == nil); err != nil {
		return err
	}
	var old string
	if oerr == nil && oi.IsDir() && !ti.IsDir() {
		return fmt.Errorf("%s is a folder: a file does not replace it", output)
	} else if oerr == nil && ti.IsDir() {
		old = asideOf(tmp, output)
		if err := os.Rename(output, old); err != nil {
			return fmt.Errorf("move the old %s aside: %w", output, err)
		}
	}
	if err := os.Rename(tmp, output); err != nil {
		if old != "" {
			os.Rename(old, output) // put the old output back; the rename's error is the one to report
		}
		return fmt.Errorf("rename %s into place: %w", output, err)
	}
	if err := Sync(filepath.Dir(output)); err != nil {
		return err
	}
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("%s replaced, but removing the old copy %s failed: %w", output, old, err)
		}
	}
	return nil
}
