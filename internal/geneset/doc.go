// Package geneset reads and writes gene-set libraries in Broad's GMT format
// (one set per line: name, description, genes, tab separated), in every
// dialect Enrichr and MSigDB files come in. Gene symbols compare
// case-insensitively (Fold), so that mouse and human conventions match.
//
// Both `scpipe enrich` (libraries to test programs against) and `scpipe
// fit --fixed-codes` (known programs held fixed) read libraries with it.
//
//	lib, err := geneset.ReadGMTFile("celltype-markers.gmt") // gzip or not
//	for _, s := range lib.Sets {
//		fmt.Println(s.Name, len(s.Genes))
//	}
package geneset
