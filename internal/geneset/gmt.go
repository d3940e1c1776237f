package geneset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"scpipe/internal/infile"
)

// GeneSet is one line of a GMT library: a named set of gene symbols.
type GeneSet struct {
	Name        string
	Description string
	// Genes are the symbols as the file writes them (weights removed), each
	// once: a symbol repeated on the line, in any case, keeps its first
	// spelling.
	Genes []string
}

// Library is a parsed GMT file.
type Library struct {
	Name string // the file's base name without .gmt, .gmt.gz, .txt or .gz
	Path string
	Sets []GeneSet
	// Empty counts the lines that name a set but list no gene; Repeated
	// the lines whose set name an earlier line already used. Both are
	// skipped (the first line of a name wins), and listed in Skips.
	Empty, Repeated int
	Skips           []Skip
}

// Skip is a line of a GMT library that names a set but was skipped: a
// caller that needs every set (fixed codes) refuses it.
type Skip struct {
	Line  int    // 1-based
	Name  string // the set's name
	First int    // the line that used Name first; 0 when the line lists no gene
}

// String says what the line is.
func (k Skip) String() string {
	if k.First == 0 {
		return fmt.Sprintf("line %d: set %q lists no gene", k.Line, k.Name)
	}
	return fmt.Sprintf("line %d: set %q repeats the name of line %d", k.Line, k.Name, k.First)
}

// maxLineBytes bounds a line of a GMT library: a set of a million genes
// of 15 characters. A gzipped file of a few megabytes can unpack into a
// line of gigabytes, which was read whole (6 GB and 45 s for 3 GB).
const maxLineBytes = 16 << 20

// ReadGMTFile reads the GMT library at path, gzip-compressed or not (told
// by the content, not the name). Errors name the file and the line.
func ReadGMTFile(path string) (*Library, error) {
	f, err := infile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("geneset: gene-set library: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	var r io.Reader = br
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("geneset: %s: gzip: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	lib, err := ReadGMT(r, path)
	if err != nil {
		return nil, err
	}
	lib.Name = libraryName(path)
	return lib, nil
}

// libraryName is the base name of a library file without its extensions.
func libraryName(path string) string {
	name := filepath.Base(path)
	name = strings.TrimSuffix(name, ".gz")
	for _, ext := range []string{".gmt", ".txt", ".tsv"} {
		name = strings.TrimSuffix(name, ext)
	}
	return name
}

// ReadGMT parses a GMT library from r; path names it in errors.
//
// The format is Broad's (one set per line: name, description, genes, tab
// separated), read in every dialect Enrichr and MSigDB files come in: CRLF
// line ends, empty descriptions, empty fields from trailing or doubled tabs,
// Enrichr's weighted genes "GENE,1.0" (the weight is dropped), and genes
// repeated on a line. Blank lines and lines starting with '#' are skipped;
// a line without a tab, or with an empty set name, is an error. A library
// with no set that lists a gene is an error.
func ReadGMT(r io.Reader, path string) (*Library, error) {
	lib := &Library{Name: libraryName(path), Path: path}
	seen := make(map[string]int) // set name -> line
	br := bufio.NewReaderSize(r, 1<<16)
	infile.SkipBOM(br)
	lineNo := 0
	for {
		line, err := readLine(br, maxLineBytes)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("geneset: %s line %d: %w", path, lineNo+1, err)
		}
		if line == "" && err != nil {
			break
		}
		lineNo++
		set, ok, perr := parseGMTLine(line)
		if perr != nil {
			return nil, fmt.Errorf("geneset: %s line %d: %w", path, lineNo, perr)
		}
		switch {
		case !ok:
		case len(set.Genes) == 0:
			lib.Empty++
			lib.Skips = append(lib.Skips, Skip{Line: lineNo, Name: set.Name})
		case seen[set.Name] > 0:
			lib.Repeated++
			lib.Skips = append(lib.Skips, Skip{Line: lineNo, Name: set.Name, First: seen[set.Name]})
		default:
			seen[set.Name] = lineNo
			lib.Sets = append(lib.Sets, set)
		}
		if err != nil {
			break
		}
	}
	if len(lib.Sets) == 0 {
		return nil, fmt.Errorf("geneset: %s: no usable gene set in %d lines (want name<TAB>description<TAB>gene<TAB>gene…; %d lines name a set with no gene)",
			path, lineNo, lib.Empty)
	}
	return lib, nil
}

// readLine reads a line of at most max bytes, its end included: the last
// line may lack one, and then comes with io.EOF.
func readLine(br *bufio.Reader, max int) (string, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		if len(line)+len(part) > max {
			return "", fmt.Errorf("longer than %d bytes (a binary or damaged file?)", max)
		}
		line = append(line, part...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return string(line), err
		}
	}
}

// parseGMTLine parses one line; ok is false for lines to skip.
func parseGMTLine(line string) (set GeneSet, ok bool, err error) {
	line = strings.TrimRight(line, "\r\n")
	if t := strings.TrimSpace(line); t == "" || t[0] == '#' {
		return set, false, nil
	}
	name, rest, found := strings.Cut(line, "\t")
	if !found {
		return set, false, fmt.Errorf("no tab: want name<TAB>description<TAB>gene<TAB>gene…, got %q", clip(line))
	}
	set.Name = strings.TrimSpace(name)
	if set.Name == "" {
		return set, false, errors.New("empty gene-set name")
	}
	desc, genes, _ := strings.Cut(rest, "\t")
	set.Description = strings.TrimSpace(desc)
	seen := make(map[string]bool)
	for field := range strings.SplitSeq(genes, "\t") {
		g := geneField(field)
		if g == "" {
			continue
		}
		if key := Fold(g); !seen[key] {
			seen[key] = true
			set.Genes = append(set.Genes, g)
		}
	}
	return set, true, nil
}

// geneField returns the symbol of one gene field: trimmed, and without an
// Enrichr weight (",1.0"). A comma followed by something other than a number
// is part of the symbol. Cutting at the first comma keeps the result stable:
// a symbol written back and read again is the same symbol.
func geneField(f string) string {
	f = strings.TrimSpace(f)
	if i := strings.IndexByte(f, ','); i >= 0 {
		if _, err := strconv.ParseFloat(strings.TrimSpace(f[i+1:]), 64); err == nil {
			f = strings.TrimSpace(f[:i])
		}
	}
	return f
}

// Fold is the key under which symbols are compared: case-insensitive,
// so that mouse symbols (Cd3e) match human ones (CD3E) and libraries in
// either convention match the run.
func Fold(s string) string { return strings.ToUpper(s) }

// clip shortens s for an error message.
func clip(s string) string {
	const n = 60
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// WriteGMT writes sets as GMT lines: name, description, genes, tab
// separated, "\n" line ends.
func WriteGMT(w io.Writer, sets []GeneSet) error {
	bw := bufio.NewWriter(w)
	for _, s := range sets {
		bw.WriteString(s.Name)
		bw.WriteByte('\t')
		bw.WriteString(s.Description)
		for _, g := range s.Genes {
			bw.WriteByte('\t')
			bw.WriteString(g)
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
