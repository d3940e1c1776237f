package ingest

import (
	"fmt"
	"regexp"
	"strings"
)

// ensemblGene matches Ensembl gene ids of any species (ENSG00000141510,
// ENSMUSG00000064370.1).
var ensemblGene = regexp.MustCompile(`^ENS[A-Z]*G[0-9]{6,}(\.[0-9]+)?$`)

// looksLikeBarcode reports whether s reads as a cell barcode: at least 8
// bases (A, C, G, T, N), perhaps after a sample prefix ending in _ : or #
// and before a -1 style suffix. Gene ids and symbols are not made of bases
// alone.
func looksLikeBarcode(s string) bool {
	if i := strings.LastIndexAny(s, "_:#"); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.LastIndexByte(s, '-'); i > 0 && strings.Trim(s[i+1:], "0123456789") == "" {
		s = s[:i]
	}
	return len(s) >= 8 && strings.Trim(s, "ACGTN") == ""
}

// mostly reports whether more than 90% of a sample of up to 1000 names,
// spread over the whole list, satisfy like, and returns one that does.
func mostly(names []string, like func(string) bool) (bool, string) {
	if len(names) == 0 {
		return false, ""
	}
	step := max(len(names)/1000, 1)
	n, hits, example := 0, 0, ""
	for i := 0; i < len(names); i += step {
		n++
		if like(names[i]) {
			hits++
			if example == "" {
				example = names[i]
			}
		}
	}
	return hits*10 > n*9, example
}

// axesWarning returns a warning when the names on the axes say that the
// matrix was read the wrong way round (a genes × cells file read without
// --transpose, or a cells × genes one with it): genes named like cell
// barcodes, or cells named like Ensembl gene ids. Names decide because the
// shape cannot: targeted panels measure a few dozen genes, and small
// experiments have fewer cells than genes. It returns "" when nothing looks
// swapped, as for inputs without names.
func axesWarning(matrix string, cells, genes int, f features, barcodes []string, transpose bool) string {
	var why []string
	for _, names := range [][]string{f.IDs, f.Names} {
		if ok, ex := mostly(names, looksLikeBarcode); ok {
			why = append(why, fmt.Sprintf("its genes are named like cell barcodes (%q)", ex))
			break
		}
	}
	if ok, ex := mostly(barcodes, ensemblGene.MatchString); ok {
		why = append(why, fmt.Sprintf("its cells are named like Ensembl gene ids (%q)", ex))
	}
	if len(why) == 0 {
		return ""
	}
	fix := "ingest it again with --transpose"
	if transpose {
		fix = "ingest it again without --transpose"
	}
	return fmt.Sprintf("ingest: %s: the cells and genes look swapped: read as %d cells × %d genes, but %s; if so, %s",
		matrix, cells, genes, strings.Join(why, " and "), fix)
}
