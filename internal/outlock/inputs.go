package outlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// errOverlap is matched (errors.Is) by the error CheckInputs returns.
var errOverlap = errors.New("the output overlaps an input")

// overlapError names the output, the input and how they overlap.
type overlapError struct{ output, input, how string }

func (e *overlapError) Error() string {
	return fmt.Sprintf("output %s %s %s: writing it (or replacing it with --force) would destroy the input; choose another output", e.output, e.how, e.input)
}

func (e *overlapError) Is(target error) bool { return target == errOverlap }

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
		// A link whose target is missing is in the way of whatever is made
		// through it: "mkdir lnk/: file exists" said nothing of the link.
		if fi, lerr := os.Lstat(abs); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(abs)
			return "", fmt.Errorf("%s is a symbolic link to %s, which does not exist", abs, target)
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
// input. Empty inputs are skipped. The error matches errOverlap and names
// both paths as given.
func CheckInputs(output string, inputs ...string) error {
	out, err := Resolve(output)
	if err != nil {
		return fmt.Errorf("output %s: %w", output, err)
	}
	outInfo, outErr := os.Stat(out)
	var checked []checkedInput
	for _, in := range inputs {
		if in == "" {
			continue
		}
		r, err := Resolve(in)
		if err != nil {
			return fmt.Errorf("input %s: %w", in, err)
		}
		inInfo, _ := os.Stat(r)
		c := checkedInput{name: in, path: r, info: inInfo}
		if how := c.overlap(out, outInfo, outErr == nil); how != "" {
			return &overlapError{output: output, input: in, how: how}
		}
		checked = append(checked, c)
	}
	remember(output, checked)
	if AfterCheck != nil {
		AfterCheck(output)
	}
	return nil
}

// AfterCheck, when set, is called by CheckInputs when output has passed:
// tests change the output's path there (a folder swapped for a link to an
// input's folder) to show that Install checks the output where it leads
// when it is installed, not where it led when it was checked.
var AfterCheck func(output string)

// checkedInput is an input as CheckInputs found it: its name as given, its
// resolved path and its identity (nil when it did not exist).
type checkedInput struct {
	name, path string
	info       os.FileInfo
}

// overlap says how the output whose resolved path is out overlaps the
// input ("is the input", "lies inside the input", "holds the input"), or
// "" when it does not; outInfo is the output's identity when exists.
func (c checkedInput) overlap(out string, outInfo os.FileInfo, exists bool) string {
	switch {
	case c.path == out:
		return "is the input"
	case within(out, c.path):
		return "lies inside the input"
	case within(c.path, out):
		return "holds the input"
	}
	if exists && c.info != nil && os.SameFile(outInfo, c.info) {
		return "is the input"
	}
	return ""
}

// checkedInputs holds, for each output CheckInputs passed (by its absolute
// path as given, links not resolved), the inputs it was checked against,
// so that Install checks them again at the moment it replaces the output:
// a folder on the output's path swapped for a link between the check and
// the install (mv d d.old; ln -s RUN d) once made --force replace the
// command's own input.
var checkedInputs = struct {
	sync.Mutex
	m map[string][]checkedInput
}{m: map[string][]checkedInput{}}

// outputKey is output's absolute path as given, cleaned but unresolved.
func outputKey(output string) string {
	if abs, err := filepath.Abs(output); err == nil {
		return abs
	}
	return filepath.Clean(output)
}

func remember(output string, inputs []checkedInput) {
	checkedInputs.Lock()
	defer checkedInputs.Unlock()
	k := outputKey(output)
	checkedInputs.m[k] = append(checkedInputs.m[k], inputs...)
}

func remembered(output string) []checkedInput {
	checkedInputs.Lock()
	defer checkedInputs.Unlock()
	return checkedInputs.m[outputKey(output)]
}

// recheck refuses to put anything at out, the resolved path where output
// is about to be installed (its folder named from the open folder itself),
// when out is, holds or lies inside an input CheckInputs checked output
// against, or is the working or home directory (see Refuse). outInfo is
// what stands at out now, when exists.
func recheck(output, out string, outInfo os.FileInfo, exists bool) error {
	for _, c := range remembered(output) {
		if how := c.overlap(out, outInfo, exists); how != "" {
			return fmt.Errorf("%w (a folder on its path changed since the command checked it: it now leads to %s; nothing replaced)",
				&overlapError{output: output, input: c.name, how: how}, out)
		}
	}
	return refuseResolved(output, out)
}

// within reports whether the clean absolute path p lies strictly inside
// the clean absolute folder dir.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
