package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"scpipe/internal/outlock"
	"scpipe/rundir"
)

// commit writes the figures and the page, holding the report's lock: the
// figures into a temporary folder beside the page, renamed over the
// figures' folder (an old one moved aside first), then the page through
// rundir.WriteFileAtomic. The temporaries are named after the page, so
// that the next report to hold its lock removes those of a killed one. It
// returns the figures' paths.
func commit(o Options, figs []*figure, html []byte) ([]string, error) {
	if err := os.MkdirAll(filepath.Dir(o.Out), 0o777); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	lk, err := outlock.Acquire(o.Out, o.Log)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	defer lk.Release()
	if _, err := lk.RemoveStale(); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	figDir := FiguresDir(o.Out)
	if !o.Force { // checked before reading the run; another command may have written since
		for _, p := range []string{o.Out, figDir} {
			if _, err := os.Stat(p); err == nil {
				return nil, fmt.Errorf("report: %s already exists (use --force to replace it)", p)
			}
		}
	}
	tmp, err := outlock.TempDir(o.Out)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	paths := make([]string, len(figs))
	for i, f := range figs {
		if err := writeSynced(filepath.Join(tmp, f.File()), f.SVG); err != nil {
			return nil, err
		}
		paths[i] = filepath.Join(figDir, f.File())
	}
	if err := syncDir(tmp); err != nil {
		return nil, err
	}
	var aside string
	if _, err := os.Stat(figDir); err == nil {
		aside = outlock.AsideName(o.Out)
		if err := os.Rename(figDir, aside); err != nil {
			return nil, fmt.Errorf("report: move the old %s aside: %w", figDir, err)
		}
	}
	if err := os.Rename(tmp, figDir); err != nil {
		if aside != "" {
			os.Rename(aside, figDir) // put the old figures back; the rename error is the one to report
		}
		return nil, fmt.Errorf("report: rename %s into place: %w", figDir, err)
	}
	done = true
	err = rundir.WriteFileAtomic(o.Out, func(w io.Writer) error {
		_, err := w.Write(html)
		return err
	})
	if err != nil { // leave the figures as they were
		os.RemoveAll(figDir)
		if aside != "" {
			os.Rename(aside, figDir)
		}
		return nil, fmt.Errorf("report: %w", err)
	}
	if aside != "" {
		if err := os.RemoveAll(aside); err != nil {
			return nil, fmt.Errorf("report: remove the replaced figures %s: %w", aside, err)
		}
	}
	return paths, syncDir(filepath.Dir(o.Out))
}

// writeSynced writes data to a new file at path and syncs it.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("report: %s: %w", path, err)
	}
	return nil
}

// syncDir makes the entries of dir durable; file systems that refuse to
// sync a folder are no error.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("report: sync %s: %w", dir, err)
	}
	return nil
}
