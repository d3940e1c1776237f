package simulate

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"scpipe/internal/infile"
)

// Planted is a simulation's planted truth read back from its truth folder
// (programs.tsv and usage.tsv): which programs each gene belongs to and
// each cell uses, as bit sets (bit l: program_{l+1}).
type Planted struct {
	L        int
	GeneIDs  []string
	Genes    []uint64
	Barcodes []string
	Cells    []uint64
	// Seed is the simulation's seed from truth.json; nil in a truth
	// folder without one.
	Seed *uint64
}

// Clean reports whether the noise-free entry of cell n and gene g is 1: a
// program of the cell covers the gene.
func (p *Planted) Clean(n, g int) bool { return p.Cells[n]&p.Genes[g] != 0 }

// ReadTruth reads the truth folder dir that WriteMTX and WriteShards write
// (OUT/truth).
func ReadTruth(dir string) (*Planted, error) {
	p := &Planted{}
	err := infile.Dir(dir)
	if err != nil {
		return nil, fmt.Errorf("simulate: truth: %w", err)
	}
	if p.GeneIDs, p.Genes, p.L, err = readMembership(filepath.Join(dir, ProgramsFile), "gene_id", 2); err != nil {
		return nil, err
	}
	var L int
	if p.Barcodes, p.Cells, L, err = readMembership(filepath.Join(dir, usageFile), "barcode", 1); err != nil {
		return nil, err
	}
	if L != p.L {
		return nil, fmt.Errorf("simulate: %s has %d programs, %s %d", usageFile, L, ProgramsFile, p.L)
	}
	if p.Seed, err = readSeed(filepath.Join(dir, TruthJSONFile)); err != nil {
		return nil, err
	}
	return p, nil
}

// readSeed reads the seed of the parameters in truth.json at path: nil
// when there is no such file.
func readSeed(path string) (*uint64, error) {
	b, err := infile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("simulate: truth: %w", err)
	}
	var sum struct {
		Params struct{ Seed *uint64 } `json:"params"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		return nil, fmt.Errorf("simulate: truth %s: %w", path, err)
	}
	return sum.Params.Seed, nil
}

// readMembership reads a table whose first column (named first) is an id,
// whose first lead columns are annotations, and whose other columns,
// program_1 … program_L, are 0 or 1.
func readMembership(path, first string, lead int) (ids []string, sets []uint64, L int, err error) {
	f, err := infile.Open(path)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("simulate: truth: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<26)
	bad := func(line int, format string, a ...any) error {
		return fmt.Errorf("simulate: truth %s line %d: %s", path, line, fmt.Sprintf(format, a...))
	}
	if !sc.Scan() {
		return nil, nil, 0, fmt.Errorf("simulate: truth %s: empty file", path)
	}
	header := strings.Split(sc.Text(), "\t")
	L = len(header) - lead
	if header[0] != first || L < 1 || L > 64 {
		return nil, nil, 0, bad(1, "header %q: want %s, then program_1 … program_L (L ≤ 64)", sc.Text(), first)
	}
	for l, h := range header[lead:] {
		if h != fmt.Sprintf("program_%d", l+1) {
			return nil, nil, 0, bad(1, "column %d is %q, want program_%d", lead+l+1, h, l+1)
		}
	}
	for line := 2; sc.Scan(); line++ {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != len(header) {
			return nil, nil, 0, bad(line, "%d fields, the header has %d", len(fields), len(header))
		}
		var set uint64
		for l, v := range fields[lead:] {
			switch v {
			case "1":
				set |= 1 << l
			case "0":
			default:
				return nil, nil, 0, bad(line, "program_%d is %q, want 0 or 1", l+1, v)
			}
		}
		ids, sets = append(ids, fields[0]), append(sets, set)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, 0, fmt.Errorf("simulate: truth %s: %w", path, err)
	}
	return ids, sets, L, nil
}
