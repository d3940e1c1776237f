package geneset

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"scpipe/internal/testkit"
)

func TestReadGMTDialects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name            string
		in              string
		want            []GeneSet
		empty, repeated int
	}{
		{"plain", "A\tdesc\tG1\tG2\n", []GeneSet{{"A", "desc", []string{"G1", "G2"}}}, 0, 0},
		{"no final newline", "A\tdesc\tG1", []GeneSet{{"A", "desc", []string{"G1"}}}, 0, 0},
		{"CRLF", "A\td\tG1\tG2\r\nB\td\tG3\r\n", []GeneSet{{"A", "d", []string{"G1", "G2"}}, {"B", "d", []string{"G3"}}}, 0, 0},
		{"empty description (Enrichr)", "A\t\tG1\tG2\n", []GeneSet{{"A", "", []string{"G1", "G2"}}}, 0, 0},
		{"trailing and doubled tabs", "A\t\tG1\t\tG2\t\t\n", []GeneSet{{"A", "", []string{"G1", "G2"}}}, 0, 0},
		{"Enrichr weights", "A\t\tG1,1.0\tG2,0.25\tG3, 1e-3\n", []GeneSet{{"A", "", []string{"G1", "G2", "G3"}}}, 0, 0},
		{"comma without a weight is part of the symbol", "A\t\tG1,x\tG2,1.0,2\n", []GeneSet{{"A", "", []string{"G1,x", "G2,1.0,2"}}}, 0, 0},
		{"duplicate genes, first spelling kept", "A\t\tCd3e\tG1\tCD3E\tG1,1.0\tcd3e\n", []GeneSet{{"A", "", []string{"Cd3e", "G1"}}}, 0, 0},
		{"mixed case reported as given", "A\t\tActb\tGAPDH\tmt-Co1\n", []GeneSet{{"A", "", []string{"Actb", "GAPDH", "mt-Co1"}}}, 0, 0},
		{"spaces around fields", " A \t d \t G1 \t G2\n", []GeneSet{{"A", "d", []string{"G1", "G2"}}}, 0, 0},
		{"blank and comment lines", "\n# a comment\n  \nA\t\tG1\n\r\n", []GeneSet{{"A", "", []string{"G1"}}}, 0, 0},
		{"set with no gene skipped", "A\tdesc\nB\t\t\t\nC\t\tG1\n", []GeneSet{{"C", "", []string{"G1"}}}, 2, 0},
		{"repeated name: first wins", "A\t\tG1\nA\t\tG2\n", []GeneSet{{"A", "", []string{"G1"}}}, 0, 1},
		{"byte-order mark (Windows)", "\ufeffA\td\tG1\r\n", []GeneSet{{"A", "d", []string{"G1"}}}, 0, 0},
		{"byte-order mark before a comment", "\ufeff# c\nA\t\tG1\n", []GeneSet{{"A", "", []string{"G1"}}}, 0, 0},
		{"term names with spaces and ids", "T cell activation (GO:0042110)\t\tCD3E\n", []GeneSet{{"T cell activation (GO:0042110)", "", []string{"CD3E"}}}, 0, 0},
	} {
		lib, err := ReadGMT(strings.NewReader(tc.in), "lib.gmt")
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(lib.Sets, tc.want) || lib.Empty != tc.empty || lib.Repeated != tc.repeated || len(lib.Skips) != tc.empty+tc.repeated {
			t.Errorf("%s: sets %q (empty %d, repeated %d, skips %v), want %q (empty %d, repeated %d)",
				tc.name, lib.Sets, lib.Empty, lib.Repeated, lib.Skips, tc.want, tc.empty, tc.repeated)
		}
	}
}

