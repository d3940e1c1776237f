package enrich

import (
	"regexp"
	"slices"
	"strconv"
)

// Genes is the gene axis of a run (the rows of codes.parquet), with a
// symbol for each gene that no other gene shares.
type Genes struct {
	IDs []string // gene_id, e.g. the Ensembl id
	// Names is the symbol the input gives (gene_name), or the id where the
	// name is empty, as librarySymbol reads it: what libraries are matched
	// against, and what the Enrichr lists and GMT files hold.
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
		g.Names[i] = librarySymbol(g.Names[i])
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

// madeUnique matches a name that R's make.unique (Seurat's Read10X, and the
// files written from its objects) makes of a repeated symbol: the symbol, a
// dot and a count (TMBIM4.1).
var madeUnique = regexp.MustCompile(`^(.+)\.[1-9][0-9]*$`)

// versioned matches the stems whose ".N" is a version that belongs to the
// name (GENCODE's names of unnamed genes): GenBank accessions (AL627309.1,
// AC000061.1) and clone names (RP11-206L10.2, CTD-2331H12.4,
// XXbac-B461K10.4).
var versioned = regexp.MustCompile(`^([A-Z]{1,2}[0-9]{5,}|[A-Za-z0-9]+-[A-Z]?[0-9]+[A-Z][0-9]+)$`)

// librarySymbol returns the symbol that gene-set libraries (Enrichr, MSigDB)
// know a gene by, given its name in the input: the name less the ".N" that
// make.unique appended to a repeated symbol (TMBIM4.1 is TMBIM4), unless
// the stem is an accession or a clone name, whose ".N" is their own
// (AL627309.1 stays). Approved symbols (HGNC, MGI) hold no dot, so no
// symbol loses a part of its own; a suffix "-N" (scanpy's
// var_names_make_unique) is kept, since symbols such as NKX2-1 end so.
func librarySymbol(name string) string {
	m := madeUnique.FindStringSubmatch(name)
	if m == nil || versioned.MatchString(m[1]) {
		return name
	}
	return m[1]
}

// Symbols returns the library symbols (Names) of the genes idx, each once,
// in order: the lines of an Enrichr list or the genes of a GMT set, where
// two genes of one symbol (TMBIM4 and TMBIM4.1) are one entry.
func Symbols(g Genes, idx []int) []string {
	out := make([]string, 0, len(idx))
	seen := make(map[string]bool, len(idx))
	for _, i := range idx {
		if s := g.Names[i]; !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
