package ingest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"scpipe/ingest/internal/h5gen"
	"scpipe/shard"
	"scpipe/simulate"

	"scpipe/internal/testkit"
)

// baronLibraries reads the shared islet data (one 10x MTX folder whose
// barcodes start mouse1_lib1, _lib2 and _lib3) and splits it by library:
// per library its barcodes and its genes × cells matrix, plus the genes'
// ids and names.
type baronLibrary struct {
	name     string
	barcodes []string
	m        h5gen.CSC
}

func baronLibraries(t *testing.T) (dir string, ids, names []string, libs []baronLibrary) {
	t.Helper()
	dir = filepath.Join(sharedData(t), "baron-mouse-pancreas")
	for _, f := range testkit.ReadGzipLines(t, filepath.Join(dir, "features.tsv.gz")) {
		cols := strings.Split(f, "\t")
		ids, names = append(ids, cols[0]), append(names, cols[1])
	}
	bcs := testkit.ReadGzipLines(t, filepath.Join(dir, "barcodes.tsv.gz"))
	lib := make([]int, len(bcs))   // each cell's library
	local := make([]int, len(bcs)) // its column in the library's matrix
	for i, b := range bcs {
		k := slices.IndexFunc([]string{"mouse1_lib1", "mouse1_lib2", "mouse1_lib3"}, func(p string) bool { return strings.HasPrefix(b, p) })
		if k < 0 {
			t.Fatalf("barcode %q of no library", b)
		}
		for len(libs) <= k {
			libs = append(libs, baronLibrary{name: fmt.Sprintf("lib%d", len(libs)+1)})
		}
		lib[i], local[i] = k, len(libs[k].barcodes)
		libs[k].barcodes = append(libs[k].barcodes, b)
	}
	// Entries per cell, then each library's CSC in cell order.
	type entry struct {
		gene int64
		val  float64
	}
	perCell := make([][]entry, len(bcs))
	lines := testkit.ReadGzipLines(t, filepath.Join(dir, "matrix.mtx.gz"))
	header := false
	for _, l := range lines {
		if strings.HasPrefix(l, "%") {
			continue
		}
		if !header {
			header = true
			continue
		}
		f := strings.Fields(l)
		g, _ := strconv.ParseInt(f[0], 10, 64)
		c, _ := strconv.Atoi(f[1])
		v, _ := strconv.ParseFloat(f[2], 64)
		perCell[c-1] = append(perCell[c-1], entry{g - 1, v})
	}
	for k := range libs {
		libs[k].m = h5gen.CSC{Genes: len(ids), Cells: len(libs[k].barcodes), Indptr: []int64{0}}
	}
	for i, es := range perCell {
		m := &libs[lib[i]].m
		if len(m.Indptr)-1 != local[i] {
			t.Fatalf("cell %d out of order in its library", i)
		}
		for _, e := range es {
			m.Indices, m.Data = append(m.Indices, e.gene), append(m.Data, e.val)
		}
		m.Indptr = append(m.Indptr, int64(len(m.Indices)))
	}
	return dir, ids, names, libs
}