// TestReadGMTSkips: the lines skipped are listed by line and name, so
// that fixed codes can refuse them and enrich name them.
func TestReadGMTSkips(t *testing.T) {
	t.Parallel()
	lib, err := ReadGMT(strings.NewReader("A\t\tG1\nB\tdesc\n# c\nA\t\tG2\nC\t\tG3\n"), "lib.gmt")
	if err != nil {
		t.Fatal(err)
	}
	want := []Skip{{Line: 2, Name: "B"}, {Line: 4, Name: "A", First: 1}}
	if !reflect.DeepEqual(lib.Skips, want) {
		t.Errorf("skips %v, want %v", lib.Skips, want)
	}
	if got := want[1].String(); got != `line 4: set "A" repeats the name of line 1` {
		t.Errorf("Skip.String: %s", got)
	}
}

// TestReadGMTLongLine: a line longer than maxLineBytes is an error naming
// the file and the line, read in bounded memory: a gzipped library of a
// few megabytes unpacking into one line of 3 GB was read whole (6 GB).
func TestReadGMTLongLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("A\t\tG1\nB\t\t"))
	chunk := bytes.Repeat([]byte("G\t"), 1<<19)
	for range maxLineBytes/len(chunk) + 1 {
		zw.Write(chunk)
	}
	zw.Close()
	path := filepath.Join(dir, "bomb.gmt.gz")
	if err := os.WriteFile(path, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadGMTFile(path)
	if err == nil || !strings.Contains(err.Error(), "bomb.gmt.gz line 2: longer than") {
		t.Errorf("a line over %d bytes: %v", maxLineBytes, err)
	}
	// A line just within the bound is read.
	long := "B\t\t" + strings.Repeat("G", maxLineBytes-8) + "\n"
	if lib, err := ReadGMT(strings.NewReader(long), "lib.gmt"); err != nil || len(lib.Sets) != 1 {
		t.Errorf("a line of %d bytes: %v", len(long), err)
	}
}

func TestReadGMTErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		want     []string // substrings of the error
	}{
		{"empty file", "", []string{"lib.gmt", "no usable gene set in 0 lines"}},
		{"only blank lines", "\n\n", []string{"lib.gmt", "no usable gene set in 2 lines"}},
		{"only empty sets", "A\tdesc\nB\t\n", []string{"lib.gmt", "no usable gene set", "2 lines name a set with no gene"}},
		{"no tab", "A\t\tG1\nG1 G2 G3\n", []string{"lib.gmt line 2", "no tab", "G1 G2 G3"}},
		{"a gene list, not a GMT", "CD3E\nCD4\n", []string{"lib.gmt line 1", "no tab"}},
		{"empty name", "A\t\tG1\n\tdesc\tG2\n", []string{"lib.gmt line 2", "empty gene-set name"}},
	} {
		_, err := ReadGMT(strings.NewReader(tc.in), "lib.gmt")
		testkit.ErrorSays(t, tc.name, err, tc.want)
	}
}

func TestReadGMTFileGzip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	text := "A\t\tG1\tG2\r\nB\tdesc\tG3,1.0\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(text))
	zw.Close()
	for _, f := range []struct {
		name string
		data []byte
	}{{"plain.gmt", []byte(text)}, {"packed.gmt.gz", gz.Bytes()}, {"gzip-without-suffix.gmt", gz.Bytes()}} {
		path := filepath.Join(dir, f.name)
		if err := os.WriteFile(path, f.data, 0o644); err != nil {
			t.Fatal(err)
		}
		lib, err := ReadGMTFile(path)
		if err != nil {
			t.Errorf("%s: %v", f.name, err)
			continue
		}
		want := []GeneSet{{"A", "", []string{"G1", "G2"}}, {"B", "desc", []string{"G3"}}}
		if !reflect.DeepEqual(lib.Sets, want) || lib.Path != path {
			t.Errorf("%s: %q (path %s), want %q", f.name, lib.Sets, lib.Path, want)
		}
	}
	for file, want := range map[string]string{"plain.gmt": "plain", "packed.gmt.gz": "packed", "x/GO_2022.txt": "GO_2022"} {
		if got := libraryName(file); got != want {
			t.Errorf("libraryName(%q) = %q, want %q", file, got, want)
		}
	}
	if _, err := ReadGMTFile(filepath.Join(dir, "missing.gmt")); err == nil || !strings.Contains(err.Error(), "missing.gmt") {
		t.Errorf("missing file: error %v does not name it", err)
	}
	bad := filepath.Join(dir, "truncated.gmt.gz")
	os.WriteFile(bad, gz.Bytes()[:len(gz.Bytes())/2], 0o644)
	if _, err := ReadGMTFile(bad); err == nil || !strings.Contains(err.Error(), "truncated.gmt.gz") {
		t.Errorf("truncated gzip: error %v does not name the file", err)
	}
}

