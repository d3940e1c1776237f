package ingest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"scpipe/ingest/internal/h5gen"
	"scpipe/shard"
)

// refDeviance computes each gene's binomial deviance straight from its
// definition, D = 2 Σ_c [y log(y/(π n_c)) + (n_c − y) log((n_c − y)/(n_c (1 − π)))],
// summing the zero entries' terms (n_c log(1/(1 − π))) too, over the
// entries of the kept genes (an entry's count is its value; no entry
// repeats a cell and gene).
func refDeviance(cells, genes int, entries []refEntry, kept []bool) []float64 {
	total := make([]float64, cells)
	y := make([][]float64, genes) // dense genes × cells
	for g := range y {
		y[g] = make([]float64, cells)
	}
	for _, e := range entries {
		if kept[e.gene] {
			total[e.cell] += e.val
			y[e.gene][e.cell] += e.val
		}
	}
	var T float64
	for _, n := range total {
		T += n
	}
	dev := make([]float64, genes)
	for g := range genes {
		var Y float64
		for _, v := range y[g] {
			Y += v
		}
		if !kept[g] || Y == 0 {
			continue
		}
		pi := Y / T
		xlogx := func(a, b float64) float64 { // a log(a/b), 0 when a = 0
			if a == 0 {
				return 0
			}
			return a * math.Log(a/b)
		}
		var d float64
		for c, v := range y[g] {
			n := total[c]
			d += xlogx(v, pi*n) + xlogx(n-v, n*(1-pi))
		}
		dev[g] = 2 * d
	}
	return dev
}

type refEntry struct {
	cell, gene int32
	val        float64
}

// genCounts draws a cells × genes matrix of counts in cell order: each
// cell holds a random number of distinct genes (some none, some one, so
// that a gene is a cell's whole total), counts mostly small with a few
// large ones and, when fractional, quarters (exact at the deviance's
// resolution); explicit zeros too. Genes rise within a cell.
func genCounts(rng *rand.Rand, cells, genes int, fractional bool) []refEntry {
	var es []refEntry
	for c := range cells {
		k := rng.IntN(genes / 2)
		switch c % 17 {
		case 3:
			k = 0
		case 5:
			k = 1
		}
		gs := rng.Perm(genes)[:k]
		slices.Sort(gs)
		for _, g := range gs {
			v := float64(1 + int(rng.ExpFloat64()*2))
			switch r := rng.IntN(50); {
			case r == 0:
				v = 0
			case r == 1:
				v = float64(500 + rng.IntN(5000))
			case fractional && r < 20:
				v += float64(rng.IntN(4)) / 4
			}
			es = append(es, refEntry{int32(c), int32(g), v})
		}
	}
	return es
}

// toBatches cuts entries into batches of the given lengths, cycling
// through lens.
func toBatches(es []refEntry, lens []int) []*batch {
	var bs []*batch
	for i := 0; len(es) > 0; i++ {
		n := min(lens[i%len(lens)], len(es))
		b := &batch{}
		for _, e := range es[:n] {
			b.cell, b.gene, b.val = append(b.cell, e.cell), append(b.gene, e.gene), append(b.val, e.val)
		}
		bs = append(bs, b)
		es = es[n:]
	}
	return bs
}

