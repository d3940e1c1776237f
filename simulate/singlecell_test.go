package simulate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"scpipe/shard"

	"scpipe/internal/testkit"
)

// smallSingleCell is a single-cell dataset small enough to check entry by
// entry against the probabilities of the planted model.
func smallSingleCell(seed uint64) Params {
	p := DefaultSingleCellParams()
	p.Cells, p.Genes, p.L, p.Seed = 3000, 700, 4, seed
	p.SingleCell.ProgramSizeMin, p.SingleCell.ProgramSizeMax = 0.03, 0.12
	return p
}

// moments accumulates observed ones against their expected number and
// variance under the planted probabilities.
type moments struct{ obs, exp, vr, n float64 }

func (m *moments) add(x bool, p float64) {
	if x {
		m.obs++
	}
	m.exp += p
	m.vr += p * (1 - p)
	m.n++
}

// z is the standardised deviation of the observed from the expected count.
func (m moments) z() float64 { return (m.obs - m.exp) / math.Sqrt(max(m.vr, 1e-12)) }

func (m moments) rate() float64 { return m.obs / m.n }

func TestSingleCellMarginals(t *testing.T) {
	t.Parallel()
	p := smallSingleCell(21)
	tr, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	quarter, _ := tr.depthQuarter()
	var all moments
	genes := make([]moments, p.Genes) // uncovered entries, per gene
	var depth [4]moments              // covered entries, per depth quarter
	row, clean := make([]uint64, tr.Words()), make([]uint64, tr.Words())
	for n := range p.Cells {
		tr.Row(n, row, clean)
		for g := range p.Genes {
			x, q := bit(row, g), tr.Detection(n, g)
			all.add(x, q)
			if bit(clean, g) {
				depth[quarter[n]].add(x, q)
			} else {
				genes[g].add(x, q)
			}
		}
	}
	if z := all.z(); math.Abs(z) > 5 {
		t.Errorf("overall density %.4f, want %.4f (z = %.1f)", all.rate(), all.exp/all.n, z)
	}
	// Per gene, for the genes with enough expected ones for the normal
	// approximation; the rest pooled.
	var rare moments
	checked := 0
	for g, m := range genes {
		if m.exp < 15 {
			rare.obs, rare.exp, rare.vr = rare.obs+m.obs, rare.exp+m.exp, rare.vr+m.vr
			continue
		}
		checked++
		// 5.5 sd over 700 genes: a false alarm about once in 50,000 runs.
		if z := m.z(); math.Abs(z) > 5.5 {
			t.Errorf("gene %d (baseline %.4f): %v background ones, want %.1f (z = %.1f)", g, tr.Baseline[g], m.obs, m.exp, z)
		}
	}
	if z := rare.z(); math.Abs(z) > 5 {
		t.Errorf("rare genes pooled: %v background ones, want %.1f (z = %.1f)", rare.obs, rare.exp, z)
	}
	if checked < p.Genes/4 {
		t.Errorf("only %d genes with enough background to check", checked)
	}
	for q, m := range depth {
		if z := m.z(); math.Abs(z) > 5 {
			t.Errorf("depth quarter %d: covered detection %.4f, want %.4f (z = %.1f)", q+1, m.rate(), m.exp/m.n, z)
		}
		if q > 0 && m.rate() <= depth[q-1].rate()+0.03 {
			t.Errorf("covered detection does not rise with depth: quarter %d %.3f, quarter %d %.3f", q, depth[q-1].rate(), q+1, m.rate())
		}
	}
}

