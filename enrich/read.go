package enrich

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"scpipe/internal/infile"
)

// Output is an output folder of Run read back: its settings and programs
// (enrich.log and index.tsv) and where its enrichment tables are. Readers
// of the folder (scpipe report) use it so that they and Run cannot drift
// apart.
type Output struct {
	Dir        string
	Run        string  // the run directory as Run was given it
	Threshold  float64 // the posterior mean at or above which genes and cells count
	Background string
	Organism   string
	// Hierarchy is how the hierarchy was built; HierarchyOverlap for an
	// output whose log does not say (written before there was a choice).
	Hierarchy HierarchyMethod
	Libraries []string // the GMT files, as given
	Notes     []string // the log's notes on the inputs
	Index     []IndexRow
	// Enrichment lists the tables in enrichment/, one per library, by
	// name.
	Enrichment []EnrichmentFile
}

// IndexRow is one row of index.tsv.
type IndexRow struct {
	L, Code       int
	Program       string
	Status        Status
	Genes, Unique int
	Cells         int
	CellFrac      float64
	Stability     float64 // NaN where index.tsv says NA
	GenesFile     string  // relative to the folder; "" for no program
	UniqueFile    string
	MembersFile   string
}

// EnrichmentFile is one library's table in an output folder.
type EnrichmentFile struct {
	Library string // the library's name: the file's name without .tsv
	Path    string
}