// passDeviance runs the counting pass over src with the deviance's sums
// and completes them.
func passDeviance(t *testing.T, src source, cells, genes int, kept []bool, split passSplit) []float64 {
	t.Helper()
	s, err := createSpill(filepath.Join(t.TempDir(), "out"), spillMemory, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.remove()
	dev := newDevAccum(cells, kept)
	if _, err := countPass(context.Background(), src, cells, genes, kept, binariser{}, s, &progress{}, split, dev); err != nil {
		t.Fatal(err)
	}
	got, err := dev.finish(context.Background(), "test", src.scan, split)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// closeDeviance reports whether got is want up to the rounding of the
// fixed-point sums (each term to 2⁻²⁴, a few hundred terms a gene).
func closeDeviance(got, want float64) bool {
	return math.Abs(got-want) <= 1e-4+1e-9*math.Abs(want)
}

// TestDevianceCountPass checks the deviance that the counting pass and
// devAccum.finish compute against refDeviance, for cells in order (one
// pass, the runs cut by batch, range and block edges joined in order),
// shuffled, and with each cell's entries together but the cells out of
// order (both read again), entry by entry and in runs, in batches and in
// ranges read at once, for several numbers of workers: the same deviance,
// bit for bit, in every case.
func TestDevianceCountPass(t *testing.T) {
	t.Parallel()
	const cells, genes = 400, 40
	some := make([]bool, genes)
	all := make([]bool, genes)
	for g := range some {
		some[g], all[g] = g%7 != 3, true
	}
	// Entries in cell order, shuffled, or each cell's entries together
	// but the cells in random order (read again as shuffled ones are).
	const sorted, shuffled, permuted = 0, 1, 2
	for _, tc := range []struct {
		name       string
		kept       []bool
		order      int
		fractional bool
	}{
		{"sorted", all, sorted, false},
		{"sorted-some-types", some, sorted, true},
		{"shuffled", all, shuffled, false},
		{"shuffled-some-types", some, shuffled, true},
		{"cells-permuted", all, permuted, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(7, uint64(len(tc.name))))
			es := genCounts(rng, cells, genes, tc.fractional)
			switch tc.order {
			case shuffled:
				rng.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
			case permuted:
				rank := rng.Perm(cells)
				slices.SortStableFunc(es, func(a, b refEntry) int { return rank[a.cell] - rank[b.cell] })
			}
			want := refDeviance(cells, genes, es, tc.kept)
			bs := toBatches(es, []int{1000, 37, 1, 512, 2000})
			srcs := []source{batchSource{batches: bs}, rangeSource{batchSource: batchSource{batches: bs}}}
			if tc.order != shuffled {
				runs := batchSource{batches: withRuns(bs)}
				srcs = append(srcs, runs, rangeSource{batchSource: runs})
			}
			var first []float64
			for _, src := range srcs {
				for _, split := range []passSplit{{1, 8}, {2, 8}, {3, 64}, {16, 8}} {
					got := passDeviance(t, src, cells, genes, tc.kept, split)
					for g := range genes {
						if !closeDeviance(got[g], want[g]) {
							t.Fatalf("%T, split %+v: gene %d deviance %v, want %v", src, split, g, got[g], want[g])
						}
					}
					if first == nil {
						first = got
					} else if !slices.EqualFunc(got, first, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) {
						t.Fatalf("%T, split %+v: deviance differs in the last bits from the first source's", src, split)
					}
				}
			}
		})
	}
}

// TestDevTermTable: the terms of whole counts taken from the table of
// x log x (three lookups, one subtraction of large numbers) agree with
// devTerm's direct formula to the last unit of termScale, up to the
// largest total the table serves; fractional counts and totals, and
// larger totals, go to devTerm itself.
func TestDevTermTable(t *testing.T) {
	t.Parallel()
	d := newDevPart(newDevAccum(1, []bool{true}))
	for _, N := range []int64{1, 2, 3, 10, 977, 65535, 300000, xlxMax - 1, xlxMax, 5 << 20} {
		d.total(N * valueScale)
		if table := N < xlxMax; (d.N >= 0) != table {
			t.Fatalf("total %d: table used %v, want %v", N, d.N >= 0, table)
		}
		for _, k := range []int64{1, 2, 3, 7, N / 3, N / 2, N - 1, N} {
			if k < 1 || k > N {
				continue
			}
			q := k * valueScale
			got, want := d.term(q), devTerm(q, N*valueScale)
			if got > 0 || got-want > 1 || want-got > 1 {
				t.Errorf("N %d, k %d: term %d, devTerm %d", N, k, got, want)
			}
		}
	}
	// Fractional counts or totals use the formula.
	for _, c := range [][2]int64{{valueScale / 4, 10 * valueScale}, {valueScale, 10*valueScale + 3}} {
		d.total(c[1])
		if got, want := d.term(c[0]), devTerm(c[0], c[1]); got != want {
			t.Errorf("q %d of %d: term %d, devTerm %d", c[0], c[1], got, want)
		}
	}
}