// TestSingleCellDraws checks the planted parameters against the
// distributions they are drawn from.
func TestSingleCellDraws(t *testing.T) {
	t.Parallel()
	p := smallSingleCell(5)
	p.Cells, p.Genes, p.L = 20000, 5000, 8
	p.SingleCell.ProgramsPerCellMin, p.SingleCell.ProgramsPerCellMax = 0, 3
	tr, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	q := p.SingleCell
	hk := popcount(tr.Housekeeping)
	if want := int(math.Round(q.HousekeepingFraction * float64(p.Genes))); hk != want {
		t.Errorf("%d housekeeping genes, want %d", hk, want)
	}
	// log-normal draws: the mean and sd of the logs, to 5 standard errors
	// (the sd's standard error is about σ/√(2n)).
	logs := func(name string, xs []float64, median, sigma float64) {
		var s, s2 float64
		for _, x := range xs {
			s += math.Log(x)
			s2 += math.Log(x) * math.Log(x)
		}
		k := float64(len(xs))
		mean, sd := s/k, math.Sqrt(s2/k-(s/k)*(s/k))
		if math.Abs(mean-math.Log(median)) > 5*sigma/math.Sqrt(k) {
			t.Errorf("%s: mean log %.4f, want %.4f", name, mean, math.Log(median))
		}
		if math.Abs(sd-sigma) > 5*sigma/math.Sqrt(2*k) {
			t.Errorf("%s: sd of logs %.4f, want %.4f", name, sd, sigma)
		}
	}
	var base, hkBase, lift []float64
	for g := range p.Genes {
		if bit(tr.Housekeeping, g) {
			hkBase = append(hkBase, tr.Baseline[g])
			if tr.Lift[g] != 0 {
				t.Errorf("housekeeping gene %d has lift %v", g, tr.Lift[g])
			}
			continue
		}
		base = append(base, tr.Baseline[g])
		lift = append(lift, tr.Lift[g])
	}
	logs("size factor", tr.SizeFactor, 1, q.DepthSigma)
	logs("baseline", base, q.BaselineMedian, q.BaselineSigma)
	logs("housekeeping baseline", hkBase, q.HousekeepingMedian, q.HousekeepingSigma)
	logs("lift", lift, q.LiftMedian, q.LiftSigma)

	sizes := make([]int, p.L)
	for l := range p.L {
		sizes[l] = popcount(tr.U[l])
		if want := q.programSize(l, p.Genes, p.L); sizes[l] != want {
			t.Errorf("program %d: %d genes, want %d", l+1, sizes[l], want)
		}
		for _, g := range tr.ProgramGenes(l) {
			if bit(tr.Housekeeping, g) {
				t.Errorf("program %d holds housekeeping gene %d", l+1, g)
			}
		}
	}
	if sizes[0] != int(math.Round(q.ProgramSizeMax*float64(p.Genes))) || sizes[p.L-1] != int(math.Round(q.ProgramSizeMin*float64(p.Genes))) {
		t.Errorf("program sizes %v do not run from %v to %v of the genes", sizes, q.ProgramSizeMax, q.ProgramSizeMin)
	}
	for l := 1; l < p.L; l++ {
		if sizes[l] >= sizes[l-1] {
			t.Errorf("program sizes %v are not distinct and decreasing", sizes)
			break
		}
	}
	// Programs per cell: uniform on min..max; each program equally used.
	perCell := make([]float64, q.ProgramsPerCellMax+1)
	for n := range p.Cells {
		k := 0
		for l := range p.L {
			if bit(tr.Z[l], n) {
				k++
			}
		}
		if k < q.ProgramsPerCellMin || k > q.ProgramsPerCellMax {
			t.Fatalf("cell %d uses %d programs", n, k)
		}
		perCell[k]++
	}
	kinds := float64(q.ProgramsPerCellMax - q.ProgramsPerCellMin + 1)
	for k := q.ProgramsPerCellMin; k <= q.ProgramsPerCellMax; k++ {
		pr := 1 / kinds
		if sd := math.Sqrt(float64(p.Cells) * pr * (1 - pr)); math.Abs(perCell[k]-float64(p.Cells)*pr) > 5*sd {
			t.Errorf("%v cells use %d programs, want %.0f", perCell[k], k, float64(p.Cells)*pr)
		}
	}
	meanUse := (float64(q.ProgramsPerCellMin+q.ProgramsPerCellMax) / 2) / float64(p.L)
	for l := range p.L {
		c := float64(popcount(tr.Z[l]))
		if sd := math.Sqrt(float64(p.Cells) * meanUse * (1 - meanUse)); math.Abs(c-float64(p.Cells)*meanUse) > 5*sd {
			t.Errorf("program %d used by %v cells, want %.0f", l+1, c, float64(p.Cells)*meanUse)
		}
	}
}

