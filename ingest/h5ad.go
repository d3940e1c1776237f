package ingest

import (
	"context"
	"fmt"
	"strings"

	"scpipe/ingest/internal/h5"
)

// h5adSource is an AnnData matrix (X, raw.X or a layer) stored cells × genes
// as a CSR or CSC group or a dense 2-D dataset.
type h5adSource struct {
	f      *h5.File
	hash   *fileHasher
	sparse *compressed // nil for a dense matrix
	dense  *denseMatrix
	info   sourceInfo
	feat   features
	bcs    []string
	cells  int
	genes  int
	nbytes int64
}

// h5adMatrix resolves Options.Layer to the matrix path and the dataframe
// holding its genes.
func h5adMatrix(f *h5.File, layer string) (matrix, varPath string, err error) {
	switch layer {
	case "", "X":
		if !f.Exists("/X") {
			return "", "", fmt.Errorf("ingest: %s: empty matrix: the AnnData file has no X (choose a layer with --layer)", f.Path())
		}
		return "/X", "/var", nil
	case "raw", "raw/X", "raw.X":
		switch {
		case f.Exists("/raw/X"):
			return "/raw/X", "/raw/var", nil
		case f.Exists("/raw.X"): // anndata 0.5 and 0.6
			return "/raw.X", "/raw.var", nil
		}
		return "", "", fmt.Errorf("ingest: %s: no raw/X or raw.X in the AnnData file", f.Path())
	}
	p := "/layers/" + layer
	if !f.Exists(p) {
		var names []string
		if children, err := f.Children("/layers"); err == nil {
			for _, c := range children {
				names = append(names, c.Name)
			}
		}
		have := "no layers"
		if len(names) > 0 {
			have = "layers: " + strings.Join(names, ", ")
		}
		return "", "", fmt.Errorf("ingest: %s: no layer %q (%s; X and raw are also accepted)", f.Path(), layer, have)
	}
	return p, "/var", nil
}

func openH5AD(opt *Options) (src source, err error) {
	path := opt.Input
	f, size, err := openHDF5(path, opt.Workers)
	if err != nil {
		return nil, err
	}
	s := &h5adSource{f: f, nbytes: size, info: sourceInfo{format: FormatH5AD}}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	mpath, varPath, err := h5adMatrix(f, opt.Layer)
	if err != nil {
		return nil, err
	}
	s.info.layer = strings.TrimPrefix(mpath, "/")
	s.info.matrix = path + ":" + mpath
	if s.bcs, err = dataframeIndex(f, "/obs"); err != nil {
		return nil, err
	}
	if s.feat, err = h5adFeatures(f, varPath); err != nil {
		return nil, err
	}
	var rows, cols int
	cellsAreRows := !opt.Transpose
	if f.IsGroup(mpath) {
		format, shape, err := sparseEncoding(f, mpath)
		if err != nil {
			return nil, err
		}
		rows, cols = shape[0], shape[1]
		if format == "csr" {
			s.sparse, err = openCompressed(f, mpath, rows, cols, cellsAreRows, "rows")
		} else {
			s.sparse, err = openCompressed(f, mpath, cols, rows, !cellsAreRows, "columns")
		}
		if err != nil {
			return nil, err
		}
	} else {
		d, err := f.Dataset(mpath)
		if err != nil {
			return nil, fmt.Errorf("ingest: %w", err)
		}
		if sh := d.Shape(); len(sh) != 2 {
			return nil, fmt.Errorf("ingest: %s: dense %s has shape %v, want two dimensions", path, mpath, sh)
		}
		sh, err := checkShape(path, mpath+" shape", d.Shape()[0], d.Shape()[1])
		if err != nil {
			return nil, err
		}
		rows, cols = sh[0], sh[1]
		s.dense = &denseMatrix{file: path, d: d, rows: rows, cols: cols, cellsAreRows: cellsAreRows}
	}
	s.cells, s.genes = rows, cols
	if !cellsAreRows {
		s.cells, s.genes = cols, rows
		s.bcs, s.feat = s.feat.IDs, features{IDs: s.bcs}
	}
	if err := checkLengths(path, s.feat, s.bcs, s.genes, s.cells, mpath); err != nil {
		return nil, err
	}
	s.hash = hashFile(path)
	return s, nil
}