// ReadOutput reads the log and index of an output folder of Run and lists
// its enrichment tables. A folder that is not such an output is an error
// naming the file that is missing or malformed.
func ReadOutput(dir string) (*Output, error) {
	out := &Output{Dir: dir, Hierarchy: HierarchyOverlap}
	if err := infile.Dir(dir); err != nil {
		return nil, fmt.Errorf("enrich: %w", err)
	}
	if err := out.readLog(filepath.Join(dir, LogFile)); err != nil {
		return nil, err
	}
	if err := out.readIndex(filepath.Join(dir, IndexFile)); err != nil {
		return nil, err
	}
	es, err := os.ReadDir(filepath.Join(dir, EnrichmentDir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("enrich: %w", err)
	}
	for _, e := range es {
		if name, ok := strings.CutSuffix(e.Name(), ".tsv"); ok && e.Type().IsRegular() {
			out.Enrichment = append(out.Enrichment, EnrichmentFile{name, filepath.Join(dir, EnrichmentDir, e.Name())})
		}
	}
	return out, nil
}

// readLog reads the settings of enrich.log: a first line naming scpipe
// enrich, then key<TAB>value lines.
func (o *Output) readLog(path string) error {
	f, err := infile.Open(path)
	if err != nil {
		return fmt.Errorf("enrich: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() || sc.Text() != "scpipe enrich" {
		return fmt.Errorf("enrich: %s: not a log of scpipe enrich (its first line is not \"scpipe enrich\")", path)
	}
	threshold := false
	for sc.Scan() {
		key, value, _ := strings.Cut(sc.Text(), "\t")
		switch key {
		case "run":
			o.Run = value
		case "threshold":
			if o.Threshold, err = strconv.ParseFloat(value, 64); err != nil {
				return fmt.Errorf("enrich: %s: threshold %q: %w", path, value, err)
			}
			threshold = true
		case "background":
			o.Background = value
		case "organism":
			o.Organism = value
		case "hierarchy":
			if o.Hierarchy, err = ParseHierarchyMethod(value); err != nil {
				return fmt.Errorf("enrich: %s: %w", path, err)
			}
		case "library":
			o.Libraries = append(o.Libraries, value)
		case "note":
			o.Notes = append(o.Notes, value)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("enrich: %s: %w", path, err)
	}
	if !threshold {
		return fmt.Errorf("enrich: %s: no threshold line", path)
	}
	return nil
}

// indexColumns are the columns of index.tsv ReadOutput needs.
var indexColumns = []string{"L", "code", "program", "status", "n_genes", "n_unique", "n_cells", "frac_cells",
	"stability", "genes_file", "unique_file", "members_file"}

func (o *Output) readIndex(path string) error {
	return readTSV(path, indexColumns, func(f []string) error {
		var r IndexRow
		var err error
		ints := []*int{&r.L, &r.Code, nil, nil, &r.Genes, &r.Unique, &r.Cells}
		for i, p := range ints {
			if p != nil {
				if *p, err = strconv.Atoi(f[i]); err != nil {
					return fmt.Errorf("column %s: %w", indexColumns[i], err)
				}
			}
		}
		r.Program, r.Status = f[2], Status(f[3])
		if r.CellFrac, err = parseNum(f[7]); err != nil {
			return fmt.Errorf("column frac_cells: %w", err)
		}
		if r.Stability, err = parseNum(f[8]); err != nil {
			return fmt.Errorf("column stability: %w", err)
		}
		r.GenesFile, r.UniqueFile, r.MembersFile = notNA(f[9]), notNA(f[10]), notNA(f[11])
		o.Index = append(o.Index, r)
		return nil
	})
}

// Term is one row of an enrichment table (enrichment/LIBRARY.tsv).
type Term struct {
	Program string // L06_code3
	L, Code int
	Query   string // "all" or "unique"
	Term    string
	// Overlap is the query's genes in the set, SetSize the set's genes in
	// the background (the table's Overlap, k/K).
	Overlap, SetSize    int
	P, AdjP             float64
	OddsRatio, Combined float64
	Genes               []string // the overlap
}

// enrichmentColumns are the columns of an enrichment table, in order.
var enrichmentColumns = []string{"Program", "L", "Code", "Query", "Term", "Overlap", "P-value", "Adjusted P-value",
	"Odds Ratio", "Combined Score", "Genes"}

// ReadTopTerms reads an enrichment table of Run, keeping the first k rows
// of each program and query: its best terms, since the table is sorted by
// adjusted p within them. It streams the file, so that a library of
// thousands of sets tested against every program costs the memory of the
// rows kept.
func ReadTopTerms(path string, k int) ([]Term, error) {
	var (
		terms     []Term
		last      string
		kept      int
		lastQuery string
	)
	err := readTSV(path, enrichmentColumns, func(f []string) error {
		if f[0] != last || f[3] != lastQuery {
			last, lastQuery, kept = f[0], f[3], 0
		}
		if kept >= k {
			return nil
		}
		kept++
		t := Term{Program: f[0], Query: f[3], Term: f[4]}
		var err error
		if t.L, err = strconv.Atoi(f[1]); err != nil {
			return fmt.Errorf("column L: %w", err)
		}
		if t.Code, err = strconv.Atoi(f[2]); err != nil {
			return fmt.Errorf("column Code: %w", err)
		}
		a, b, ok := strings.Cut(f[5], "/")
		t.Overlap, err = strconv.Atoi(a)
		if err == nil {
			t.SetSize, err = strconv.Atoi(b)
		}
		if !ok || err != nil {
			return fmt.Errorf("column Overlap: %q, want k/K", f[5])
		}
		for i, p := range []*float64{&t.P, &t.AdjP, &t.OddsRatio, &t.Combined} {
			if *p, err = parseNum(f[6+i]); err != nil {
				return fmt.Errorf("column %s: %w", enrichmentColumns[6+i], err)
			}
		}
		if f[10] != "" {
			t.Genes = strings.Split(f[10], ";")
		}
		terms = append(terms, t)
		return nil
	})
	return terms, err
}

// readTSV reads a tab-separated file whose header starts with columns,
// calling row with the fields of each line (as many as the header has).
func readTSV(path string, columns []string, row func(fields []string) error) error {
	f, err := infile.Open(path)
	if err != nil {
		return fmt.Errorf("enrich: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	header, err := readLine(r)
	if err != nil {
		return fmt.Errorf("enrich: %s: no header line: %w", path, err)
	}
	names := strings.Split(header, "\t")
	if len(names) < len(columns) || !slices.Equal(names[:len(columns)], columns) {
		return fmt.Errorf("enrich: %s: header %q, want it to start with %q", path, header, strings.Join(columns, "\t"))
	}
	for n := 2; ; n++ {
		line, err := readLine(r)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("enrich: %s: %w", path, err)
		}
		if line == "" {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != len(names) {
			return fmt.Errorf("enrich: %s line %d: %d fields, the header has %d", path, n, len(fields), len(names))
		}
		if err := row(fields); err != nil {
			return fmt.Errorf("enrich: %s line %d: %w", path, n, err)
		}
	}
}

// readLine reads one line of any length without its line end.
func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err == io.EOF && line != "" {
		err = nil
	}
	return strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r"), err
}

// parseNum reads a float as num writes it.
func parseNum(s string) (float64, error) {
	switch s {
	case "NA":
		return math.NaN(), nil
	case "Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	}
	return strconv.ParseFloat(s, 64)
}

func notNA(s string) string {
	if s == "NA" {
		return ""
	}
	return s
}