// writeLibrary writes a library in format ("mtx", "h5", "h5ad") under dir
// and returns its path.
func writeLibrary(t *testing.T, dir, format string, ids, names []string, l baronLibrary, chunk int) string {
	t.Helper()
	m := l.m
	switch format {
	case "mtx":
		p := filepath.Join(dir, l.name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		var mtx, feat bytes.Buffer
		fmt.Fprintf(&mtx, "%%%%MatrixMarket matrix coordinate integer general\n%d %d %d\n", m.Genes, m.Cells, len(m.Data))
		for c := range m.Cells {
			for k := m.Indptr[c]; k < m.Indptr[c+1]; k++ {
				fmt.Fprintf(&mtx, "%d %d %g\n", m.Indices[k]+1, c+1, m.Data[k])
			}
		}
		for g := range ids {
			fmt.Fprintf(&feat, "%s\t%s\tGene Expression\n", ids[g], names[g])
		}
		for name, b := range map[string][]byte{"matrix.mtx.gz": gzipBytes(t, mtx.Bytes()), "features.tsv": feat.Bytes(),
			"barcodes.tsv": []byte(strings.Join(l.barcodes, "\n") + "\n")} {
			if err := os.WriteFile(filepath.Join(p, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return p
	case "h5":
		p := filepath.Join(dir, l.name+".h5")
		types := make([]string, len(ids))
		for i := range types {
			types[i] = geneExpression
		}
		if err := h5gen.WriteTenXV3(p, m, ids, names, types, nil, l.barcodes, h5gen.Options{Chunk: chunk, Deflate: 1}); err != nil {
			t.Fatal(err)
		}
		return p
	case "h5ad":
		p := filepath.Join(dir, l.name+".h5ad")
		// CSC of genes × cells is CSR of cells × genes.
		x := h5gen.CSR{Rows: m.Cells, Cols: m.Genes, Indptr: m.Indptr, Indices: m.Indices, Data: m.Data}
		if err := h5gen.WriteH5ADCSR(p, x, l.barcodes, ids, h5gen.Options{Chunk: chunk}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Fatalf("format %q", format)
	return ""
}

// bitRows returns the rows of X (and of the mask, when masked) as words.
func bitRows(s *shard.Shard) (x, mask [][]uint64) {
	for i := range s.Manifest().Cells {
		x = append(x, slices.Clone(s.X().Segment(i, 0)))
		if s.Mask() != nil {
			mask = append(mask, slices.Clone(s.Mask().Segment(i, 0)))
		}
	}
	return x, mask
}

// TestSamplesBaronSplit splits the islet data into its three libraries
// and ingests them as three samples, in any mix of formats: with the
// ambient RNA off the shards hold the nonzeros, genes and cells of the one
// folder's, barcodes suffixed by sample; with it on, each sample's rows are
// those of that sample ingested alone (its own soup).
func TestSamplesBaronSplit(t *testing.T) {
	t.Parallel()
	dir, ids, names, libs := baronLibraries(t)
	if len(libs) != 3 || len(libs[0].barcodes) != 277 || len(libs[1].barcodes) != 291 || len(libs[2].barcodes) != 254 {
		t.Fatalf("libraries of %d cells, want 277, 291 and 254", []int{len(libs[0].barcodes), len(libs[1].barcodes), len(libs[2].barcodes)})
	}
	tmp := t.TempDir()
	one := DefaultOptions()
	one.Input, one.Output, one.Ambient, one.Workers = dir, filepath.Join(tmp, "one"), 0, 2
	oneRep, oneShard := ingest(t, one)
	oneX := dataFiles(t, one.Output, oneShard)
	oneGenes, err := os.ReadFile(filepath.Join(one.Output, shard.GenesName))
	if err != nil {
		t.Fatal(err)
	}
	oneBcs := barcodes(t, oneShard)

	for _, formats := range [][]string{{"mtx", "h5", "h5ad"}, {"h5", "h5", "h5"}} {
		t.Run(strings.Join(formats, "+"), func(t *testing.T) {
			in := t.TempDir()
			var samples []Sample
			for k, l := range libs {
				// Chunks small enough that every file is read in several ranges.
				samples = append(samples, Sample{Name: l.name, Path: writeLibrary(t, in, formats[k], ids, names, l, 1<<14)})
			}
			o := one
			o.Input, o.Samples, o.Output = "", samples, filepath.Join(t.TempDir(), "three")
			rep, s := ingest(t, o)
			if rep.CellsOut != oneRep.CellsOut || rep.GenesOut != oneRep.GenesOut || rep.Ones != oneRep.Ones {
				t.Errorf("three samples: %d cells × %d genes, %d ones; one folder: %d × %d, %d", rep.CellsOut, rep.GenesOut, rep.Ones, oneRep.CellsOut, oneRep.GenesOut, oneRep.Ones)
			}
			x := dataFiles(t, o.Output, s)
			for name, b := range oneX {
				if !bytes.Equal(x[name], b) {
					t.Errorf("%s differs from the one folder's", name)
				}
			}
			if g, err := os.ReadFile(filepath.Join(o.Output, shard.GenesName)); err != nil || !bytes.Equal(g, oneGenes) {
				t.Errorf("genes.tsv differs from the one folder's (%v)", err)
			}
			bcs := barcodes(t, s)
			for i, b := range oneBcs {
				if want := b + "-lib" + b[10:11]; bcs[i] != want {
					t.Fatalf("barcode %d = %q, want %q", i, bcs[i], want)
				}
			}
			m := s.Manifest()
			if got := m.SampleNames(); !slices.Equal(got, []string{"lib1", "lib2", "lib3"}) {
				t.Errorf("samples %q", got)
			}
			cs := m.CellSamples()
			var ones int64
			for k, smp := range m.Samples {
				if smp.CellsBefore != len(libs[k].barcodes) || smp.CellsAfter != smp.CellsBefore || smp.Format != map[string]string{"mtx": "10x-mtx", "h5": "10x-h5-v3", "h5ad": "h5ad"}[formats[k]] {
					t.Errorf("sample %d: %+v", k, smp)
				}
				if cs[smp.FirstCell] != uint16(k) || cs[smp.FirstCell+smp.CellsAfter-1] != uint16(k) {
					t.Errorf("CellSamples at sample %d's rows: %d, %d", k, cs[smp.FirstCell], cs[smp.FirstCell+smp.CellsAfter-1])
				}
				ones += smp.OnesBefore
			}
			if ones != m.Filters.OnesBefore {
				t.Errorf("the samples' ones before the filters add up to %d, the manifest says %d", ones, m.Filters.OnesBefore)
			}
		})
	}

	t.Run("ambient per sample", func(t *testing.T) {
		in := t.TempDir()
		all := DefaultOptions()
		all.MinCellFrac, all.Workers = 0, 2 // every gene kept: rows comparable to each sample's alone
		var samples []Sample
		var alone [][][]uint64
		for _, l := range libs {
			p := writeLibrary(t, in, "mtx", ids, names, l, 0)
			samples = append(samples, Sample{Name: l.name, Path: p})
			o := all
			o.Input, o.Output = p, filepath.Join(t.TempDir(), l.name)
			_, s := ingest(t, o)
			x, _ := bitRows(s)
			alone = append(alone, x)
		}
		o := all
		o.Samples, o.Output = samples, filepath.Join(t.TempDir(), "three")
		_, s := ingest(t, o)
		x, _ := bitRows(s)
		pooled := all
		pooled.Input, pooled.Output = dir, filepath.Join(t.TempDir(), "pooled")
		_, ps := ingest(t, pooled)
		px, _ := bitRows(ps)
		differ := 0
		for k, smp := range s.Manifest().Samples {
			for i := range smp.CellsAfter {
				if !slices.Equal(x[smp.FirstCell+i], alone[k][i]) {
					t.Fatalf("sample %s cell %d: its row differs from the sample's ingested alone", smp.Name, i)
				}
				if !slices.Equal(x[smp.FirstCell+i], px[smp.FirstCell+i]) {
					differ++
				}
			}
		}
		t.Logf("ambient levels per sample: %d of %d cells' rows differ from the pooled soup's", differ, len(x))
	})
}

// sampleMTX writes a 10x MTX folder named name under dir of the cells ×
// genes counts x (rows cells), genes ids as given.
func sampleMTX(t *testing.T, dir, name string, ids []string, x [][]int) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	var mtx, feat, bcs bytes.Buffer
	n := 0
	for _, row := range x {
		for _, v := range row {
			if v != 0 {
				n++
			}
		}
	}
	fmt.Fprintf(&mtx, "%%%%MatrixMarket matrix coordinate integer general\n%d %d %d\n", len(ids), len(x), n)
	for c, row := range x {
		for g, v := range row {
			if v != 0 {
				fmt.Fprintf(&mtx, "%d %d %d\n", g+1, c+1, v)
			}
		}
		fmt.Fprintf(&bcs, "AAAC%d-1\n", c)
	}
	for _, id := range ids {
		fmt.Fprintf(&feat, "%s\tsym%s\tGene Expression\n", id, id)
	}
	for f, b := range map[string][]byte{"matrix.mtx": mtx.Bytes(), "features.tsv": feat.Bytes(), "barcodes.tsv": bcs.Bytes()} {
		if err := os.WriteFile(filepath.Join(p, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// TestSampleGenes matches the genes of samples by id: the same genes in
// another order are the same genes; different genes are refused, naming
// both inputs and the first gene each lacks, unless intersected (the
// genes every sample holds) or united (a gene a sample lacks unobserved
// in its cells).
func TestSampleGenes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Sample a: genes A B C; b: C A B (same genes, other order); c: A B D.
	a := sampleMTX(t, dir, "a", []string{"A", "B", "C"}, [][]int{{1, 0, 2}, {0, 3, 1}})
	b := sampleMTX(t, dir, "b", []string{"C", "A", "B"}, [][]int{{5, 1, 0}, {0, 0, 2}, {1, 1, 1}})
	c := sampleMTX(t, dir, "c", []string{"A", "B", "D"}, [][]int{{0, 1, 4}, {2, 0, 1}})
	// Rows of the whole by gene id, for cells of a, then b, then c.
	want := map[string][]string{ // cell -> genes that are 1
		"AAAC0-1-a": {"A", "C"}, "AAAC1-1-a": {"B", "C"},
		"AAAC0-1-b": {"A", "C"}, "AAAC1-1-b": {"B"}, "AAAC2-1-b": {"A", "B", "C"},
		"AAAC0-1-c": {"B", "D"}, "AAAC1-1-c": {"A", "D"},
	}
	cases := []struct {
		name      string
		samples   []string
		join      GeneJoin
		genes     []string
		err       []string            // substrings of the refusal
		unobserve map[string][]string // sample -> genes unobserved in its cells
	}{
		{name: "same genes, other order", samples: []string{a, b}, genes: []string{"A", "B", "C"}},
		{name: "differ", samples: []string{a, b, c}, err: []string{"samples a (" + a, "c (" + c, "gene C is in a, not in c", "gene D is in c, not in a", "--genes intersect"}},
		{name: "intersect", samples: []string{a, b, c}, join: GenesIntersect, genes: []string{"A", "B"}},
		{name: "union", samples: []string{a, b, c}, join: GenesUnion, genes: []string{"A", "B", "C", "D"},
			unobserve: map[string][]string{"a": {"D"}, "b": {"D"}, "c": {"C"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var samples []Sample
			for _, p := range tc.samples {
				samples = append(samples, Sample{Name: filepath.Base(p), Path: p})
			}
			out := filepath.Join(t.TempDir(), "out")
			o := Options{Samples: samples, Output: out, GeneJoin: tc.join, Workers: 2}
			rep, err := Run(context.Background(), o)
			if tc.err != nil {
				if err == nil {
					t.Fatal("ingested")
				}
				for _, s := range tc.err {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
				assertNoOutput(t, out)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s, err := shard.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			genes := readLines(t, filepath.Join(out, shard.GenesName))
			var ids []string
			for _, l := range genes {
				ids = append(ids, strings.Split(l, "\t")[0])
			}
			if !slices.Equal(ids, tc.genes) {
				t.Fatalf("genes %q, want %q", ids, tc.genes)
			}
			if tc.join == GenesIntersect && rep.DroppedByIntersect != 2 {
				t.Errorf("%d genes dropped by the intersection, want 2 (C, D)", rep.DroppedByIntersect)
			}
			bcs := barcodes(t, s)
			x, mask := bitRows(s)
			if (mask != nil) != (tc.unobserve != nil) {
				t.Fatalf("masked %v, want %v", mask != nil, tc.unobserve != nil)
			}
			m := s.Manifest()
			cs := m.CellSamples()
			for i, bc := range bcs {
				sample := m.Samples[cs[i]].Name
				if !strings.HasSuffix(bc, "-"+sample) {
					t.Errorf("cell %d: barcode %s, sample %s", i, bc, sample)
				}
				for g, id := range ids {
					one := x[i][g/64]>>(g%64)&1 == 1
					if wantOne := slices.Contains(want[bc], id); one != wantOne {
						t.Errorf("cell %s gene %s: %v, want %v", bc, id, one, wantOne)
					}
					if mask != nil {
						obs := mask[i][g/64]>>(g%64)&1 == 1
						if wantObs := !slices.Contains(tc.unobserve[sample], id); obs != wantObs {
							t.Errorf("cell %s gene %s: observed %v, want %v", bc, id, obs, wantObs)
						}
					}
				}
			}
			for _, smp := range m.Samples {
				if smp.GenesMissing != len(tc.unobserve[smp.Name]) {
					t.Errorf("sample %s: %d genes missing, want %d", smp.Name, smp.GenesMissing, len(tc.unobserve[smp.Name]))
				}
			}
		})
	}
}

// TestSampleBadInput refuses an ingest of several samples one of which
// cannot be read, at its opening or in its entries, naming the sample and
// its file, and leaves nothing behind.
func TestSampleBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := tenxCSC()
	bad := tenxCSC()
	bad.Data[3] = -1 // read in the counting pass, after the others' entries
	h5 := func(name string, m h5gen.CSC) string {
		p := filepath.Join(dir, name+".h5")
		types := make([]string, m.Genes)
		for i := range types {
			types[i] = geneExpression
		}
		if err := h5gen.WriteTenXV3(p, m, names("G", m.Genes), names("gene", m.Genes), types, nil, names("BC", m.Cells), h5gen.Options{DataType: "float64", Chunk: 2}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok1, ok2, neg := h5("s1", good), h5("s2", good), h5("s3", bad)
	mtx := mtxFolder(t, goodMTX, 4, 3, false, true)
	cases := []struct {
		name    string
		samples []Sample
		ambient float64
		want    []string
	}{
		{"missing file", []Sample{{Name: "s1", Path: ok1}, {Name: "gone", Path: filepath.Join(dir, "gone.h5")}, {Name: "s2", Path: ok2}}, 0, []string{"sample gone", "gone.h5"}},
		{"negative count", []Sample{{Name: "s1", Path: ok1}, {Name: "s2", Path: ok2}, {Name: "s3", Path: neg}}, 0, []string{"sample s3", neg, "negative"}},
		{"negative count, ambient", []Sample{{Name: "s1", Path: ok1}, {Name: "s3", Path: neg}, {Name: "s2", Path: ok2}}, 0.05, []string{"sample s3", neg, "negative"}},
		{"mixed, negative count", []Sample{{Name: "m", Path: mtx}, {Name: "s3", Path: neg}}, 0, []string{"sample s3", neg, "negative"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			_, err := Run(context.Background(), Options{Samples: tc.samples, Output: out, Ambient: tc.ambient, Workers: 2})
			if err == nil {
				t.Fatal("ingested")
			}
			for _, s := range tc.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			assertNoOutput(t, out)
		})
	}
	// The control: the good ones ingest.
	if _, err := Run(context.Background(), Options{Samples: []Sample{{Name: "s1", Path: ok1}, {Name: "s2", Path: ok2}, {Name: "m", Path: mtx}}, Output: filepath.Join(t.TempDir(), "out"), Workers: 2}); err != nil {
		t.Fatal(err)
	}
}

// TestSamplesFile reads samples files: paths from the file's folder,
// further columns kept; and refuses what cannot name samples.
func TestSamplesFile(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text string
		cols       []string
		samples    []Sample
		err        string
	}{
		{"plain", "sample\tpath\nd1\tx/d1.h5\nd2\t/abs/d2.h5\n", nil,
			[]Sample{{Name: "d1", Path: "DIR/x/d1.h5", Values: []string{}}, {Name: "d2", Path: "/abs/d2.h5", Values: []string{}}}, ""},
		{"columns", "sample\tpath\tdonor\tday\r\n# a comment\n\nd1\td1.h5\tP1\t0\r\nd2\td2.h5\tP1\t7\n", []string{"donor", "day"},
			[]Sample{{Name: "d1", Path: "DIR/d1.h5", Values: []string{"P1", "0"}}, {Name: "d2", Path: "DIR/d2.h5", Values: []string{"P1", "7"}}}, ""},
		{"short line", "sample\tpath\tdonor\nd1\td1.h5\n", nil, nil, "line 2: 2 tab-separated fields, the header has 3"},
		{"one column", "sample\nd1\n", nil, nil, "header of at least two"},
		{"repeated name", "sample\tpath\nd1\ta.h5\nd1\tb.h5\n", nil, nil, `samples 1 and 2 are both named "d1"`},
		{"empty name", "sample\tpath\n\ta.h5\n", nil, nil, "sample 1's name"},
		{"column named sample", "sample\tpath\tsample\nd1\ta.h5\tx\n", nil, nil, `column "sample" named twice`},
		{"no sample", "sample\tpath\n", nil, nil, "no sample"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			p := filepath.Join(dir, "samples.tsv")
			if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			cols, samples, err := ReadSamplesFile(p)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), p) {
					t.Fatalf("error %v, want one naming %s and saying %q", err, p, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.samples {
				tc.samples[i].Path = strings.Replace(tc.samples[i].Path, "DIR", dir, 1)
			}
			if !slices.Equal(cols, tc.cols) || len(samples) != len(tc.samples) {
				t.Fatalf("columns %q, samples %+v", cols, samples)
			}
			for i, s := range samples {
				w := tc.samples[i]
				if s.Name != w.Name || s.Path != w.Path || !slices.Equal(s.Values, w.Values) {
					t.Errorf("sample %d: %+v, want %+v", i, s, w)
				}
			}
		})
	}
}

// TestSamplesFromPaths names samples after their paths.
func TestSamplesFromPaths(t *testing.T) {
	t.Parallel()
	cases := []struct {
		paths []string
		names []string // nil: refused
	}{
		{[]string{"a.h5", "dir/b.h5ad", "c.mtx.gz", "folder/"}, []string{"a", "b", "c", "folder"}},
		{[]string{"s1/outs/filtered_feature_bc_matrix.h5", "s2/outs/filtered_feature_bc_matrix.h5"}, []string{"s1", "s2"}},
		{[]string{"/data/run/d1/outs/filtered_feature_bc_matrix", "/data/run/d2/outs/filtered_feature_bc_matrix"}, []string{"d1", "d2"}},
		{[]string{"x/a/m.h5", "x/b/m.h5", "y/a/m.h5"}, nil},
		{[]string{"m.h5", "m.h5"}, nil},
	}
	for _, tc := range cases {
		s, err := SamplesFromPaths(tc.paths)
		if tc.names == nil {
			if err == nil {
				t.Errorf("%q: named %+v, want a refusal", tc.paths, s)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.paths, err)
			continue
		}
		var got []string
		for _, x := range s {
			got = append(got, x.Name)
		}
		if !slices.Equal(got, tc.names) {
			t.Errorf("%q: names %q, want %q", tc.paths, got, tc.names)
		}
	}
}

// TestSimulatedSamples ingests a simulation of several samples written as
// one MTX folder per sample, through its samples file, and finds the
// shards the simulation writes itself: the same bits, barcodes and
// samples, the samples file's further columns kept.
func TestSimulatedSamples(t *testing.T) {
	t.Parallel()
	p := simulate.DefaultSingleCellParams()
	p.Cells, p.Genes, p.L = 500, 300, 3
	p.Samples = simulate.DefaultSampleParams(3)
	p.Samples.Programs = 1
	tr, err := simulate.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mtx, direct := filepath.Join(dir, "mtx"), filepath.Join(dir, "direct")
	if err := simulate.WriteMTX(context.Background(), mtx, tr, false); err != nil {
		t.Fatal(err)
	}
	if err := simulate.WriteShards(context.Background(), direct, tr, shard.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cols, samples, err := ReadSamplesFile(filepath.Join(mtx, simulate.SamplesFile))
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Samples: samples, SampleColumns: cols, Output: filepath.Join(dir, "ingested"), Workers: 2}
	_, got := ingest(t, o)
	want, err := shard.Open(filepath.Join(direct, simulate.ShardsDir))
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	gx, _ := bitRows(got)
	wx, _ := bitRows(want)
	if len(gx) != len(wx) {
		t.Fatalf("%d cells ingested, %d simulated", len(gx), len(wx))
	}
	for i := range gx {
		if !slices.Equal(gx[i], wx[i]) {
			t.Fatalf("cell %d differs", i)
		}
	}
	if !slices.Equal(barcodes(t, got), barcodes(t, want)) {
		t.Error("barcodes differ")
	}
	gm, wm := got.Manifest(), want.Manifest()
	if !slices.Equal(gm.SampleNames(), wm.SampleNames()) || !slices.Equal(gm.CellSamples(), wm.CellSamples()) {
		t.Errorf("samples %q, want %q", gm.SampleNames(), wm.SampleNames())
	}
	if !slices.Equal(gm.SampleColumns, []string{"depth_factor", "background_factor"}) || gm.Samples[2].Values[0] != strconv.FormatFloat(tr.SampleDepth[2], 'g', -1, 64) {
		t.Errorf("sample columns %q, sample 3's values %q", gm.SampleColumns, gm.Samples[2].Values)
	}
}
