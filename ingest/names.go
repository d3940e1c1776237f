package ingest

import "fmt"

// AnnDataNames reads the cell and gene names of an AnnData file: obs's
// index, and var's index with its gene_ids column when it has one (nil
// otherwise), in any layout ingest reads (anndata 0.5 to 0.11). scpipe
// export matches a run's cells and genes to a user's file by them. Reads
// decode chunks on workers goroutines (0: GOMAXPROCS).
func AnnDataNames(path string, workers int) (obs, vars, geneIDs []string, err error) {
	f, _, err := openHDF5(path, goroutines(workers))
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	if obs, err = dataframeIndex(f, "/obs"); err != nil {
		return nil, nil, nil, err
	}
	feat, err := h5adFeatures(f, "/var")
	if err != nil {
		return nil, nil, nil, err
	}
	if feat.Names == nil {
		return obs, feat.IDs, nil, nil
	}
	if len(feat.Names) != len(feat.IDs) {
		return nil, nil, nil, fmt.Errorf("ingest: %s: %d var names and %d gene_ids", path, len(feat.Names), len(feat.IDs))
	}
	return obs, feat.Names, feat.IDs, nil
}
