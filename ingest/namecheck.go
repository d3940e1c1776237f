package ingest

import (
	"fmt"

	"scpipe/shard"
)

// checkNames refuses, before anything is written, a name that a shard
// folder cannot hold or a reader downstream cannot read (shard.CheckName:
// too long, invalid UTF-8, a control character, a bidirectional control),
// naming the file and the line (or the entry of an HDF5 input) where it
// stands: a barcode with an invalid byte once passed every command and
// then failed anndata.read_h5ad, and a carriage return was refused only
// when the shards were written, naming their line.
func checkNames(src source, info sourceInfo) error {
	feat := src.features()
	genesAt := info.matrix
	if info.genes != "" {
		genesAt = info.genes
	}
	barcodesAt := info.matrix
	if info.barcodes != "" {
		barcodesAt = info.barcodes
	}
	for _, c := range []struct {
		names     []string
		what, at  string
		textLines bool // one name a line of the file at
	}{
		{src.barcodes(), "barcode", barcodesAt, info.barcodes != ""},
		{feat.IDs, "gene id", genesAt, info.genes != ""},
		{feat.Names, "gene name", genesAt, info.genes != ""},
		{feat.Types, "feature type", genesAt, info.genes != ""},
		{feat.Genomes, "genome", genesAt, info.genes != ""},
	} {
		for i, s := range c.names {
			if err := shard.CheckName(s); err != nil {
				where := fmt.Sprintf("%s line %d", c.at, i+1)
				if !c.textLines {
					where = fmt.Sprintf("%s: %s %d", c.at, c.what, i+1)
				}
				return fmt.Errorf("ingest: %s: %s %s is %w", where, c.what, shard.Quote(s), err)
			}
		}
	}
	return nil
}
