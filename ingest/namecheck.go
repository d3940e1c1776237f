package ingest

import (
	"fmt"
	"strings"

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
		listed    bool // joined into lists (enrich's overlap genes)
	}{
		{src.barcodes(), "barcode", barcodesAt, info.barcodes != "", false},
		{feat.IDs, "gene id", genesAt, info.genes != "", true},
		{feat.Names, "gene name", genesAt, info.genes != "", true},
		{feat.Types, "feature type", genesAt, info.genes != "", false},
		{feat.Genomes, "genome", genesAt, info.genes != "", false},
	} {
		for i, s := range c.names {
			err := shard.CheckName(s)
			if err == nil {
				err = checkTableName(s, c.listed)
			}
			if err != nil {
				where := fmt.Sprintf("%s line %d", c.at, i+1)
				if !c.textLines {
					where = fmt.Sprintf("%s: %s %d", c.at, c.what, i+1)
				}
				return fmt.Errorf("ingest: %s: %s %s: %w", where, c.what, shard.Quote(s), err)
			}
		}
	}
	return nil
}

// checkTableName refuses what the tables downstream cannot hold unchanged
// (names pass shard.CheckName first): a name beginning with =, +, - or @,
// which a spreadsheet opening a table runs as a formula, and in a gene's
// name (listed) a comma or a semicolon, which separate the genes of
// enrich's lists.
func checkTableName(s string, listed bool) error {
	if s != "" && strings.ContainsRune("=+-@", rune(s[0])) {
		return fmt.Errorf("begins with %q: a spreadsheet opening a table of it would run it as a formula", s[:1])
	}
	if i := strings.IndexAny(s, ",;"); listed && i >= 0 {
		return fmt.Errorf("holds %q, which separates the genes of the lists in scpipe's tables", s[i:i+1])
	}
	return nil
}
