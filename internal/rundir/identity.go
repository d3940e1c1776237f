package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"scpipe/internal/infile"
)

// ShardsFile is RUN/shards.json: which shards the run is fitted to.
const ShardsFile = "shards.json"

// ShardsIdentity names the shards a run was started on: a resumed run must
// be given shards with the same Fingerprint (the path may change, as when
// the shards were moved).
type ShardsIdentity struct {
	Path        string `json:"path"`        // as given to scpipe fit
	Fingerprint string `json:"fingerprint"` // shard.Manifest.Fingerprint: 64 hex digits
	Cells       int    `json:"cells"`
	Genes       int    `json:"genes"`
	Ones        int64  `json:"ones"`
	// Run is the run's identity (the hash of the configuration it was
	// started with), recorded in every table of its fits and in its fit
	// mask, and checked wherever they are read, so that a file copied
	// from another run is refused; empty in runs started before.
	Run string `json:"run,omitempty"`
}

// String describes the shards for a message: path, shape and the
// fingerprint's first 12 digits.
func (id ShardsIdentity) String() string {
	fp := id.Fingerprint
	if len(fp) > 12 {
		fp = fp[:12]
	}
	return fmt.Sprintf("%s (%d cells × %d genes, %d ones, fingerprint %s)", id.Path, id.Cells, id.Genes, id.Ones, fp)
}

// WriteShardsIdentity writes id to path (RUN/shards.json) atomically.
func WriteShardsIdentity(path string, id ShardsIdentity) error {
	b, err := json.MarshalIndent(id, "", "  ")
	if err != nil {
		return fmt.Errorf("rundir: %s: %w", path, err)
	}
	return WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// ReadShardsIdentity reads a file written by WriteShardsIdentity. A missing
// file gives an error wrapping os.ErrNotExist.
func ReadShardsIdentity(path string) (ShardsIdentity, error) {
	var id ShardsIdentity
	b, err := infile.ReadFile(path)
	if err != nil {
		return id, fmt.Errorf("rundir: %w", err)
	}
	if err := json.Unmarshal(b, &id); err != nil {
		return id, fmt.Errorf("rundir: %s: %w", path, err)
	}
	if id.Fingerprint == "" {
		return id, fmt.Errorf("rundir: %s: no fingerprint", path)
	}
	return id, nil
}

// Paths returns where the shards id names may be for the run directory
// run: the path as given to fit and, when it is relative, the same from
// the run's parent (a command run in another folder than the fit).
func (id ShardsIdentity) Paths(run string) []string {
	paths := []string{id.Path}
	if !filepath.IsAbs(id.Path) {
		paths = append(paths, filepath.Join(filepath.Dir(filepath.Clean(run)), id.Path))
	}
	return paths
}

// Find returns the first of id.Paths(run) that exists, or an error
// naming them, which wraps os.ErrNotExist.
func (id ShardsIdentity) Find(run string) (string, error) {
	if found := id.existing(run); len(found) > 0 {
		return found[0], nil
	}
	return "", fmt.Errorf("the shards %s records are not at %s: %w", run, strings.Join(slices.Compact(id.Paths(run)), " or "), os.ErrNotExist)
}

// existing returns those of id.Paths(run) that exist.
func (id ShardsIdentity) existing(run string) []string {
	var found []string
	for _, p := range id.Paths(run) {
		if _, err := os.Stat(p); err == nil {
			found = append(found, p)
		}
	}
	return found
}

// ShardsInputs returns the folders among the paths of the shards that
// the run directory run records (ShardsIdentity.Paths) that exist: inputs
// a command that reads the run must not write into or replace, though it
// may not read them itself (scpipe enrich -o SHARDS --force deleted them).
func ShardsInputs(run string) []string {
	id, err := ReadShardsIdentity(filepath.Join(run, ShardsFile))
	if err != nil {
		return nil
	}
	return id.existing(run)
}

// SameShards refuses shards (id) other than those the run directory run
// records in shards.json, without changing the record, for a process that
// shares the run with others or reads it; a run that records none (an
// older scpipe started it) is accepted with a warning to log.
func SameShards(run string, id ShardsIdentity, log *slog.Logger) error {
	stored, err := ReadShardsIdentity(filepath.Join(run, ShardsFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		log.Warn("the run does not record the shards it was started on (an older scpipe started it): they cannot be checked", "path", run, "shards", id.Path)
	case err != nil:
		return err
	case stored.Fingerprint != id.Fingerprint:
		return fmt.Errorf("%s was started on the shards %s, not on %s: use the shards it was started on, or start a new run", run, stored, id)
	case stored.Path != id.Path:
		log.Info("the run's shards at another path", "was", stored.Path, "now", id.Path)
	}
	return nil
}
