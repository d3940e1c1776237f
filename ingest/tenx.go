package ingest

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"scpipe/ingest/internal/h5"
	"scpipe/internal/infile"
)

// tenxSource is a CellRanger / spaceranger HDF5 matrix: genes × cells in
// CSC, so indptr runs over cells and indices are genes.
type tenxSource struct {
	f      *h5.File
	hash   *fileHasher
	m      *compressed
	info   sourceInfo
	feat   features
	bcs    []string
	cells  int
	genes  int
	nbytes int64
}

// tenxGenomes lists the root groups of a CellRanger v2 file: those holding
// indptr, shape and barcodes datasets.
func tenxGenomes(f *h5.File) []string {
	children, err := f.Children("/")
	if err != nil {
		return nil
	}
	var out []string
	for _, c := range children {
		if c.IsGroup && c.Name != "matrix" && f.Exists("/"+c.Name+"/indptr") &&
			f.Exists("/"+c.Name+"/shape") && f.Exists("/"+c.Name+"/barcodes") {
			out = append(out, c.Name)
		}
	}
	return out
}

// openHDF5 opens an HDF5 input, whose reads decode chunks on workers
// goroutines, and returns it with its size in bytes.
func openHDF5(path string, workers int) (*h5.File, int64, error) {
	// AnnDataNames reads a user's file that Detect has not seen: a pipe
	// there would block the open, deaf to Ctrl-C.
	if err := infile.Check(path); err != nil {
		return nil, 0, fmt.Errorf("ingest: %w", err)
	}
	f, err := h5.Open(path, workers)
	if err != nil {
		return nil, 0, fmt.Errorf("ingest: %w", err)
	}
	size, err := fileSize(path)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, size, nil
}

func openTenX(opt *Options, format Format) (src source, err error) {
	path := opt.Input
	f, size, err := openHDF5(path, opt.Workers)
	if err != nil {
		return nil, err
	}
	s := &tenxSource{f: f, nbytes: size, info: sourceInfo{format: format}}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	group := "/matrix"
	if format == FormatTenXH5V2 {
		genomes := tenxGenomes(f)
		switch {
		case opt.Genome != "":
			if !slices.Contains(genomes, opt.Genome) {
				return nil, fmt.Errorf("ingest: %s: genome %q not found; genomes: %s", path, opt.Genome, strings.Join(genomes, ", "))
			}
			s.info.genome = opt.Genome
		case len(genomes) > 1:
			return nil, fmt.Errorf("ingest: %s: several genomes: %s; choose one with --genome", path, strings.Join(genomes, ", "))
		default:
			s.info.genome = genomes[0]
		}
		group = "/" + s.info.genome
	}
	s.info.matrix = path + ":" + group
	shape, err := readShape(f, group+"/shape")
	if err != nil {
		return nil, err
	}
	s.genes, s.cells = shape[0], shape[1]
	if opt.Transpose {
		s.genes, s.cells = s.cells, s.genes
	}
	// Stored genes × cells in CSC: the compressed axis is the matrix's
	// columns, cells unless transposed.
	s.m, err = openCompressed(f, group, shape[1], shape[0], !opt.Transpose, "columns (cells)")
	if err != nil {
		return nil, err
	}
	if s.bcs, err = f.Strings(group + "/barcodes"); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	if format == FormatTenXH5V2 {
		if s.feat.IDs, err = f.Strings(group + "/genes"); err != nil {
			return nil, fmt.Errorf("ingest: %w", err)
		}
		if f.Exists(group + "/gene_names") {
			if s.feat.Names, err = f.Strings(group + "/gene_names"); err != nil {
				return nil, fmt.Errorf("ingest: %w", err)
			}
		}
	} else {
		if s.feat.IDs, err = f.Strings(group + "/features/id"); err != nil {
			return nil, fmt.Errorf("ingest: %w", err)
		}
		for _, col := range []struct {
			name string
			dst  *[]string
		}{{"name", &s.feat.Names}, {"feature_type", &s.feat.Types}, {"genome", &s.feat.Genomes}} {
			p := group + "/features/" + col.name
			if f.Exists(p) {
				if *col.dst, err = f.Strings(p); err != nil {
					return nil, fmt.Errorf("ingest: %w", err)
				}
			}
		}
		if g := distinct(s.feat.Genomes); len(g) == 1 {
			s.info.genome = g[0]
		}
		if opt.Genome != "" {
			s.info.genome = opt.Genome
			if s.feat.Genomes == nil || !slices.Contains(s.feat.Genomes, opt.Genome) {
				return nil, fmt.Errorf("ingest: %s: no feature of genome %q; genomes: %s", path, opt.Genome, strings.Join(distinct(s.feat.Genomes), ", "))
			}
		}
	}
	if err := checkLengths(path, s.feat, s.bcs, s.genes, s.cells, group); err != nil {
		return nil, err
	}
	s.hash = hashFile(path)
	return s, nil
}

// readShape reads a 2-element shape dataset.
func readShape(f *h5.File, path string) ([2]int, error) {
	d, err := f.Dataset(path)
	if err != nil {
		return [2]int{}, fmt.Errorf("ingest: %w", err)
	}
	if d.Len() != 2 {
		return [2]int{}, fmt.Errorf("ingest: %s: %s has %d values, want 2", f.Path(), path, d.Len())
	}
	var v [2]int64
	if err := d.ReadInt64(0, v[:]); err != nil {
		return [2]int{}, fmt.Errorf("ingest: %w", err)
	}
	return checkShape(f.Path(), path, v[0], v[1])
}

func checkShape(file, what string, a, b int64) ([2]int, error) {
	if a < 0 || b < 0 || a > maxDimMTX || b > maxDimMTX {
		return [2]int{}, fmt.Errorf("ingest: %s: %s = [%d, %d] out of range", file, what, a, b)
	}
	return [2]int{int(a), int(b)}, nil
}

// checkLengths checks the annotations against the matrix shape.
func checkLengths(file string, f features, bcs []string, genes, cells int, group string) error {
	for _, c := range []struct {
		what string
		n    int
		want int
	}{
		{"gene ids", len(f.IDs), genes},
		{"gene names", len(f.Names), genes},
		{"feature types", len(f.Types), genes},
		{"feature genomes", len(f.Genomes), genes},
		{"barcodes", len(bcs), cells},
	} {
		if c.n != c.want && (c.n != 0 || c.what == "gene ids" || c.what == "barcodes") {
			return fmt.Errorf("ingest: %s: %s: %d %s but the matrix has %d (shape mismatch; --transpose?)", file, group, c.n, c.what, c.want)
		}
	}
	return nil
}

func distinct(s []string) []string {
	var out []string
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func (s *tenxSource) shape() (int, int)       { return s.cells, s.genes }
func (s *tenxSource) entries() int64          { return s.m.entries() }
func (s *tenxSource) features() features      { return s.feat }
func (s *tenxSource) barcodes() []string      { return s.bcs }
func (s *tenxSource) describe() sourceInfo    { return s.info }
func (s *tenxSource) bytes() int64            { return s.nbytes }
func (s *tenxSource) sha256() (string, error) { return s.hash.result() }
func (s *tenxSource) startHash()              { s.hash.start() }

func (s *tenxSource) scan(ctx context.Context, fn func(*batch) error) error {
	return s.m.scan(ctx, fn)
}

func (s *tenxSource) ranges() (int, func() (rangeReader, error)) {
	return s.m.ranges()
}

func (s *tenxSource) close() error {
	if s.hash != nil {
		s.hash.cancel()
	}
	return s.f.Close()
}
