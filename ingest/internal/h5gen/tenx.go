package h5gen

import (
	"errors"
	"fmt"
)

// GenomeMatrix is one genome group of a CellRanger v2 file.
type GenomeMatrix struct {
	Genome    string
	M         CSC
	Genes     []string // gene ids, one per row of M
	GeneNames []string // gene symbols, one per row of M
	Barcodes  []string // one per column of M
}

// WriteTenXV2 writes a CellRanger v2 file with a single genome group:
// /<genome>/{data,indices,indptr,shape,barcodes,genes,gene_names}. shape
// is int32 [genes, cells]; the string datasets are fixed-length |S<n>.
func WriteTenXV2(path, genome string, m CSC, genes, geneNames, barcodes []string, o Options) error {
	return writeTenXV2Multi(path, []GenomeMatrix{{Genome: genome, M: m, Genes: genes, GeneNames: geneNames, Barcodes: barcodes}}, o)
}

// writeTenXV2Multi writes a CellRanger v2 file with one group per genome,
// as CellRanger does for multi-genome (barnyard) references.
func writeTenXV2Multi(path string, genomes []GenomeMatrix, o Options) (err error) {
	if err := o.validate(); err != nil {
		return err
	}
	if len(genomes) == 0 {
		return errors.New("h5gen: writeTenXV2Multi: no genomes")
	}
	b, err := create(path)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			b.abort()
		}
	}()
	for _, g := range genomes {
		if g.Genome == "" {
			return errors.New("h5gen: writeTenXV2Multi: empty genome name")
		}
		root := "/" + g.Genome
		if err := b.csc(root, g.M, withDefaults(o, "int32")); err != nil {
			return err
		}
		for _, s := range []struct {
			name   string
			values []string
		}{{"barcodes", g.Barcodes}, {"genes", g.Genes}, {"gene_names", g.GeneNames}} {
			if err := b.strings(root+"/"+s.name, s.values, false); err != nil {
				return err
			}
		}
	}
	return b.commit()
}

// WriteTenXV3 writes a CellRanger v3+ file: /matrix/{data,indices,indptr,
// shape,barcodes} and /matrix/features/{id,name,feature_type,genome}.
func WriteTenXV3(path string, m CSC, ids, names, featureTypes, genomes, barcodes []string, o Options) (err error) {
	if err := o.validate(); err != nil {
		return err
	}
	b, err := create(path)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			b.abort()
		}
	}()
	if err := b.csc("/matrix", m, withDefaults(o, "int32")); err != nil {
		return err
	}
	for _, s := range []struct {
		path   string
		values []string
	}{
		{"/matrix/barcodes", barcodes},
		{"/matrix/features/id", ids},
		{"/matrix/features/name", names},
		{"/matrix/features/feature_type", featureTypes},
		{"/matrix/features/genome", genomes},
	} {
		if err := b.strings(s.path, s.values, false); err != nil {
			return err
		}
	}
	return b.commit()
}

// withDefaults fills the empty types of o: data of dataType, int64 indices.
func withDefaults(o Options, dataType string) Options {
	if o.DataType == "" {
		o.DataType = dataType
	}
	if o.IndexType == "" {
		o.IndexType = "int64"
	}
	return o
}

// csc writes data, indices, indptr and an int32 shape [Genes, Cells] under
// the group root.
func (b *builder) csc(root string, m CSC, o Options) error {
	if err := b.sparse(root, m.Indptr, m.Indices, m.Data, o); err != nil {
		return err
	}
	return b.numeric(root+"/shape", []int32{int32(m.Genes), int32(m.Cells)}, Options{})
}

// sparse writes the three arrays of a compressed sparse matrix.
func (b *builder) sparse(root string, indptr, indices []int64, data []float64, o Options) error {
	d, err := convert(data, o.DataType)
	if err != nil {
		return fmt.Errorf("h5gen: %s/data: %w", root, err)
	}
	idx, err := convertIndex(indices, o.IndexType)
	if err != nil {
		return fmt.Errorf("h5gen: %s/indices: %w", root, err)
	}
	ptr, err := convertIndex(indptr, o.IndexType)
	if err != nil {
		return fmt.Errorf("h5gen: %s/indptr: %w", root, err)
	}
	st := o.storage()
	for _, a := range []struct {
		name   string
		values any
	}{{"data", d}, {"indices", idx}, {"indptr", ptr}} {
		if err := b.numeric(root+"/"+a.name, a.values, st); err != nil {
			return err
		}
	}
	return nil
}
