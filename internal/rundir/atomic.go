package rundir

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"scpipe/internal/outlock"
)

// WriteFileAtomic writes path through write, so that path holds either its
// old content or the complete new content, never a part.
//
// The bytes go to a temporary file in the same directory (named
// ".<base>.tmp-<12 hex digits>", see outlock.TempFile; mode 0666 less the
// umask), which is synced, closed and installed over path
// (outlock.Install: renamed, and the directory synced so that the rename
// survives a crash). If write
// or any step fails, the temporary file is removed and an existing file at
// path is left untouched; one that a killed process left is removed by the
// next fit of the run (RemoveTemporaries).
//
// The writer handed to write is buffered and has no Close method, so
// encoders that close their sink when they are done cannot close the file
// behind our back.
func WriteFileAtomic(path string, write func(w io.Writer) error) error {
	return writeFileAtomic(path, write, nil)
}

// writeFileAtomic is WriteFileAtomic that calls beforeRename, when not
// nil, once the file is synced and before it takes its final name (to
// record its checksum first, so that no file under its final name lacks
// one).
func writeFileAtomic(path string, write func(w io.Writer) error, beforeRename func() error) (err error) {
	f, err := outlock.TempFile(path, "tmp")
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
	if err = f.Sync(); err != nil {
		return fmt.Errorf("rundir: %s: sync: %w", path, err)
	}
	closed = true
	if err = f.Close(); err != nil {
		return fmt.Errorf("rundir: %s: close: %w", path, err)
	}
	if beforeRename != nil {
		if err = beforeRename(); err != nil {
			return err
		}
	}
	if err = outlock.Install(tmp, path, true); err != nil {
		return fmt.Errorf("rundir: %s: %w", path, err)
	}
	return nil
}

// RemoveTemporaries removes from run, and the folders in it, the
// temporary files of writes that a killed process left (WriteFileAtomic's
// .<name>.tmp-<12 hex digits>, and the unfinished fitmask shard folder) and
// returns their paths. Only the holder of the run's lock may call it: the
// temporaries of a live writer look the same.
func RemoveTemporaries(run string) ([]string, error) {
	return outlock.RemoveTempsIn(run)
}