// TestSingleCellDefaultsLookLike10x checks the defaults against what
// binarised 10x PBMC and brain data look like.
func TestSingleCellDefaultsLookLike10x(t *testing.T) {
	t.Parallel()
	p := DefaultSingleCellParams()
	tr, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	sum, _, err := tr.summarise(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Density < 0.05 || sum.Density > 0.10 {
		t.Errorf("density %.4f outside 5–10%%", sum.Density)
	}
	d := sum.CoveredDetectionByDepth
	if d[0] < 0.2 || d[3] > 0.85 || !slices.IsSorted(d) {
		t.Errorf("covered detection by depth quarter %.3f, want rising within 20–85%%", d)
	}
	// Detection per gene over all cells; background per gene over the
	// cells whose programs do not cover it.
	det, bg, bgCells := make([]float64, p.Genes), make([]float64, p.Genes), make([]float64, p.Genes)
	row, clean := make([]uint64, tr.Words()), make([]uint64, tr.Words())
	for n := range p.Cells {
		tr.Row(n, row, clean)
		for g := range p.Genes {
			if bit(row, g) {
				det[g]++
			}
			if !bit(clean, g) {
				bgCells[g]++
				if bit(row, g) {
					bg[g]++
				}
			}
		}
	}
	var above80, ordinary, usual int
	for g := range p.Genes {
		if det[g]/float64(p.Cells) > 0.8 {
			above80++
		}
		if bit(tr.Housekeeping, g) {
			continue
		}
		ordinary++
		if r := bg[g] / bgCells[g]; r >= 0.001 && r <= 0.05 {
			usual++
		}
	}
	if f := float64(above80) / float64(p.Genes); f < 0.01 || f > 0.05 {
		t.Errorf("%.1f%% of genes detected in more than 80%% of cells, want a few percent", 100*f)
	}
	if f := float64(usual) / float64(ordinary); f < 0.8 {
		t.Errorf("only %.0f%% of ordinary genes have a background rate within 0.1–5%%", 100*f)
	}
	for l, c := range sum.ProgramCells {
		if c == 0 || sum.ProgramGenes[l] < 2 {
			t.Errorf("program %d: %d genes, %d cells", l+1, sum.ProgramGenes[l], c)
		}
	}
}

// entry is one line of a MatrixMarket body.
type entry struct{ gene, cell, count int }

// readEntries reads the entries of the simulator's matrix.mtx.gz.
func readEntries(t *testing.T, path string) []entry {
	t.Helper()
	buf := bytes.NewBuffer(testkit.ReadGzip(t, path))
	var out []entry
	for i, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if strings.HasPrefix(line, "%") || i == 2 {
			continue
		}
		var e entry
		if _, err := fmt.Sscan(line, &e.gene, &e.cell, &e.count); err != nil {
			t.Fatalf("%s line %d %q: %v", path, i+1, line, err)
		}
		out = append(out, entry{e.gene - 1, e.cell - 1, e.count})
	}
	return out
}

