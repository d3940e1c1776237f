package enrich

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"scpipe/internal/outlock"
	"scpipe/internal/rundir"
)

// The files and folders of an enrich output (README.md in this folder
// describes their columns).
const (
	IndexFile     = "index.tsv"           // one row per (L, code)
	chainsFile    = "chains.tsv"          // one row per (L, code, chain)
	GMTFile       = "programs.gmt"        // every program of every L
	uniqueGMTFile = "programs_unique.gmt" // the unique genes of every program that has some
	topGMTFile    = "programs_top.gmt"    // the top genes of every program, by score
	fdrGMTFile    = "programs_fdr.gmt"    // every program's gene set at the false discovery rate
	HierarchyTSV  = "hierarchy.tsv"       // one row per program: order, parent, event
	HierarchyJSON = "hierarchy.json"      // nodes, edges and the gene order
	LogFile       = "enrich.log"          // settings and notes on the inputs
	genesDir      = "genes"               // per program: NAME.txt, NAME.unique.txt, NAME.tsv, NAME.top.txt, NAME.top.tsv, NAME.fdr.txt
	EnrichmentDir = "enrichment"          // per library: LIBRARY.tsv
)

// programFiles returns the files of a program, relative to the output:
// all genes, unique genes (one symbol per line) and the members table.
func programFiles(p *Program) (all, unique, members string) {
	base := filepath.Join(genesDir, p.Name())
	return base + ".txt", base + ".unique.txt", base + ".tsv"
}

// rankFiles returns a program's files of ranked genes, relative to the
// output: its top genes (one symbol per line, and as a table with their
// scores) and its set at the false discovery rate.
func rankFiles(p *Program) (top, topTable, fdr string) {
	base := filepath.Join(genesDir, p.Name())
	return base + ".top.txt", base + ".top.tsv", base + ".fdr.txt"
}

// writeOutputs writes rep into a temporary folder beside o.Out and
// installs it there (outlock.CommitDir: o.Out locked meanwhile, a killed
// writer's temporaries removed, an existing o.Out replaced only with
// o.Force). Once ctx is done it stops and installs nothing.
func writeOutputs(ctx context.Context, o Options, rep *Report) error {
	return outlock.CommitDir(o.Out, "enrich", o.Force, o.Log, func(tmp string) error { return writeAll(ctx, tmp, o, rep) })
}

// outFile is one output file and what writes it.
type outFile struct {
	name  string // relative to the output folder
	write func(w *bufio.Writer)
}

// writeAll writes every output file under dir, unless ctx is done first.
func writeAll(ctx context.Context, dir string, o Options, rep *Report) error {
	for _, sub := range []string{genesDir, EnrichmentDir} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			return fmt.Errorf("enrich: %w", err)
		}
	}
	files := []outFile{
		{IndexFile, func(w *bufio.Writer) { writeIndex(w, rep) }},
		{chainsFile, func(w *bufio.Writer) { writeChains(w, rep) }},
		{GMTFile, func(w *bufio.Writer) { writeProgramsGMT(w, rep, false) }},
		{uniqueGMTFile, func(w *bufio.Writer) { writeProgramsGMT(w, rep, true) }},
		{topGMTFile, func(w *bufio.Writer) {
			writeSetsGMT(w, rep, "top", func(p *Program) []int { return rankedGenes(p.Top) })
		}},
		{fdrGMTFile, func(w *bufio.Writer) { writeSetsGMT(w, rep, "fdr", func(p *Program) []int { return p.FDRGenes }) }},
		{HierarchyTSV, func(w *bufio.Writer) { writeHierarchyTSV(w, rep.Hierarchy) }},
		{LogFile, func(w *bufio.Writer) { writeLog(w, o, rep) }},
	}
	for _, lib := range rep.Enrichment {
		files = append(files, outFile{lib.File, func(w *bufio.Writer) { writeEnrichment(w, lib, rep.Genes) }})
	}
	for _, lv := range rep.Levels {
		for i := range lv.Programs {
			p := &lv.Programs[i]
			if p.Status != StatusProgram {
				continue
			}
			all, unique, members := programFiles(p)
			files = append(files,
				outFile{all, func(w *bufio.Writer) { writeSymbols(w, p.Genes, rep.Genes) }},
				outFile{unique, func(w *bufio.Writer) { writeSymbols(w, p.Unique, rep.Genes) }},
				outFile{members, func(w *bufio.Writer) { writeMembers(w, p, rep.Genes) }})
			top, topTable, fdr := rankFiles(p)
			files = append(files,
				outFile{top, func(w *bufio.Writer) { writeSymbols(w, rankedGenes(p.Top), rep.Genes) }},
				outFile{topTable, func(w *bufio.Writer) { writeTop(w, p, rep.Genes) }},
				outFile{fdr, func(w *bufio.Writer) { writeSymbols(w, p.FDRGenes, rep.Genes) }})
		}
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("enrich: %w", err)
		}
		if err := writeFile(filepath.Join(dir, f.name), f.write); err != nil {
			return err
		}
	}
	js, err := hierarchyJSON(rep)
	if err != nil {
		return fmt.Errorf("enrich: %s: %w", HierarchyJSON, err)
	}
	if err := writeFile(filepath.Join(dir, HierarchyJSON), func(w *bufio.Writer) { w.Write(js) }); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil { // the last look before the folder is installed
		return fmt.Errorf("enrich: %w", err)
	}
	return nil
}