// TestDevianceTooLarge: a value far above any count is refused with an
// error naming the flag.
func TestDevianceTooLarge(t *testing.T) {
	t.Parallel()
	kept := []bool{true, true}
	for _, v := range []float64{maxDevValue, 1e300} {
		src := batchSource{batches: []*batch{{cell: []int32{0, 0, 1}, gene: []int32{0, 1, 1}, val: []float64{1, v, 2}}}}
		s, err := createSpill(filepath.Join(t.TempDir(), "out"), spillMemory, false)
		if err != nil {
			t.Fatal(err)
		}
		dev := newDevAccum(2, kept)
		if _, err := countPass(context.Background(), src, 2, 2, kept, binariser{}, s, &progress{}, passSplit{1, 8}, dev); err != nil {
			t.Fatal(err)
		}
		s.remove()
		_, err = dev.finish(context.Background(), "m.h5", src.scan, passSplit{1, 8})
		if err == nil || !strings.Contains(err.Error(), "--select-genes") || !strings.Contains(err.Error(), "too large") || !strings.Contains(err.Error(), "m.h5") {
			t.Errorf("value %v: error %v", v, err)
		}
	}
}

// selectionMatrix is a generated count matrix stored in every format
// ingest reads; its genes come in pairs of identical columns, so that an
// odd selection ends inside a pair and the tie goes to the earlier gene.
type selectionMatrix struct {
	cells, genes int
	entries      []refEntry // cell order, genes rising
	ids, names   []string
	barcodes     []string
}

func newSelectionMatrix(seed uint64) selectionMatrix {
	const cells, pairs = 300, 40
	rng := rand.New(rand.NewPCG(seed, 1))
	half := genCounts(rng, cells, pairs, false)
	m := selectionMatrix{cells: cells, genes: 2 * pairs}
	for _, e := range half {
		m.entries = append(m.entries, refEntry{e.cell, 2 * e.gene, e.val}, refEntry{e.cell, 2*e.gene + 1, e.val})
	}
	for g := range m.genes {
		m.ids = append(m.ids, fmt.Sprintf("ENSG%05d", g))
		name := fmt.Sprintf("Gene%d", g)
		switch g / 2 % 9 { // both genes of a pair, so that pairs stay tied
		case 2:
			name = fmt.Sprintf("MT-%d", g) // excluded, whatever the case
		case 4:
			name = fmt.Sprintf("mt-%d", g)
		}
		m.names = append(m.names, name)
	}
	m.barcodes = names("BC", cells)
	return m
}

func (m selectionMatrix) csc() h5gen.CSC {
	c := h5gen.CSC{Genes: m.genes, Cells: m.cells, Indptr: make([]int64, m.cells+1)}
	for _, e := range m.entries {
		c.Indices = append(c.Indices, int64(e.gene))
		c.Data = append(c.Data, e.val)
		c.Indptr[e.cell+1]++
	}
	for i := range m.cells {
		c.Indptr[i+1] += c.Indptr[i]
	}
	return c
}

// csr returns the matrix as cells × genes CSR or, transposed, as genes ×
// cells compressed by gene (AnnData's csc_matrix of cells × genes).
func (m selectionMatrix) compressed(byGene bool) (indptr, indices []int64, data []float64) {
	major := m.cells
	if byGene {
		major = m.genes
	}
	indptr = make([]int64, major+1)
	es := slices.Clone(m.entries)
	if byGene {
		slices.SortStableFunc(es, func(a, b refEntry) int { return int(a.gene - b.gene) })
	}
	for _, e := range es {
		maj, min := e.cell, e.gene
		if byGene {
			maj, min = e.gene, e.cell
		}
		indices = append(indices, int64(min))
		data = append(data, e.val)
		indptr[maj+1]++
	}
	for i := range major {
		indptr[i+1] += indptr[i]
	}
	return indptr, indices, data
}