// sparseEncoding reads a sparse group's format ("csr" or "csc") and shape,
// from anndata's encoding-type/shape attributes or the legacy h5sparse ones.
func sparseEncoding(f *h5.File, group string) (string, [2]int, error) {
	enc, ok, err := f.AttrString(group, "encoding-type")
	if err != nil {
		return "", [2]int{}, fmt.Errorf("ingest: %w", err)
	}
	shapeAttr := "shape"
	if !ok {
		if enc, ok, err = f.AttrString(group, "h5sparse_format"); err != nil {
			return "", [2]int{}, fmt.Errorf("ingest: %w", err)
		}
		shapeAttr = "h5sparse_shape"
	}
	if !ok {
		return "", [2]int{}, fmt.Errorf("ingest: %s: %s is a group without encoding-type or h5sparse_format: not a sparse matrix", f.Path(), group)
	}
	var format string
	switch enc {
	case "csr_matrix", "csr":
		format = "csr"
	case "csc_matrix", "csc":
		format = "csc"
	default:
		return "", [2]int{}, fmt.Errorf("ingest: %s: %s has encoding %q, want csr_matrix or csc_matrix", f.Path(), group, enc)
	}
	shape, ok, err := f.AttrInt64s(group, shapeAttr)
	if err != nil {
		return "", [2]int{}, fmt.Errorf("ingest: %w", err)
	}
	if !ok || len(shape) != 2 {
		return "", [2]int{}, fmt.Errorf("ingest: %s: %s has no two-element %s attribute", f.Path(), group, shapeAttr)
	}
	sh, err := checkShape(f.Path(), group+" "+shapeAttr, shape[0], shape[1])
	return format, sh, err
}

// dataframeIndex reads the row names of an AnnData dataframe: the dataset
// named by the group's _index attribute (anndata ≥ 0.7), or the "index"
// field of a compound dataset (anndata 0.5 and 0.6).
func dataframeIndex(f *h5.File, path string) ([]string, error) {
	if !f.Exists(path) {
		return nil, fmt.Errorf("ingest: %s: AnnData file has no %s", f.Path(), path)
	}
	if !f.IsGroup(path) {
		names, err := f.CompoundStrings(path, "index")
		if err != nil {
			return nil, fmt.Errorf("ingest: %w", err)
		}
		return names, nil
	}
	idx, ok, err := f.AttrString(path, "_index")
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	if !ok {
		idx = "_index"
	}
	names, err := f.Strings(path + "/" + idx)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	return names, nil
}

// h5adFeatures reads the var index as gene names and, when var has them,
// the string columns gene_ids (scanpy's read_10x_* keeps the Ensembl ids
// there), feature_types and genome (which --feature-type and --genome then
// select on, as for 10x files).
func h5adFeatures(f *h5.File, varPath string) (features, error) {
	names, err := dataframeIndex(f, varPath)
	if err != nil {
		return features{}, err
	}
	feat := features{IDs: names}
	if ids, err := h5adColumn(f, varPath, "gene_ids", len(names)); err != nil {
		return features{}, err
	} else if ids != nil {
		feat.IDs, feat.Names = ids, names
	}
	if feat.Types, err = h5adColumn(f, varPath, "feature_types", len(names)); err != nil {
		return features{}, err
	}
	if feat.Genomes, err = h5adColumn(f, varPath, "genome", len(names)); err != nil {
		return features{}, err
	}
	return feat, nil
}