// writeFile writes and syncs one file of the temporary output folder,
// buffered (outlock.WriteFile). The folder as a whole is renamed into
// place, so the file needs no rename of its own.
func writeFile(path string, write func(w *bufio.Writer)) error {
	err := outlock.WriteFile(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		write(bw)
		return bw.Flush()
	})
	if err != nil {
		return fmt.Errorf("enrich: %w", err)
	}
	return nil
}

// tsv writes one tab-separated line, each field quoted where pandas'
// read_csv(sep="\t") needs it (rundir.TSVField): library terms and gene
// names may hold a double quote.
func tsv(w *bufio.Writer, fields ...string) {
	w.WriteString(rundir.TSVLine(fields...))
}

// num formats a float as rundir's summary.tsv does: the shortest decimal
// that reads back exactly, NA for NaN.
func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NA"
	case math.IsInf(v, 1):
		return "Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case v == 0:
		return "0" // not -0: −ln(1) × an odds ratio
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func itoa(v int) string { return strconv.Itoa(v) }

// orNA returns s, or NA when s is empty.
func orNA(s string) string {
	if s == "" {
		return "NA"
	}
	return s
}

// indexTopGenes is how many of a program's top genes index.tsv lists.
const indexTopGenes = 20

func writeIndex(w *bufio.Writer, rep *Report) {
	tsv(w, "L", "code", "program", "status", "n_genes", "n_unique", "n_cells", "frac_cells", "stability",
		"genes_file", "unique_file", "members_file", "n_fdr", "fdr_rate", "top_genes", "top_file", "top_table", "fdr_file")
	for _, lv := range rep.Levels {
		for i := range lv.Programs {
			p := &lv.Programs[i]
			all, unique, members := programFiles(p)
			top, topTable, fdr := rankFiles(p)
			if p.Status != StatusProgram {
				all, unique, members, top, topTable, fdr = "", "", "", "", "", ""
			}
			var lead []string // unique symbols, as in every table
			for _, r := range p.Top[:min(indexTopGenes, len(p.Top))] {
				lead = append(lead, rep.Genes.Symbols[r.Gene])
			}
			tsv(w, itoa(p.L), itoa(p.Code), p.Name(), string(p.Status), itoa(len(p.Genes)), itoa(len(p.Unique)),
				itoa(p.Cells), num(p.CellFrac), num(p.Stability), orNA(all), orNA(unique), orNA(members),
				itoa(len(p.FDRGenes)), num(p.FDRRate), orNA(strings.Join(lead, ",")),
				orNA(top), orNA(topTable), orNA(fdr))
		}
	}
}

// writeTop writes a program's top genes with their scores.
func writeTop(w *bufio.Writer, p *Program, genes Genes) {
	tsv(w, "rank", "symbol", "gene_id", "score", "posterior_mean", "housekeeping")
	for i, r := range p.Top {
		hk := "FALSE"
		if r.Housekeeping {
			hk = "TRUE"
		}
		tsv(w, itoa(i+1), genes.Symbols[r.Gene], genes.IDs[r.Gene], num(r.Score), num(r.Mean), hk)
	}
}