// writeMTX writes a 10x MTX folder, its entries in cell order or shuffled.
func (m selectionMatrix) writeMTX(t *testing.T, shuffle bool) string {
	t.Helper()
	dir := t.TempDir()
	es := slices.Clone(m.entries)
	if shuffle {
		rng := rand.New(rand.NewPCG(3, 3))
		rng.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
	}
	var mtx, feat strings.Builder
	fmt.Fprintf(&mtx, "%%%%MatrixMarket matrix coordinate integer general\n%d %d %d\n", m.genes, m.cells, len(es))
	for _, e := range es {
		fmt.Fprintf(&mtx, "%d %d %v\n", e.gene+1, e.cell+1, e.val)
	}
	for g := range m.genes {
		fmt.Fprintf(&feat, "%s\t%s\tGene Expression\n", m.ids[g], m.names[g])
	}
	for name, s := range map[string]string{"matrix.mtx": mtx.String(), "features.tsv": feat.String(), "barcodes.tsv": strings.Join(m.barcodes, "\n") + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// writeH5AD writes the matrix as AnnData X, CSR or CSC, the gene names as
// var's index (AnnData keeps no ids beside them).
func (m selectionMatrix) writeH5AD(t *testing.T, csc bool) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "adata.h5ad")
	indptr, indices, data := m.compressed(csc)
	enc := "csr_matrix"
	if csc {
		enc = "csc_matrix"
	}
	o := h5gen.Options{Chunk: 64}
	err := h5gen.WriteRaw(p, []h5gen.RawDataset{
		{Path: "/X/data", Values: data, Options: o},
		{Path: "/X/indices", Values: indices, Options: o},
		{Path: "/X/indptr", Values: indptr},
		{Path: "/obs/_index", Values: m.barcodes, VLen: true},
		{Path: "/var/_index", Values: m.names, VLen: true},
	}, []h5gen.RawAttr{
		{Path: "/X", Name: "encoding-type", Value: enc},
		{Path: "/X", Name: "shape", Value: []int64{int64(m.cells), int64(m.genes)}},
		{Path: "/obs", Name: "_index", Value: "_index"},
		{Path: "/var", Name: "_index", Value: "_index"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// inputs writes the matrix in every format and returns the paths by name.
func (m selectionMatrix) inputs(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	o := h5gen.Options{Chunk: 64, Deflate: 1, Shuffle: true, DataType: "int32"}
	v2, v3 := filepath.Join(dir, "v2.h5"), filepath.Join(dir, "v3.h5")
	if err := h5gen.WriteTenXV2(v2, "GRCh38", m.csc(), m.ids, m.names, m.barcodes, o); err != nil {
		t.Fatal(err)
	}
	types := make([]string, m.genes)
	for g := range types {
		types[g] = geneExpression
	}
	if err := h5gen.WriteTenXV3(v3, m.csc(), m.ids, m.names, types, nil, m.barcodes, o); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"10x-h5-v2":    v2,
		"10x-h5-v3":    v3,
		"mtx":          m.writeMTX(t, false),
		"mtx-shuffled": m.writeMTX(t, true),
		"h5ad-csr":     m.writeH5AD(t, false),
		"h5ad-csc":     m.writeH5AD(t, true),
	}
}

// TestSelectGenesFormats ingests one generated matrix from every format
// with --exclude-genes and --select-genes, the HDF5 files read in ranges
// that cut cells: every format keeps the genes that refDeviance ranks
// highest among those the pattern and the 1% filter keep (ties to the
// earlier gene), records their deviance, and the manifest says what was
// done. Not parallel: it lowers minRange.
func TestSelectGenesFormats(t *testing.T) {
	defer func(m int64) { minRange = m }(minRange)
	minRange = 256
	m := newSelectionMatrix(11)
	kept := make([]bool, m.genes)
	for g := range kept {
		kept[g] = true
	}
	want := refDeviance(m.cells, m.genes, m.entries, kept)
	detected := make([]int, m.genes)
	for _, e := range m.entries {
		if e.val > 0 {
			detected[e.gene]++
		}
	}
	pattern, err := ParseGenePattern("^mt-")
	if err != nil {
		t.Fatal(err)
	}
	var candidates []int
	excluded := 0
	for g := range m.genes {
		switch {
		case strings.HasPrefix(strings.ToLower(m.names[g]), "mt-"):
			excluded++
		case detected[g] >= 3: // 1% of 300 cells
			candidates = append(candidates, g)
		}
	}
	if len(candidates) < 30 || excluded == 0 {
		t.Fatalf("%d candidates, %d excluded: the matrix does not test the selection", len(candidates), excluded)
	}
	inputs := m.inputs(t)
	for _, n := range []int{1, 13, 25, len(candidates), len(candidates) + 5} {
		ranked := slices.Clone(candidates)
		slices.SortStableFunc(ranked, func(a, b int) int {
			switch {
			case want[a] > want[b]:
				return -1
			case want[a] < want[b]:
				return 1
			}
			return a - b
		})
		top := slices.Clone(ranked[:min(n, len(ranked))])
		slices.Sort(top)
		if n < len(candidates) && n%2 == 1 && want[ranked[n-1]] != want[ranked[n]] {
			t.Fatalf("n = %d: the selection does not end inside a pair of tied genes", n)
		}
		var first []float64
		for _, format := range slices.Sorted(maps.Keys(inputs)) {
			t.Run(fmt.Sprintf("%s/n%d", format, n), func(t *testing.T) {
				var logs bytes.Buffer
				opt := DefaultOptions()
				opt.Input, opt.Output = inputs[format], filepath.Join(t.TempDir(), "s")
				opt.ExcludeGenes, opt.SelectGenes = pattern, n
				opt.Logger = slog.New(slog.NewTextHandler(&logs, nil))
				rep, s := ingest(t, opt)
				man := s.Manifest()
				gotNames := man.GeneNames
				if gotNames == nil {
					gotNames = man.GeneIDs // h5ad: var's index
				}
				wantNames := make([]string, len(top))
				for i, g := range top {
					wantNames[i] = m.names[g]
				}
				if !slices.Equal(gotNames, wantNames) {
					t.Fatalf("kept %v, want %v", gotNames, wantNames)
				}
				sel := man.Filters.Selection
				if sel == nil || sel.Method != devianceMethod || sel.N != n || sel.Candidates != len(candidates) || len(sel.Scores) != len(top) {
					t.Fatalf("manifest selection %+v, want %s of n %d among %d", sel, devianceMethod, n, len(candidates))
				}
				for i, g := range top {
					if !closeDeviance(sel.Scores[i], want[g]) {
						t.Errorf("gene %s: deviance %v, want %v", m.names[g], sel.Scores[i], want[g])
					}
				}
				if first == nil {
					first = sel.Scores
				} else if !slices.Equal(first, sel.Scores) {
					t.Errorf("deviances differ from another format's")
				}
				f := man.Filters
				if f.DroppedByExclude != excluded || rep.DroppedByExclude != excluded || f.ExcludeGenes != "^mt-" || f.ExcludePreset != "" ||
					rep.SelectedFrom != len(candidates) || f.GenesAfter != len(top) {
					t.Errorf("manifest filters %+v, report %+v", f, rep)
				}
				allKept := strings.Contains(logs.String(), "keeping them all")
				if allKept != (n >= len(candidates)) {
					t.Errorf("n = %d of %d candidates: log says keeping all %v:\n%s", n, len(candidates), allKept, logs.String())
				}
				again := strings.Contains(logs.String(), "reading it again")
				if wantAgain := format == "mtx-shuffled" || format == "h5ad-csc"; again != wantAgain {
					t.Errorf("second read %v, want %v", again, wantAgain)
				}
			})
		}
	}
}

// TestSelectGenesPBMC selects 2000 of the real PBMC genes with the
// housekeeping preset. The markers asserted are those the deviance ranks
// well inside the top 2000 of the 8,958 genes left (ranks computed
// independently from the MTX in Python, the same as here): LYZ 2nd, CST3
// 8th, S100A8 9th, GNLY 10th, NKG7 12th, HLA-DRA 7th, CD79A 44th, CD3D
// 63rd, FCGR3A 84th, PPBP 125th, IL7R 134th, MS4A1 166th, CD14 364th; so
// each is asserted in the top 1000, with room to spare. Without the preset
// the top 2000 hold dozens of ribosomal proteins (B2M-like genes detected
// everywhere, whose counts vary with depth); with it, none and no MT- gene.
func TestSelectGenesPBMC(t *testing.T) {
	t.Parallel()
	in := filepath.Join(sharedData(t), "pbmc3k-600")
	hk, err := ParseGenePattern("housekeeping")
	if err != nil {
		t.Fatal(err)
	}
	// Every gene named RPL…, RPS… or MT- but these, which are not
	// ribosomal proteins: kinases, a binding protein, an antisense RNA.
	ribo := regexp.MustCompile(`^(RPL|RPS|MT-)`)
	notRibo := regexp.MustCompile(`^(RPS6K|RPS19BP1$|RPL34-AS1$)`)
	for _, pattern := range []*GenePattern{nil, hk} {
		opt := DefaultOptions()
		opt.Input, opt.Output = in, filepath.Join(t.TempDir(), "s")
		opt.SelectGenes, opt.ExcludeGenes = 2000, pattern
		_, s := ingest(t, opt)
		m := s.Manifest()
		if m.Genes != 2000 {
			t.Fatalf("kept %d genes, want 2000", m.Genes)
		}
		// The symbols are the ids: genes.tsv has one column.
		rank := make(map[string]int, m.Genes)
		order := make([]int, m.Genes)
		for i := range order {
			order[i] = i
		}
		sc := m.Filters.Selection.Scores
		slices.SortStableFunc(order, func(a, b int) int {
			if sc[a] != sc[b] {
				if sc[a] > sc[b] {
					return -1
				}
				return 1
			}
			return a - b
		})
		for r, i := range order {
			rank[m.GeneIDs[i]] = r + 1
		}
		for _, g := range []string{"LYZ", "CST3", "S100A8", "GNLY", "NKG7", "HLA-DRA", "CD79A", "CD3D", "FCGR3A", "PPBP", "IL7R", "MS4A1", "CD14"} {
			if r, ok := rank[g]; !ok || r > 1000 {
				t.Errorf("pattern %v: marker %s ranked %d (0: not kept), want in the top 1000", pattern, g, r)
			}
		}
		hits := 0
		for _, g := range m.GeneIDs {
			if ribo.MatchString(g) && !notRibo.MatchString(g) {
				hits++
			}
		}
		if pattern == nil && hits < 20 {
			t.Errorf("without a pattern, %d ribosomal or MT- genes kept: the preset would not be tested", hits)
		}
		if pattern != nil && (hits != 0 || m.Filters.DroppedByExclude < 90 || m.Filters.ExcludePreset != "housekeeping") {
			t.Errorf("housekeeping preset: %d ribosomal or MT- genes kept, %d dropped, preset %q", hits, m.Filters.DroppedByExclude, m.Filters.ExcludePreset)
		}
	}
}

// TestHousekeepingPattern lists names the preset must and must not match,
// human and mouse.
func TestHousekeepingPattern(t *testing.T) {
	t.Parallel()
	p, err := ParseGenePattern("Housekeeping")
	if err != nil || p.Preset != "housekeeping" || p.Expr != HousekeepingPattern {
		t.Fatalf("preset: %+v, %v", p, err)
	}
	for _, name := range []string{"RPL5", "RPL10A", "RPL36AL", "RPL22L1", "RPL13AP5", "RPS4X", "RPS4Y1", "RPS27A", "RPS26P11", "RPSA", "RPSAP58", "RPLP0", "RPLP2", "RPLP0P2",
		"MT-CO1", "MT-ND4L", "MT-ATP6", "Rpl5", "Rpl13a", "Rps4x", "Rpsa", "Rplp1", "mt-Co1", "mt-Nd1"} {
		if !p.Match(name, "ENSG1") {
			t.Errorf("%s not matched", name)
		}
	}
	for _, name := range []string{"RPS6KA1", "RPS6KB1", "RPS6KL1", "Rps6ka3", "RP11-34P13.7", "RP4-669L17.10", "MRPL15", "MRPS21", "MTRNR2L1", "MT1X",
		"RPS19BP1", "RPL34-AS1", "RPL17-C18orf32", "CD3D", "LYZ", "RPN1", "RPE", "GNLY"} {
		if p.Match(name, "ENSG1") {
			t.Errorf("%s matched", name)
		}
	}
	// The command reference states the preset's pattern.
	doc, err := os.ReadFile(filepath.Join("..", "docs", "commands.md"))
	if err != nil || !strings.Contains(string(doc), "`"+HousekeepingPattern+"`") {
		t.Errorf("docs/commands.md does not state the housekeeping pattern %s (%v)", HousekeepingPattern, err)
	}
	// No name: the id is matched.
	if !p.Match("", "MT-CO1") || p.Match("CD3D", "MT-CO1") {
		t.Error("the id should be matched only where the name is empty")
	}
}

// TestSelectBadValues: a negative number of genes and a bad pattern are
// refused with errors that say what is wrong, before anything is written.
func TestSelectBadValues(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "(", "[a-", `\p{Nope}`} {
		if _, err := ParseGenePattern(s); err == nil || !strings.Contains(err.Error(), "gene pattern") {
			t.Errorf("pattern %q: error %v", s, err)
		}
	}
	in := mtxFolder(t, goodMTX, 4, 3, false, true)
	out := filepath.Join(t.TempDir(), "s")
	opt := DefaultOptions()
	opt.Input, opt.Output, opt.SelectGenes = in, out, -1
	if _, err := Run(context.Background(), opt); err == nil || !strings.Contains(err.Error(), "select genes -1") {
		t.Errorf("select genes -1: error %v", err)
	}
	assertNoOutput(t, out)
	// A pattern that drops every gene says so.
	opt.SelectGenes, opt.ExcludeGenes = 2, &GenePattern{Expr: "gene", re: regexp.MustCompile("(?i)gene")}
	if _, err := Run(context.Background(), opt); err == nil || !strings.Contains(err.Error(), "4 more matched the exclude pattern") {
		t.Errorf("every gene excluded: error %v", err)
	}
	assertNoOutput(t, out)
}

// TestSelectionManifest: the shard reader refuses a selection record that
// disagrees with the genes kept.
func TestSelectionManifest(t *testing.T) {
	t.Parallel()
	in := mtxFolder(t, goodMTX, 4, 3, false, true)
	out := filepath.Join(t.TempDir(), "s")
	opt := DefaultOptions()
	opt.Input, opt.Output, opt.SelectGenes = in, out, 2
	_, s := ingest(t, opt)
	sel := s.Manifest().Filters.Selection
	if sel == nil || sel.N != 2 || sel.Candidates != 4 || len(sel.Scores) != 2 {
		t.Fatalf("selection %+v", sel)
	}
	s.Close()
	path := filepath.Join(out, shard.ManifestName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(b, []byte(`"candidates": 4`), []byte(`"candidates": 1`), 1)
	if bytes.Equal(bad, b) {
		t.Fatalf("manifest has no candidates field:\n%s", b)
	}
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := shard.Open(out); err == nil || !strings.Contains(err.Error(), "gene_selection") {
		t.Errorf("opening a shard whose selection kept more genes than it had: %v", err)
	}
}
