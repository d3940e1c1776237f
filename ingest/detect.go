package ingest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/klauspost/compress/gzip"

	"scpipe/internal/infile"
)

// Format is an input format recognised by Detect.
type Format int

// The input formats.
const (
	// FormatUnknown is the zero Format, returned with errors.
	FormatUnknown Format = iota
	// FormatTenXH5V2 is a CellRanger v2 HDF5 file: one group per genome
	// holding data, indices, indptr, shape, barcodes, genes, gene_names.
	FormatTenXH5V2
	// FormatTenXH5V3 is a CellRanger v3+ (or spaceranger) HDF5 file: /matrix
	// with a features group.
	FormatTenXH5V3
	// FormatMTX is a Matrix Market file or a 10x MTX folder.
	FormatMTX
	// FormatH5AD is an AnnData .h5ad file.
	FormatH5AD
)

// formatMixed is the format of several samples' inputs of different
// formats (see multiSource).
const formatMixed Format = -1

// String returns the name recorded in shard manifests.
func (f Format) String() string {
	switch f {
	case FormatTenXH5V2:
		return "10x-h5-v2"
	case FormatTenXH5V3:
		return "10x-h5-v3"
	case FormatMTX:
		return "10x-mtx"
	case FormatH5AD:
		return "h5ad"
	case formatMixed:
		return "mixed"
	}
	return "unknown"
}

// mtxBanner starts every Matrix Market file.
const mtxBanner = "%%MatrixMarket"

// Detect reports the format of path from its content (file names are only
// used to find the files of an MTX folder): an HDF5 file is classified by its
// groups, a text file (plain or gzip) by its Matrix Market banner.
func Detect(path string) (Format, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return FormatUnknown, fmt.Errorf("ingest: %w", err)
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return FormatUnknown, fmt.Errorf("ingest: %s is not a regular file (a pipe or a device?): ingest reads its input more than once, which a pipe does not allow; write it to a file first", path)
	}
	if fi.IsDir() {
		if _, err := findMTXFolder(path, ""); err != nil {
			return FormatUnknown, err
		}
		return FormatMTX, nil
	}
	isH5, err := isHDF5(path)
	if err != nil {
		return FormatUnknown, err
	}
	if isH5 {
		return detectHDF5(path)
	}
	ok, err := isMTX(path)
	if err != nil {
		return FormatUnknown, err
	}
	if ok {
		return FormatMTX, nil
	}
	return FormatUnknown, fmt.Errorf("ingest: %s: not an HDF5 file (no HDF5 signature) and not a Matrix Market file (no %s banner)", path, mtxBanner)
}

// isMTX reports whether path starts with the Matrix Market banner, after
// gunzipping if it starts with the gzip magic.
func isMTX(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("ingest: %w", err)
	}
	defer f.Close()
	head := make([]byte, len(mtxBanner))
	n, _ := io.ReadFull(f, head)
	if bytes.HasPrefix(head[:n], gzipMagic) {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return false, fmt.Errorf("ingest: %s: %w", path, err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			return false, fmt.Errorf("ingest: %s: bad gzip header: %w", path, err)
		}
		n, _ = io.ReadFull(zr, head)
	}
	return strings.EqualFold(string(head[:n]), mtxBanner), nil
}

// mtxFiles are the files of a 10x MTX folder.
type mtxFiles struct {
	matrix, features, barcodes string
}

// existingOne returns the one of names that exists in dir as a file, or
// "" when none does. Two that exist (matrix.mtx and matrix.mtx.gz, or
// features.tsv.gz and genes.tsv) are an error naming both: which one holds
// the data would be a guess.
func existingOne(dir string, names ...string) (string, error) {
	found := ""
	for _, n := range names {
		p := filepath.Join(dir, n)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			if found != "" {
				return "", fmt.Errorf("ingest: %s: both %s and %s: remove the one that is not the data, or give the files by name", dir, filepath.Base(found), n)
			}
			found = p
		}
	}
	return found, nil
}

// The names of a 10x MTX folder's files, in both their plain and gzipped
// forms (CellRanger v2 writes genes.tsv, v3 and later features.tsv.gz).
var (
	matrixNames   = []string{"matrix.mtx.gz", "matrix.mtx"}
	featureNames  = []string{"features.tsv.gz", "features.tsv", "genes.tsv.gz", "genes.tsv"}
	barcodesNames = []string{"barcodes.tsv.gz", "barcodes.tsv"}
)

func matrixIn(dir string) (string, error) { return existingOne(dir, matrixNames...) }