// writeSetsGMT writes one GMT line per program with the genes set(p)
// gives it, the set's kind (top or fdr) in the description, programs with
// none left out.
func writeSetsGMT(w *bufio.Writer, rep *Report, kind string, set func(*Program) []int) {
	var sets []GeneSet
	for _, lv := range rep.Levels {
		for i := range lv.Programs {
			p := &lv.Programs[i]
			if genes := set(p); p.Status == StatusProgram && len(genes) > 0 {
				desc := fmt.Sprintf("scpipe L=%d code=%d %s=%d cells=%d stability=%s",
					p.L, p.Code, kind, len(genes), p.Cells, num(p.Stability))
				if kind == "fdr" {
					desc += " expected_fdp=" + num(p.FDRRate)
				}
				sets = append(sets, GeneSet{Name: p.Name(), Description: desc, Genes: Symbols(rep.Genes, genes)})
			}
		}
	}
	WriteGMT(w, sets)
}

func writeChains(w *bufio.Writer, rep *Report) {
	tsv(w, "L", "code", "program", "chain", "chain_code", "jaccard", "n_genes", "n_unique", "n_cells")
	for _, lv := range rep.Levels {
		for i := range lv.Programs {
			p := &lv.Programs[i]
			for _, c := range p.Chains {
				tsv(w, itoa(p.L), itoa(p.Code), p.Name(), itoa(c.Chain), itoa(c.Code), num(c.Jaccard),
					itoa(c.Genes), itoa(c.Unique), itoa(c.Cells))
			}
		}
	}
}

// writeProgramsGMT writes every program as a GMT line, or with unique only
// its unique genes (programs without any left out).
func writeProgramsGMT(w *bufio.Writer, rep *Report, unique bool) {
	var sets []GeneSet
	for _, lv := range rep.Levels {
		for i := range lv.Programs {
			p := &lv.Programs[i]
			genes := p.Genes
			if unique {
				genes = p.Unique
			}
			if p.Status != StatusProgram || len(genes) == 0 {
				continue
			}
			desc := fmt.Sprintf("scpipe L=%d code=%d genes=%d unique=%d cells=%d stability=%s",
				p.L, p.Code, len(p.Genes), len(p.Unique), p.Cells, num(p.Stability))
			sets = append(sets, GeneSet{Name: p.Name(), Description: desc, Genes: Symbols(rep.Genes, genes)})
		}
	}
	WriteGMT(w, sets)
}

// writeSymbols writes an Enrichr list: the library symbols, one a line.
func writeSymbols(w *bufio.Writer, idx []int, genes Genes) {
	for _, s := range Symbols(genes, idx) {
		w.WriteString(s)
		w.WriteByte('\n')
	}
}

func writeMembers(w *bufio.Writer, p *Program, genes Genes) {
	tsv(w, "symbol", "gene_id", "posterior_mean", "support", "unique")
	uniq := make(map[int]bool, len(p.Unique))
	for _, g := range p.Unique {
		uniq[g] = true
	}
	for i, g := range p.Genes {
		u := "FALSE"
		if uniq[g] {
			u = "TRUE"
		}
		tsv(w, genes.Symbols[g], genes.IDs[g], num(p.Mean[i]), num(p.Support[i]), u)
	}
}

// writeEnrichment writes one library's results with Enrichr's and gseapy's
// columns after the program's.
func writeEnrichment(w *bufio.Writer, lib LibraryResults, genes Genes) {
	tsv(w, "Program", "L", "Code", "Query", "Term", "Overlap", "P-value", "Adjusted P-value", "Odds Ratio", "Combined Score", "Genes")
	for _, t := range lib.Tests {
		for _, r := range t.Results {
			hits := make([]string, len(r.Genes))
			for i, q := range r.Genes {
				hits[i] = genes.Symbols[t.Genes[q]]
			}
			tsv(w, t.Program.Name(), itoa(t.Program.L), itoa(t.Program.Code), t.Query, r.Term,
				itoa(r.Overlap)+"/"+itoa(r.TermSize), num(r.P()), num(r.Q()), num(r.OddsRatio), num(r.CombinedScore),
				strings.Join(hits, ";"))
		}
	}
}

