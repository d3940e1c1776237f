package outlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrOverlap is matched (errors.Is) by the error CheckInputs returns.
var ErrOverlap = errors.New("the output overlaps an input")

// overlapError names the output, the input and how they overlap.
type overlapError struct{ output, input, how string }

func (e *overlapError) Error() string {
	return fmt.Sprintf("output %s %s %s: writing it (or replacing it with --force) would destroy the input; choose another output", e.output, e.how, e.input)
}

func (e *overlapError) Is(target error) bool { return target == ErrOverlap }

// Resolve returns the absolute path of p with every symbolic link resolved,
// those of its existing ancestors included when p itself does not exist
// yet (so that an output not yet created resolves to where it would be
// created). A ".." is taken after the link before it is resolved, as the
// system takes it: link/../out lies beside the link's target, not beside
// the link.
func Resolve(p string) (string, error) {
	abs := p
	if !filepath.IsAbs(p) {
		// Not filepath.Abs: it cleans link/.. away before any link is read.
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		abs = wd + string(filepath.Separator) + p
	}
	abs = trimSeparators(abs)
	var rest []string // the missing tail, innermost last
	for {
		r, err := filepath.EvalSymlinks(abs)
		if err == nil {
			for i := len(rest) - 1; i >= 0; i-- {
				r = filepath.Join(r, rest[i])
			}
			return r, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		dir, base := filepath.Split(abs)
		if base == "" { // the root itself does not resolve
			return "", err
		}
		rest = append(rest, base)
		abs = trimSeparators(dir)
	}
}

// trimSeparators removes p's trailing separators but the root's. Only
// they go: Clean would also take a "..", before the link it follows is
// resolved.
func trimSeparators(p string) string {
	if t := strings.TrimRight(p, string(filepath.Separator)); t != "" {
		return t
	}
	return string(filepath.Separator)
}

// CheckInputs refuses an output that is one of a command's inputs, holds
// one, or lies inside one, after resolving symbolic links (and by file
// identity, so that a hard link or a bind mount of an input is the input
// too): replacing the output, or writing inside it, would destroy the
// input. Empty inputs are skipped. The error matches ErrOverlap and names
// both paths as given.
func CheckInputs(output string, inputs ...string) error {
	out, err := Resolve(output)
	if err != nil {
		return fmt.Errorf("output %s: %w", output, err)
	}
	outInfo, outErr := os.Stat(out)
	for _, in := range inputs {
		if in == "" {
			continue
		}
		r, err := Resolve(in)
		if err != nil {
			return fmt.Errorf("input %s: %w", in, err)
		}
		how := ""
		switch {
		case r == out:
			how = "is the input"
		case within(out, r):
			how = "lies inside the input"
		case within(r, out):
			how = "holds the input"
		}
		if how == "" && outErr == nil {
			if inInfo, err := os.Stat(r); err == nil && os.SameFile(outInfo, inInfo) {
				how = "is the input"
			}
		}
		if how != "" {
			return &overlapError{output: output, input: in, how: how}
		}
	}
	return nil
}

// within reports whether the clean absolute path p lies strictly inside
// the clean absolute folder dir.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
