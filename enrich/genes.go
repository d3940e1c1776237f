package enrich

import (
	"slices"
	"strconv"
)

// Genes is the gene axis of a run (the rows of codes.parquet), with a
// symbol for each gene that no other gene shares.
type Genes struct {
	IDs []string // gene_id, e.g. the Ensembl id
	// Names is the symbol the input gives (gene_name), or the id where the
	// name is empty: what libraries are matched against.
	Names []string
	// Symbols is Names made unique, case-insensitively: the first gene of a
	// name (in gene order) keeps it, later ones get "-1", "-2", … (scanpy's
	// var_names_make_unique), skipping any spelling another gene has. Every
	// symbol in the outputs names one gene; its id is written beside it.
	Symbols []string
}

// NewGenes makes the gene axis from codes.parquet's gene_id and gene_name
// columns.
func NewGenes(ids, names []string) Genes {
	g := Genes{IDs: slices.Clone(ids), Names: make([]string, len(ids)), Symbols: make([]string, len(ids))}
	taken := make(map[string]bool, len(ids))
	for i := range ids {
		g.Names[i] = names[i]
		if g.Names[i] == "" {
			g.Names[i] = ids[i]
		}
		taken[foldSymbol(g.Names[i])] = true
	}
	first := make(map[string]bool, len(ids))
	next := make(map[string]int)
	for i, name := range g.Names {
		key := foldSymbol(name)
		if !first[key] {
			first[key] = true
			g.Symbols[i] = name
			continue
		}
		for {
			next[key]++
			s := name + "-" + strconv.Itoa(next[key])
			if !taken[foldSymbol(s)] {
				taken[foldSymbol(s)] = true
				g.Symbols[i] = s
				break
			}
		}
	}
	return g
}

// Len returns the number of genes.
func (g Genes) Len() int { return len(g.IDs) }