func writeHierarchyTSV(w *bufio.Writer, h *Hierarchy) {
	tsv(w, "L", "code", "program", "order", "n_genes", "event", "parent", "containment", "jaccard", "parents", "children", "link")
	for _, n := range h.Nodes {
		tsv(w, itoa(n.L), itoa(n.Code), n.Name(), itoa(n.Order+1), itoa(n.Genes), string(n.Event), orNA(n.Parent),
			num(n.Containment), num(n.Jaccard), orNA(strings.Join(n.Parents, ";")), orNA(strings.Join(n.Children, ";")),
			num(n.Link))
	}
}

func writeLog(w *bufio.Writer, o Options, rep *Report) {
	fmt.Fprintf(w, "scpipe enrich\n")
	fmt.Fprintf(w, "run\t%s\nthreshold\t%v\nbackground\t%s\norganism\t%s\nhierarchy\t%s\n", o.Run, o.Threshold, o.Background, rep.Organism, rep.Hierarchy.Method)
	for _, l := range o.Libraries {
		fmt.Fprintf(w, "library\t%s\n", l)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note\t%s\n", n)
	}
}

// jsonFloat is a float that encodes NaN as null.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(f), 'g', -1, 64), nil
}

func hierarchyJSON(rep *Report) ([]byte, error) {
	type node struct {
		Program     string    `json:"program"`
		L           int       `json:"L"`
		Code        int       `json:"code"`
		Order       int       `json:"order"`
		Genes       int       `json:"n_genes"`
		Cells       int       `json:"n_cells"`
		Stability   jsonFloat `json:"stability"`
		Event       Event     `json:"event"`
		Parent      *string   `json:"parent"`
		Containment jsonFloat `json:"containment"`
		Jaccard     jsonFloat `json:"jaccard"`
		Parents     []string  `json:"parents"`
		Children    []string  `json:"children"`
		Link        jsonFloat `json:"link"`
	}
	type edge struct {
		From     string    `json:"from"`
		To       string    `json:"to"`
		Shared   int       `json:"shared"`
		ToInFrom jsonFloat `json:"to_in_from"`
		FromInTo jsonFloat `json:"from_in_to"`
		Jaccard  jsonFloat `json:"jaccard"`
		Link     jsonFloat `json:"link"`
	}
	type gene struct {
		Symbol string `json:"symbol"`
		ID     string `json:"gene_id"`
	}
	cells := make(map[string]*Program)
	var Ls []int
	for _, lv := range rep.Levels {
		Ls = append(Ls, lv.L)
		for i := range lv.Programs {
			cells[lv.Programs[i].Name()] = &lv.Programs[i]
		}
	}
	doc := struct {
		L      []int           `json:"L"`
		Method HierarchyMethod `json:"method"`
		Nodes  []node          `json:"nodes"`
		Edges  []edge          `json:"edges"`
		Genes  []gene          `json:"genes"`
	}{L: Ls, Method: rep.Hierarchy.Method, Nodes: []node{}, Edges: []edge{}, Genes: []gene{}}
	for _, n := range rep.Hierarchy.Nodes {
		p := cells[n.Name()]
		jn := node{Program: n.Name(), L: n.L, Code: n.Code, Order: n.Order + 1, Genes: n.Genes, Cells: p.Cells,
			Stability: jsonFloat(p.Stability), Event: n.Event, Containment: jsonFloat(n.Containment),
			Jaccard: jsonFloat(n.Jaccard), Parents: nonNil(n.Parents), Children: nonNil(n.Children), Link: jsonFloat(n.Link)}
		if n.Parent != "" {
			jn.Parent = &n.Parent
		}
		doc.Nodes = append(doc.Nodes, jn)
	}
	for _, e := range rep.Hierarchy.Edges {
		doc.Edges = append(doc.Edges, edge{e.From, e.To, e.Shared, jsonFloat(e.ToInFrom), jsonFloat(e.FromInTo), jsonFloat(e.Jaccard), jsonFloat(e.Link)})
	}
	for _, g := range rep.Hierarchy.GeneOrder {
		doc.Genes = append(doc.Genes, gene{rep.Genes.Symbols[g], rep.Genes.IDs[g]})
	}
	js, err := json.MarshalIndent(doc, "", "  ")
	return append(js, '\n'), err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
