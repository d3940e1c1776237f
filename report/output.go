package report

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"scpipe/internal/outlock"
	"scpipe/internal/rundir"
)

// commit writes the figures and the page, holding the report's lock: the
// figures into a temporary folder beside the page, installed as the
// figures' folder, then the page through rundir.WriteFileAtomic. The
// temporaries are named after the page, so that the next report to hold
// its lock removes those of a killed one. It returns the figures' paths.
// Once ctx is done it stops, up to the figures' install: the page follows
// them, so that the two are installed together or not at all.
func commit(ctx context.Context, o Options, figs []*pageFigure, html []byte) ([]string, error) {
	lk, err := outlock.Acquire(o.Out, o.Log)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	defer lk.Release()
	if _, err := lk.RemoveStale(); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	figDir := FiguresDir(o.Out)
	for _, p := range []string{o.Out, figDir} { // checked again: another command may have written since Write began
		if err := outlock.Refuse(p, o.Force); err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
	}
	tmp, err := outlock.TempDir(o.Out)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	defer os.RemoveAll(tmp) // gone already once installed
	paths := make([]string, len(figs))
	for i, f := range figs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		err := outlock.WriteFile(filepath.Join(tmp, f.File()), func(w io.Writer) error {
			_, err := w.Write(f.SVG)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		paths[i] = filepath.Join(figDir, f.File())
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if err := outlock.Install(tmp, figDir, o.Force); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	err = rundir.WriteFileAtomic(o.Out, func(w io.Writer) error {
		_, err := w.Write(html)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return paths, nil
}
