package rundir

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// CheckpointPartName returns the name of the file, beside a fit's
// checkpoint, that holds the state of cells [lo, hi) at sweep sweep of a
// fit spread over MPI ranks (each rank writes its own).
func CheckpointPartName(lo, hi int, sweep int64) string {
	return fmt.Sprintf("state.part-%d-%d.s%d.ckpt", lo, hi, sweep)
}

// CheckpointPart is a part file found in a fit's folder.
type CheckpointPart struct {
	Path   string
	Lo, Hi int
	Sweep  int64
}

// CheckpointParts lists the part files in the fit folder dir, by sweep and
// first cell.
func CheckpointParts(dir string) ([]CheckpointPart, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("rundir: %w", err)
	}
	var out []CheckpointPart
	for _, e := range ents {
		var p CheckpointPart
		if _, err := fmt.Sscanf(e.Name(), "state.part-%d-%d.s%d.ckpt", &p.Lo, &p.Hi, &p.Sweep); err != nil ||
			e.Name() != CheckpointPartName(p.Lo, p.Hi, p.Sweep) {
			continue
		}
		p.Path = filepath.Join(dir, e.Name())
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b CheckpointPart) int {
		if a.Sweep != b.Sweep {
			return int(a.Sweep - b.Sweep)
		}
		return a.Lo - b.Lo
	})
	return out, nil
}