// findMTXFolder resolves a 10x MTX folder: the matrix and side files of dir,
// or of its genome subfolder (CellRanger v2 writes
// filtered_gene_bc_matrices/<genome>/); several genomes need genome.
func findMTXFolder(dir, genome string) (mtxFiles, error) {
	matrix, err := matrixIn(dir)
	if err != nil {
		return mtxFiles{}, err
	}
	if matrix == "" {
		if genome != "" {
			sub := filepath.Join(dir, genome)
			if matrix, err = matrixIn(sub); err != nil {
				return mtxFiles{}, err
			}
			if matrix == "" {
				return mtxFiles{}, fmt.Errorf("ingest: %s: no matrix.mtx(.gz) in genome folder %s", dir, genome)
			}
			dir = sub
		} else {
			entries, err := os.ReadDir(dir)
			if err != nil {
				return mtxFiles{}, fmt.Errorf("ingest: %w", err)
			}
			var genomes []string
			for _, e := range entries {
				if !e.IsDir() {
					continue
				}
				m, err := matrixIn(filepath.Join(dir, e.Name()))
				if err != nil {
					return mtxFiles{}, err
				}
				if m != "" {
					genomes = append(genomes, e.Name())
				}
			}
			sort.Strings(genomes)
			switch len(genomes) {
			case 0:
				return mtxFiles{}, fmt.Errorf("ingest: %s: not a 10x MTX folder: no matrix.mtx or matrix.mtx.gz", dir)
			case 1:
				dir = filepath.Join(dir, genomes[0])
			default:
				return mtxFiles{}, fmt.Errorf("ingest: %s: several genomes %s; choose one with --genome", dir, strings.Join(genomes, ", "))
			}
			if matrix, err = matrixIn(dir); err != nil {
				return mtxFiles{}, err
			}
		}
	}
	m := mtxFiles{matrix: matrix}
	if m.features, err = existingOne(dir, featureNames...); err != nil {
		return m, err
	}
	if m.barcodes, err = existingOne(dir, barcodesNames...); err != nil {
		return m, err
	}
	if m.features == "" {
		return m, fmt.Errorf("ingest: %s: missing features.tsv(.gz) or genes.tsv beside %s", dir, filepath.Base(m.matrix))
	}
	if m.barcodes == "" {
		return m, fmt.Errorf("ingest: %s: missing barcodes.tsv(.gz) beside %s", dir, filepath.Base(m.matrix))
	}
	// A pipe in the folder would block its first open, deaf to Ctrl-C,
	// and the matrix is read more than once.
	for _, p := range []string{m.matrix, m.features, m.barcodes} {
		if err := infile.Check(p); err != nil {
			return m, fmt.Errorf("ingest: %w", err)
		}
	}
	return m, nil
}

// layerOfAnnData refuses a layer (Options.Layer) for an input of format f
// other than AnnData: no other format has layers, and ingesting X instead
// would give the user another matrix than the one asked for.
func layerOfAnnData(opt *Options, f Format) error {
	if opt.Layer == "" || opt.Layer == "X" || f == FormatH5AD {
		return nil
	}
	return fmt.Errorf("ingest: %s: --layer %q selects a matrix of an AnnData (.h5ad) file; this input is %v, which has none", opt.Input, opt.Layer, f)
}

// openSource detects opt.Input's format and opens it.
func openSource(opt *Options) (source, error) {
	fi, err := os.Stat(opt.Input)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	if fi.IsDir() {
		if err := layerOfAnnData(opt, FormatMTX); err != nil {
			return nil, err
		}
		m, err := findMTXFolder(opt.Input, opt.Genome)
		if err != nil {
			return nil, err
		}
		genes, bcs := m.features, m.barcodes
		if opt.GenesFile != "" {
			genes = opt.GenesFile
		}
		if opt.BarcodesFile != "" {
			bcs = opt.BarcodesFile
		}
		return openMTXSource(m.matrix, genes, bcs, opt.Transpose)
	}
	format, err := Detect(opt.Input)
	if err != nil {
		return nil, err
	}
	if err := layerOfAnnData(opt, format); err != nil {
		return nil, err
	}
	switch format {
	case FormatMTX:
		genes, bcs := opt.GenesFile, opt.BarcodesFile
		if base := filepath.Base(opt.Input); base == "matrix.mtx" || base == "matrix.mtx.gz" {
			// A 10x folder's matrix given directly: use the files beside it.
			dir := filepath.Dir(opt.Input)
			if genes == "" {
				if genes, err = existingOne(dir, featureNames...); err != nil {
					return nil, err
				}
			}
			if bcs == "" {
				if bcs, err = existingOne(dir, barcodesNames...); err != nil {
					return nil, err
				}
			}
		}
		return openMTXSource(opt.Input, genes, bcs, opt.Transpose)
	case FormatTenXH5V2, FormatTenXH5V3:
		return openTenX(opt, format)
	case FormatH5AD:
		return openH5AD(opt)
	}
	return nil, fmt.Errorf("ingest: %s: unsupported format %v", opt.Input, format)
}
