package shardinfo

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"scpipe/ingest"
	"scpipe/internal/infile"
	"scpipe/internal/rundir"
	"scpipe/shard"
	"scpipe/simulate"
)

// notShards returns an error saying what path is when it is not a shard
// folder (a count matrix, an MTX folder, a run directory), so that
// `scpipe info counts.h5` says what to do rather than that manifest.json is
// not a directory. It returns nil for a folder with a manifest and for a
// path that does not exist (shard.Open names those problems).
func notShards(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		// A mistyped path is said as such, not as a folder without a
		// manifest.
		return fmt.Errorf("info: %s: %w", path, fs.ErrNotExist)
	}
	if err != nil {
		return nil
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return fmt.Errorf("info: %w", infile.Dir(path))
	}
	if !fi.IsDir() {
		return fmt.Errorf("info: %s is a file, not a shard folder: %s", path, describeFile(path, fi.Size()))
	}
	if _, err := os.Stat(filepath.Join(path, shard.ManifestName)); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var what string
	switch {
	case exists(filepath.Join(path, rundir.ConfigFile)):
		what = "it looks like a run directory of scpipe fit (its summary is " + filepath.Join(path, rundir.SummaryFile) + ")"
	case exists(filepath.Join(path, simulate.ShardsDir, shard.ManifestName)):
		what = "it holds shards in " + filepath.Join(path, simulate.ShardsDir) + " (scpipe simulate --shards writes them there)"
	default:
		if f, err := ingest.Detect(path); err == nil && f == ingest.FormatMTX {
			what = "it looks like a 10x MTX folder; make shards from it with: scpipe ingest " + path + " -o SHARDS"
		} else {
			what = "scpipe info reads the folder that scpipe ingest or scpipe simulate --shards writes"
		}
	}
	return fmt.Errorf("info: %s is not a shard folder (it has no %s): %s", path, shard.ManifestName, what)
}

// describeFile says what a file looks like: a count matrix scpipe ingest
// reads, another HDF5 file, or its size and first bytes.
func describeFile(path string, size int64) string {
	format, err := ingest.Detect(path)
	kinds := map[ingest.Format]string{
		ingest.FormatTenXH5V2: "a 10x HDF5 count matrix (CellRanger v2)",
		ingest.FormatTenXH5V3: "a 10x HDF5 count matrix (CellRanger v3 or later)",
		ingest.FormatMTX:      "a Matrix Market count matrix",
		ingest.FormatH5AD:     "an AnnData .h5ad file",
	}
	if err == nil {
		return fmt.Sprintf("it looks like %s; make shards from it with: scpipe ingest %s -o SHARDS", kinds[format], path)
	}
	if strings.Contains(err.Error(), "HDF5 file is neither") {
		return "it is an HDF5 file, but neither a 10x count matrix nor AnnData; scpipe info reads the folder that scpipe ingest writes"
	}
	head := make([]byte, 16)
	if f, err := infile.Open(path); err == nil {
		n, _ := io.ReadFull(f, head)
		head = head[:n]
		f.Close()
	}
	return fmt.Sprintf("%d bytes starting %q, neither HDF5 nor Matrix Market; scpipe info reads the folder that scpipe ingest writes", size, head)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