func TestSingleCellCounts(t *testing.T) {
	t.Parallel()
	p := smallSingleCell(8)
	p.Cells = 1000
	// Deep housekeeping genes reach the rejection sampler (mean ≥ 10).
	p.SingleCell.HousekeepingMedian = 8
	tr, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "sim")
	if err := WriteMTX(context.Background(), dir, tr, false); err != nil {
		t.Fatal(err)
	}
	entries := readEntries(t, filepath.Join(dir, "matrix.mtx.gz"))
	got := make([][]uint64, p.Cells)
	for n := range got {
		got[n] = make([]uint64, tr.Words())
	}
	// Given detection, a count is Poisson(λ) conditioned on ≥ 1: compare the
	// sum of counts and the number of single counts with their expectations.
	var sum, ones moments
	var sumVar float64
	big := 0
	for _, e := range entries {
		if e.count < 1 {
			t.Fatalf("cell %d gene %d: count %d", e.cell, e.gene, e.count)
		}
		got[e.cell][e.gene/64] |= 1 << (e.gene % 64)
		lam := tr.SizeFactor[e.cell] * tr.Baseline[e.gene]
		if covered(tr, e.cell, e.gene) {
			lam += tr.SizeFactor[e.cell] * tr.Lift[e.gene]
		}
		if lam >= ptrsFrom {
			big++
		}
		norm := -math.Expm1(-lam)
		mean := lam / norm
		sum.obs += float64(e.count)
		sum.exp += mean
		sumVar += (lam+lam*lam)/norm - mean*mean
		ones.add(e.count == 1, lam*math.Exp(-lam)/norm)
	}
	if d := math.Abs(sum.obs - sum.exp); d > 5*math.Sqrt(sumVar) {
		t.Errorf("sum of counts %v, want %.0f ± %.0f", sum.obs, sum.exp, 5*math.Sqrt(sumVar))
	}
	if z := ones.z(); math.Abs(z) > 5 {
		t.Errorf("%v counts of 1, want %.0f (z = %.1f)", ones.obs, ones.exp, z)
	}
	if big == 0 {
		t.Error("no count had a mean of 10 or more: the rejection sampler went untested")
	}
	row, clean, counts := make([]uint64, tr.Words()), make([]uint64, tr.Words()), make([]uint32, p.Genes)
	for n := range p.Cells {
		tr.RowCounts(n, row, clean, counts)
		if !slices.Equal(row, got[n]) {
			t.Fatalf("cell %d: matrix.mtx.gz differs from the simulated row", n)
		}
	}
	for _, f := range []string{geneRatesFile, cellDepthFile} {
		data, err := os.ReadFile(filepath.Join(dir, TruthDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(string(data), "\n"); lines != 1+map[string]int{geneRatesFile: p.Genes, cellDepthFile: p.Cells}[f] {
			t.Errorf("%s: %d lines", f, lines)
		}
	}
}

func covered(tr *Truth, n, g int) bool {
	for l := range tr.L {
		if bit(tr.Z[l], n) && bit(tr.U[l], g) {
			return true
		}
	}
	return false
}

// TestReproducibleAnyWorkers writes each kind with several numbers of
// workers (cells not a multiple of the block, more workers than blocks) and
// expects the same bytes, equal to the rows drawn one at a time.
func TestReproducibleAnyWorkers(t *testing.T) {
	t.Parallel()
	om := Params{Cells: 1000, Genes: 300, L: 3, CodeDensity: 0.1, UsageDensity: 0.3, FlipOn: 0.02, FlipOff: 0.1, Missing: 0.1, Seed: 4}
	sc := smallSingleCell(4)
	sc.Cells, sc.Missing = 1000, 0.1
	for _, p := range []Params{om, sc} {
		t.Run(p.Kind.String(), func(t *testing.T) {
			t.Parallel()
			var first map[string][]byte
			for _, workers := range []int{1, 2, 3, 8} {
				files := writeBoth(t, p, workers)
				if first == nil {
					first = files
					continue
				}
				for name, data := range first {
					if !bytes.Equal(files[name], data) {
						t.Errorf("%d workers: %s differs from 1 worker's", workers, name)
					}
				}
			}
			tr, _ := New(context.Background(), p)
			row, clean := make([]uint64, tr.Words()), make([]uint64, tr.Words())
			got := rowsOf(t, first["matrix.mtx"], p)
			for n := range p.Cells {
				tr.Row(n, row, clean)
				if !slices.Equal(row, got[n]) {
					t.Fatalf("cell %d: written row differs from Row", n)
				}
			}
			p.Seed++
			if other := writeBoth(t, p, 2); bytes.Equal(other["matrix.mtx"], first["matrix.mtx"]) {
				t.Error("another seed gave the same matrix")
			}
		})
	}
}

// writeBoth writes p as an MTX folder (without missing entries) and as
// shards with the given number of workers and returns every data and truth
// file's content by name; matrix.mtx is the decompressed matrix.
func writeBoth(t *testing.T, p Params, workers int) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, shards := range []bool{false, true} {
		q := p
		if !shards {
			q.Missing = 0
		}
		tr, err := New(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		tr.Workers = workers
		dir := filepath.Join(t.TempDir(), "sim")
		if shards {
			err = WriteShards(context.Background(), dir, tr, shard.CreateOptions{})
		} else {
			err = WriteMTX(context.Background(), dir, tr, false)
		}
		if err != nil {
			t.Fatal(err)
		}
		err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() == shard.ManifestName {
				return err // the manifest holds the time of writing
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			if shards {
				rel = "shards:" + rel
			}
			if rel == "matrix.mtx.gz" {
				zr, err := gzip.NewReader(bytes.NewReader(data))
				if err != nil {
					return err
				}
				var b bytes.Buffer
				if _, err := b.ReadFrom(zr); err != nil {
					return err
				}
				rel, data = "matrix.mtx", b.Bytes()
			}
			files[rel] = data
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// rowsOf parses a decompressed matrix.mtx into rows.
func rowsOf(t *testing.T, mtx []byte, p Params) [][]uint64 {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.mtx.gz")
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(mtx)
	zw.Close()
	if err := os.WriteFile(path, b.Bytes(), 0o666); err != nil {
		t.Fatal(err)
	}
	rows := make([][]uint64, p.Cells)
	for n := range rows {
		rows[n] = make([]uint64, (p.Genes+63)/64)
	}
	for _, e := range readEntries(t, path) {
		rows[e.cell][e.gene/64] |= 1 << (e.gene % 64)
	}
	return rows
}

func TestSingleCellValidate(t *testing.T) {
	t.Parallel()
	with := func(f func(*Params)) Params {
		p := DefaultSingleCellParams()
		f(&p)
		return p
	}
	cases := []struct {
		p    Params
		want string
	}{
		{with(func(p *Params) { p.SingleCell.DepthSigma = -0.1 }), "depth sigma must be in [0, 3]"},
		{with(func(p *Params) { p.SingleCell.DepthSigma = 4 }), "depth sigma"},
		{with(func(p *Params) { p.SingleCell.BaselineMedian = math.NaN() }), "baseline median must be in [0, 100]"},
		{with(func(p *Params) { p.SingleCell.BaselineSigma = math.Inf(1) }), "baseline sigma"},
		{with(func(p *Params) { p.SingleCell.HousekeepingFraction = 1 }), "housekeeping fraction must be in [0, 1)"},
		{with(func(p *Params) { p.SingleCell.HousekeepingMedian = 101 }), "housekeeping median"},
		{with(func(p *Params) { p.SingleCell.LiftMedian = 0 }), "lift median must be in (0, 100]"},
		{with(func(p *Params) { p.SingleCell.LiftSigma = -1 }), "lift sigma"},
		{with(func(p *Params) { p.SingleCell.ProgramSizeMin = 0 }), "program size min must be in (0, 1]"},
		{with(func(p *Params) { p.SingleCell.ProgramSizeMax = 1.5 }), "program size max"},
		{with(func(p *Params) { p.SingleCell.ProgramSizeMin = 0.2 }), "program size min 0.2 exceeds program size max 0.05"},
		{with(func(p *Params) { p.SingleCell.ProgramsPerCellMin = 4 }), "programs per cell must satisfy"},
		{with(func(p *Params) { p.SingleCell.ProgramsPerCellMax = 0; p.SingleCell.ProgramsPerCellMin = 0 }), "max ≥ 1"},
		{with(func(p *Params) { p.L = 2 }), "programs per cell max 3 exceeds the 2 planted programs"},
		{with(func(p *Params) { p.SingleCell.HousekeepingFraction = 0.99; p.SingleCell.ProgramSizeMax = 0.5 }), "exceeds the 20 genes that are not housekeeping"},
		{with(func(p *Params) { p.FlipOn = 0.01 }), "flip-on belongs to the ormachine kind"},
		{with(func(p *Params) { p.CodeDensity = 0.1 }), "code density belongs to the ormachine kind"},
		{with(func(p *Params) { p.Missing = 2 }), "missing must be in [0, 1]"},
		{with(func(p *Params) { p.Kind = 7 }), "unknown kind 7"},
		{with(func(p *Params) { p.Kind = OrMachine }), "single-cell parameters given for the ormachine kind"},
	}
	for _, c := range cases {
		_, err := New(context.Background(), c.p)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "simulate: ") {
			t.Errorf("want an error containing %q, got %v", c.want, err)
		}
	}
	if _, err := New(context.Background(), DefaultSingleCellParams()); err != nil {
		t.Errorf("defaults rejected: %v", err)
	}
	for _, s := range []string{"ormachine", "singlecell", "digits"} {
		if k, err := ParseKind(s); err != nil || k.String() != s {
			t.Errorf("ParseKind(%q) = %v, %v", s, k, err)
		}
	}
	if _, err := ParseKind("scrnaseq"); err == nil || !strings.Contains(err.Error(), `unknown kind "scrnaseq" (want ormachine, singlecell or digits)`) {
		t.Errorf("ParseKind(scrnaseq): %v", err)
	}
}

func TestEachBlockStops(t *testing.T) {
	t.Parallel()
	tr, err := New(context.Background(), smallSingleCell(1))
	if err != nil {
		t.Fatal(err)
	}
	tr.Workers = 3
	stop := errors.New("stop")
	seen := 0
	err = eachBlock(context.Background(), tr, func(_ *rowBuf, lo, _ int) int { return lo }, func(lo int) error {
		if lo != seen*blockCells {
			t.Errorf("block at cell %d, want %d", lo, seen*blockCells)
		}
		if seen++; seen == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || seen != 3 {
		t.Errorf("error %v after %d blocks, want stop after 3", err, seen)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = eachBlock(ctx, tr, func(_ *rowBuf, lo, _ int) int { return lo }, func(int) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	if err := WriteShards(ctx, filepath.Join(t.TempDir(), "x"), tr, shard.CreateOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("WriteShards with a cancelled context: %v", err)
	}
}