// h5adColumn reads the string column col of n rows of the dataframe group
// df: a dataset of strings, or a categorical (anndata 0.8 and later: a
// group of categories and integer codes, -1 for a missing value, read as
// ""). It returns nil when the column is absent or stored otherwise
// (anndata 0.7 refers to its categories by object reference, not read).
func h5adColumn(f *h5.File, df, col string, n int) ([]string, error) {
	p := df + "/" + col
	if !f.IsGroup(df) || !f.Exists(p) {
		return nil, nil
	}
	var values []string
	if f.IsGroup(p) {
		if !f.Exists(p+"/categories") || !f.Exists(p+"/codes") {
			return nil, nil
		}
		cats, err := f.Strings(p + "/categories")
		if err != nil {
			return nil, fmt.Errorf("ingest: %w", err)
		}
		d, err := f.Dataset(p + "/codes")
		if err != nil {
			return nil, fmt.Errorf("ingest: %w", err)
		}
		codes := make([]int64, d.Len())
		if err := d.ReadInt64(0, codes); err != nil {
			return nil, fmt.Errorf("ingest: %w", err)
		}
		values = make([]string, len(codes))
		for i, c := range codes {
			if c < -1 || c >= int64(len(cats)) {
				return nil, fmt.Errorf("ingest: %s: %s/codes[%d] = %d, but there are %d categories", f.Path(), p, i, c, len(cats))
			}
			if c >= 0 {
				values[i] = cats[c]
			}
		}
	} else {
		var err error
		if values, err = f.Strings(p); err != nil {
			return nil, nil // a numeric or other column of that name
		}
	}
	if len(values) != n {
		return nil, fmt.Errorf("ingest: %s: %s has %d entries for %d genes", f.Path(), p, len(values), n)
	}
	return values, nil
}

func (s *h5adSource) shape() (int, int) { return s.cells, s.genes }

func (s *h5adSource) entries() int64 {
	if s.sparse != nil {
		return s.sparse.entries()
	}
	return -1
}

func (s *h5adSource) features() features      { return s.feat }
func (s *h5adSource) barcodes() []string      { return s.bcs }
func (s *h5adSource) describe() sourceInfo    { return s.info }
func (s *h5adSource) bytes() int64            { return s.nbytes }
func (s *h5adSource) sha256() (string, error) { return s.hash.result() }
func (s *h5adSource) startHash()              { s.hash.start() }

func (s *h5adSource) scan(ctx context.Context, fn func(*batch) error) error {
	if s.sparse != nil {
		return s.sparse.scan(ctx, fn)
	}
	return s.dense.scan(ctx, fn)
}

func (s *h5adSource) ranges() (int, func() (rangeReader, error)) {
	if s.sparse == nil {
		return 0, nil // a dense matrix is scanned
	}
	return s.sparse.ranges()
}

func (s *h5adSource) close() error {
	if s.hash != nil {
		s.hash.cancel()
	}
	return s.f.Close()
}

// denseMatrix is a 2-D dataset read a block of rows at a time; its nonzero
// values are the entries.
type denseMatrix struct {
	file         string
	d            *h5.Dataset
	rows, cols   int
	cellsAreRows bool
}

func (m *denseMatrix) scan(ctx context.Context, fn func(*batch) error) error {
	rowsPer := max(1, h5Batch/max(m.cols, 1))
	// At most the matrix's rows: with none, a corrupted column count must
	// not size the buffer (h5 bounds rows × columns by the file's size).
	buf := make([]float64, min(rowsPer, m.rows)*m.cols)
	b := &batch{cell: make([]int32, 0, len(buf)), gene: make([]int32, 0, len(buf)), val: make([]float64, 0, len(buf))}
	for r0 := 0; r0 < m.rows; r0 += rowsPer {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(rowsPer, m.rows-r0)
		vals := buf[:n*m.cols]
		if err := m.d.ReadFloat64(int64(r0)*int64(m.cols), vals); err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
		b.reset()
		for k, v := range vals {
			if v == 0 {
				continue
			}
			r, c := r0+k/m.cols, k%m.cols
			if err := checkValue(v); err != nil {
				return fmt.Errorf("ingest: %s: %s[%d, %d]: %w", m.file, m.d.Path(), r, c, err)
			}
			if !m.cellsAreRows {
				r, c = c, r
			}
			b.cell = append(b.cell, int32(r))
			b.gene = append(b.gene, int32(c))
			b.val = append(b.val, v)
		}
		if len(b.val) > 0 {
			if err := fn(b); err != nil {
				return err
			}
		}
	}
	return nil
}