// TestReadGMTSharedLibraries reads the libraries in ../shared/data/genesets,
// whose sizes its README states.
func TestReadGMTSharedLibraries(t *testing.T) {
	t.Parallel()
	dir := sharedGenesets(t)
	for _, tc := range []struct {
		file             string
		sets, minG, maxG int
	}{
		{"GO_Biological_Process_2022_human.gmt.gz", 5233, 15, 500},
		{"celltype-markers.gmt", 21, 1, 100},
	} {
		lib, err := ReadGMTFile(filepath.Join(dir, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if len(lib.Sets) != tc.sets || lib.Empty != 0 || lib.Repeated != 0 {
			t.Errorf("%s: %d sets (%d empty, %d repeated), want %d", tc.file, len(lib.Sets), lib.Empty, lib.Repeated, tc.sets)
		}
		for _, s := range lib.Sets {
			if len(s.Genes) < tc.minG || len(s.Genes) > tc.maxG {
				t.Errorf("%s: %s has %d genes, want %d..%d", tc.file, s.Name, len(s.Genes), tc.minG, tc.maxG)
			}
		}
	}
}

// sharedGenesets returns ../shared/data/genesets, skipping the test when the
// shared data is absent (never in CI).
func sharedGenesets(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "shared", "data", "genesets")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared data not found (%v): the real-file tests need ../shared/data beside the repository", err)
	}
	return dir
}

// FuzzReadGMT feeds the parser arbitrary bytes. It must never panic, and
// what it accepts must be well formed and survive being written with
// WriteGMT and read again unchanged.
func FuzzReadGMT(f *testing.F) {
	for _, seed := range []string{
		"A\tdesc\tG1\tG2\n",
		"A\t\tG1,1.0\tG2,0.5\r\nB\t\tg3\t\t\n",
		"# c\n\nA\td\tCd3e\tCD3E\tcd3e\n",
		"A\tdesc\n",
		"A\t\tG1\nA\t\tG2\n",
		"no tab here\n",
		"\tdesc\tG1\n",
		" A \t d \t G1, 2 \t,3\t,\n",
		"A\t\tG,1,2\tx,NaN\ty,Inf\n",
		"A\t\t\xff\xfe\tG\r\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lib, err := ReadGMT(bytes.NewReader(data), "fuzz.gmt")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "geneset: fuzz.gmt") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if len(lib.Sets) == 0 {
			t.Fatal("accepted a library with no set")
		}
		for _, s := range lib.Sets {
			if s.Name == "" || strings.ContainsAny(s.Name, "\t\n") || strings.ContainsAny(s.Description, "\t\n") || len(s.Genes) == 0 {
				t.Fatalf("malformed set %q", s)
			}
			seen := map[string]bool{}
			for _, g := range s.Genes {
				if g == "" || strings.ContainsAny(g, "\t\n") || seen[Fold(g)] {
					t.Fatalf("set %q: bad or repeated gene %q", s.Name, g)
				}
				seen[Fold(g)] = true
			}
		}
		var buf bytes.Buffer
		if err := WriteGMT(&buf, lib.Sets); err != nil {
			t.Fatal(err)
		}
		again, err := ReadGMT(&buf, "again.gmt")
		if err != nil {
			t.Fatalf("written library does not read back: %v", err)
		}
		if !reflect.DeepEqual(again.Sets, lib.Sets) {
			t.Fatalf("round trip changed the library:\n%q\n%q", lib.Sets, again.Sets)
		}
	})
}
