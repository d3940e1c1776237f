package export

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"scpipe/rundir"
	"scpipe/shard"
)

// binaryX is the run's binary cells × genes matrix as CSR, the X of the
// export: what the fits saw (1 = the gene detected in the cell; entries
// that the shards mark unobserved are 0).
type binaryX struct {
	rows, cols int
	indptr     []int64
	indices    []int32
	data       []float32
}

// openShards opens the shards of run: dir when given, else the folder
// shards.json names (as given to fit, or relative to the run's parent).
// Either must have the fingerprint the run was fitted to.
func openShards(run, dir string) (*shard.Shard, error) {
	id, err := rundir.ReadShardsIdentity(filepath.Join(run, rundir.ShardsFile))
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	candidates := []string{dir}
	if dir == "" {
		candidates = []string{id.Path}
		if !filepath.IsAbs(id.Path) {
			candidates = append(candidates, filepath.Join(filepath.Dir(filepath.Clean(run)), id.Path))
		}
	}
	for _, c := range candidates {
		if _, err := os.Stat(filepath.Join(c, shard.ManifestName)); errors.Is(err, os.ErrNotExist) {
			continue
		}
		s, err := shard.Open(c)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		if fp := s.Manifest().Fingerprint(); fp != id.Fingerprint {
			s.Close()
			return nil, fmt.Errorf("export: shards %s are not those %s was fitted to (fingerprint %.12s, the run's %.12s)", c, run, fp, id.Fingerprint)
		}
		return s, nil
	}
	return nil, fmt.Errorf("export: the shards of %s are not at %s: give them with --shards, or --no-x for an export without X: %w", run, strings.Join(slices.Compact(candidates), " or "), os.ErrNotExist)
}

// readX reads the binary matrix of the shards s, checking that its cells
// and genes are the fit's.
func readX(s *shard.Shard, f *Fit) (*binaryX, error) {
	m := s.Manifest()
	dir := s.Dir()
	if m.Cells != len(f.Cells.Barcodes) || m.Genes != len(f.Codes.GeneIDs) {
		return nil, fmt.Errorf("export: shards %s hold %d cells × %d genes, the fit %d × %d", dir, m.Cells, m.Genes, len(f.Cells.Barcodes), len(f.Codes.GeneIDs))
	}
	if len(m.Barcodes) > 0 && !slices.Equal(m.Barcodes, f.Cells.Barcodes) {
		return nil, fmt.Errorf("export: shards %s: barcodes differ from %s", dir, filepath.Join(f.Dir, rundir.CellsFile))
	}
	x := &binaryX{rows: m.Cells, cols: m.Genes, indptr: make([]int64, 1, m.Cells+1)}
	X := s.X()
	for i := range m.Cells {
		for w, word := range X.Segment(i, 0) {
			for word != 0 {
				x.indices = append(x.indices, int32(w*64+bits.TrailingZeros64(word)))
				word &= word - 1
			}
		}
		x.indptr = append(x.indptr, int64(len(x.indices)))
	}
	x.data = make([]float32, len(x.indices))
	for i := range x.data {
		x.data[i] = 1
	}
	return x, nil
}
