package rundir

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/schema"

	"scpipe/internal/testkit"
)

func TestFitDir(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		L, chain int
		want     string
	}{
		{5, 1, "RUN/L05/chain1"},
		{10, 3, "RUN/L10/chain3"},
		{2, 12, "RUN/L02/chain12"},
		{120, 1, "RUN/L120/chain1"},
	} {
		if got := FitDir("RUN", tc.L, tc.chain); got != filepath.FromSlash(tc.want) {
			t.Errorf("FitDir(RUN, %d, %d) = %q, want %q", tc.L, tc.chain, got, tc.want)
		}
	}
}

func TestWriteFileAtomic(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	for _, tc := range []struct {
		name     string
		existing string // content before the write; "" for no file
		write    func(w io.Writer) error
		want     string // content after
		wantErr  error
	}{
		{"new file", "", func(w io.Writer) error { _, err := io.WriteString(w, "hello"); return err }, "hello", nil},
		{"replace", "old", func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }, "new", nil},
		{"large", "", func(w io.Writer) error {
			_, err := w.Write(make([]byte, 3<<20)) // past the 1 MiB buffer
			return err
		}, string(make([]byte, 3<<20)), nil},
		{"failure keeps old", "old", func(w io.Writer) error { io.WriteString(w, "partial"); return errBoom }, "old", errBoom},
		{"failure leaves nothing", "", func(w io.Writer) error { io.WriteString(w, "partial"); return errBoom }, "", errBoom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "out.txt")
			if tc.existing != "" {
				if err := os.WriteFile(path, []byte(tc.existing), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := WriteFileAtomic(path, tc.write)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name %s", err, path)
			}
			got, rerr := os.ReadFile(path)
			switch {
			case tc.want == "" && !os.IsNotExist(rerr):
				t.Errorf("file exists after a failed write to a new name (read err %v)", rerr)
			case tc.want != "" && string(got) != tc.want:
				t.Errorf("content = %.20q (%d bytes), want %.20q (%d bytes)", got, len(got), tc.want, len(tc.want))
			}
			names := testkit.Names(t, dir)
			wantNames := []string{"out.txt"}
			if tc.want == "" {
				wantNames = nil
			}
			if !slices.Equal(names, wantNames) {
				t.Errorf("directory holds %q, want %q (temporary files left behind?)", names, wantNames)
			}
			if tc.want != "" {
				st, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				// The umask decides, as for a file any tool creates.
				ref := filepath.Join(t.TempDir(), "ref")
				if err := os.WriteFile(ref, nil, 0o666); err != nil {
					t.Fatal(err)
				}
				if want := testkit.Mode(t, ref); st.Mode().Perm() != want {
					t.Errorf("mode %v, want %v (0666 less the umask)", st.Mode().Perm(), want)
				}
			}
		})
	}
}

func TestWriteFileAtomicMissingDir(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "missing", "out.txt")
	err := WriteFileAtomic(path, func(w io.Writer) error { return nil })
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want an error naming %s", err, path)
	}
}

// randomMatrix returns rows × L values in [0, 1] with exact 0s and 1s mixed
// in, as posterior means have.
func randomMatrix(rng *rand.Rand, rows, L int) []float64 {
	m := make([]float64, rows*L)
	for i := range m {
		switch rng.IntN(4) {
		case 0:
			m[i] = 0
		case 1:
			m[i] = 1
		default:
			m[i] = rng.Float64()
		}
	}
	return m
}

func TestCodesRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name            string
		genes, L, batch int
		names           []string // gene names to cycle through; nil for generated
	}{
		{"L=1", 20, 1, batchRows, nil},
		{"L=10", 37, 10, batchRows, nil},
		{"zero rows", 0, 4, batchRows, nil},
		{"unicode names", 6, 3, batchRows, []string{"Ccl3‐α", "βActin", "基因", "Gene🧬", "", "tab\tand\nnewline"}},
		{"several batches", 50, 3, 7, nil},
		{"batch boundary", 14, 2, 7, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(tc.genes), uint64(tc.L)))
			c := Codes{GeneIDs: make([]string, tc.genes), GeneNames: make([]string, tc.genes), L: tc.L, Mean: randomMatrix(rng, tc.genes, tc.L)}
			for g := range tc.genes {
				c.GeneIDs[g] = fmt.Sprintf("ENSMUSG%011d", g)
				c.GeneNames[g] = fmt.Sprintf("Gm%d", g)
				if tc.names != nil {
					c.GeneNames[g] = tc.names[g%len(tc.names)]
				}
			}
			path := filepath.Join(t.TempDir(), CodesFile)
			if err := writeCodes(path, c, tc.batch); err != nil {
				t.Fatal(err)
			}
			got, err := ReadCodes(path)
			if err != nil {
				t.Fatal(err)
			}
			if got.L != c.L || !slices.Equal(got.GeneIDs, c.GeneIDs) || !slices.Equal(got.GeneNames, c.GeneNames) || !slices.Equal(got.Mean, c.Mean) {
				t.Errorf("read back %+v, wrote %+v", got, c)
			}
			if want, n := (tc.genes+tc.batch-1)/tc.batch, numRowGroups(t, path); n != want {
				t.Errorf("%d row groups, want %d (one per batch of %d rows)", n, want, tc.batch)
			}
		})
	}
}

func numRowGroups(t *testing.T, path string) int {
	t.Helper()
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return r.NumRowGroups()
}

// TestCellsRoundTripLarge writes more cells than one batch through the
// exported writer.
func TestCellsRoundTripLarge(t *testing.T) {
	t.Parallel()
	const cells, L = batchRows + 1000, 3
	rng := rand.New(rand.NewPCG(1, 2))
	c := Cells{Barcodes: make([]string, cells), L: L, Mean: randomMatrix(rng, cells, L)}
	for i := range c.Barcodes {
		c.Barcodes[i] = fmt.Sprintf("AAAC%08d-1", i)
	}
	path := filepath.Join(t.TempDir(), CellsFile)
	if err := WriteCells(path, c); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCells(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("cells differ after the round trip")
	}
	means, err := ReadCellMeans(path)
	if err != nil {
		t.Fatal(err)
	}
	if means.Barcodes != nil || means.L != L || means.Len() != cells || !slices.Equal(means.Mean, c.Mean) {
		t.Errorf("ReadCellMeans: %d barcodes, L = %d, %d cells; means equal: %v", len(means.Barcodes), means.L, means.Len(), slices.Equal(means.Mean, c.Mean))
	}
	if n := numRowGroups(t, path); n != 2 {
		t.Errorf("%d row groups, want 2", n)
	}
}

// TestCellsSampleColumn writes and reads back each cell's sample, with
// and without the rates' columns, and ReadCellMeans skips it.
func TestCellsSampleColumn(t *testing.T) {
	t.Parallel()
	for _, rated := range []bool{false, true} {
		c := Cells{Barcodes: []string{"a-s1", "b-s1", "a-s2"}, Samples: []string{"s1", "s1", "s2"}, L: 2, Mean: []float64{0, 1, 0.5, 0.5, 1, 0}}
		if rated {
			c.Dropout, c.Background = []float64{0.1, 0.2, 0.3}, []float64{0.01, 0.02, 0.03}
		}
		path := filepath.Join(t.TempDir(), CellsFile)
		if err := WriteCells(path, c); err != nil {
			t.Fatal(err)
		}
		got, err := ReadCells(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, c) {
			t.Errorf("rated %v: read back %+v, wrote %+v", rated, got, c)
		}
		if means, err := ReadCellMeans(path); err != nil || means.Samples != nil || !slices.Equal(means.Mean, c.Mean) {
			t.Errorf("rated %v: ReadCellMeans %+v, %v", rated, means, err)
		}
	}
	bad := Cells{Barcodes: []string{"a"}, Samples: []string{"s1", "s2"}, L: 1, Mean: []float64{1}}
	if err := WriteCells(filepath.Join(t.TempDir(), CellsFile), bad); err == nil {
		t.Error("2 samples for 1 cell written")
	}
}

func TestCellsRoundTripSmall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ cells, L int }{{0, 1}, {1, 1}, {5, 10}} {
		c := Cells{Barcodes: make([]string, tc.cells), L: tc.L, Mean: randomMatrix(rand.New(rand.NewPCG(3, 4)), tc.cells, tc.L)}
		for i := range c.Barcodes {
			c.Barcodes[i] = fmt.Sprintf("bc%d", i)
		}
		path := filepath.Join(t.TempDir(), CellsFile)
		if err := WriteCells(path, c); err != nil {
			t.Fatal(err)
		}
		got, err := ReadCells(path)
		if err != nil {
			t.Fatal(err)
		}
		if got.L != c.L || !slices.Equal(got.Barcodes, c.Barcodes) || !slices.Equal(got.Mean, c.Mean) {
			t.Errorf("cells=%d L=%d: read back %+v, wrote %+v", tc.cells, tc.L, got, c)
		}
		if means, err := ReadCellMeans(path); err != nil || means.L != c.L || means.Len() != tc.cells || !slices.Equal(means.Mean, c.Mean) {
			t.Errorf("cells=%d L=%d: ReadCellMeans %+v, %v", tc.cells, tc.L, means, err)
		}
	}
}

func TestWriteRejectsBadShapes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		write func(path string) error
	}{
		{"codes L=0", func(p string) error { return WriteCodes(p, Codes{}) }},
		{"codes short mean", func(p string) error {
			return WriteCodes(p, Codes{GeneIDs: []string{"a", "b"}, GeneNames: []string{"A", "B"}, L: 2, Mean: make([]float64, 3)})
		}},
		{"codes names", func(p string) error {
			return WriteCodes(p, Codes{GeneIDs: []string{"a", "b"}, GeneNames: []string{"A"}, L: 1, Mean: make([]float64, 2)})
		}},
		{"cells long mean", func(p string) error {
			return WriteCells(p, Cells{Barcodes: []string{"a"}, L: 1, Mean: make([]float64, 2)})
		}},
		{"trace phase", func(p string) error { return WriteTrace(p, []TraceRow{{Sweep: 1, Phase: "warmup"}}) }},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
		err := tc.write(path)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: err = %v, want an error naming %s", tc.name, err, path)
		}
		if _, serr := os.Stat(path); !os.IsNotExist(serr) {
			t.Errorf("%s: a file was written", tc.name)
		}
	}
	if names := testkit.Names(t, dir); len(names) != 0 {
		t.Errorf("left behind %q", names)
	}
}

// wantColumn is the expected Parquet description of one column.
type wantColumn struct {
	name     string
	physical parquet.Type
	logical  string // String() of the logical type
}

func parquetColumns(t *testing.T, path string) ([]wantColumn, map[string]string) {
	t.Helper()
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s := r.MetaData().Schema
	var cols []wantColumn
	for i := range s.NumColumns() {
		c := s.Column(i)
		if c.SchemaNode().RepetitionType() != parquet.Repetitions.Required {
			t.Errorf("column %s is %s, want required (no nulls)", c.Name(), c.SchemaNode().RepetitionType())
		}
		cols = append(cols, wantColumn{c.Name(), c.PhysicalType(), c.LogicalType().String()})
	}
	kv := map[string]string{}
	for _, e := range r.MetaData().KeyValueMetadata() {
		if e.Value != nil {
			kv[e.Key] = *e.Value
		}
	}
	return cols, kv
}

// TestParquetSchemas reads the files' Parquet schemas back and checks they
// are what README.md promises.
func TestParquetSchemas(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	str := wantColumn{physical: parquet.Types.ByteArray, logical: schema.StringLogicalType{}.String()}
	dbl := wantColumn{physical: parquet.Types.Double, logical: schema.NoLogicalType{}.String()}
	i64 := wantColumn{physical: parquet.Types.Int64, logical: schema.NewIntLogicalType(64, true).String()}
	named := func(c wantColumn, name string) wantColumn { c.name = name; return c }

	codes := filepath.Join(dir, CodesFile)
	if err := WriteCodes(codes, Codes{GeneIDs: []string{"g"}, GeneNames: []string{"G"}, L: 3, Mean: []float64{0, 0.5, 1}}); err != nil {
		t.Fatal(err)
	}
	cells := filepath.Join(dir, CellsFile)
	if err := WriteCells(cells, Cells{Barcodes: []string{"b"}, L: 2, Mean: []float64{0.25, 0.75}}); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(dir, TraceFile)
	if err := WriteTrace(trace, []TraceRow{{Sweep: 1, Phase: PhaseBurnIn}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, table string
		want        []wantColumn
	}{
		{codes, "codes", []wantColumn{named(str, "gene_id"), named(str, "gene_name"), named(dbl, "code_1"), named(dbl, "code_2"), named(dbl, "code_3")}},
		{cells, "cells", []wantColumn{named(str, "barcode"), named(dbl, "code_1"), named(dbl, "code_2")}},
		{trace, "trace", []wantColumn{named(i64, "sweep"), named(str, "phase"), named(dbl, "lambda"), named(dbl, "dropout"), named(dbl, "background"), named(dbl, "loglik"),
			named(dbl, "train_accuracy"), named(i64, "flips"), named(dbl, "seconds")}},
	} {
		cols, kv := parquetColumns(t, tc.path)
		if !slices.Equal(cols, tc.want) {
			t.Errorf("%s columns:\n got %v\nwant %v", tc.table, cols, tc.want)
		}
		if kv["scpipe.table"] != tc.table || kv["scpipe.format_version"] != formatVersion {
			t.Errorf("%s key-value metadata %v", tc.table, kv)
		}
		r, err := file.OpenParquetFile(tc.path, false)
		if err != nil {
			t.Fatal(err)
		}
		// A REPEATED root (arrow-go's default) is what hyparquet cannot read.
		if rep := r.MetaData().Schema.Root().RepetitionType(); rep != parquet.Repetitions.Required {
			t.Errorf("%s schema root is %s, want REQUIRED", tc.table, rep)
		}
		for i := range r.MetaData().Schema.NumColumns() {
			cc, err := r.MetaData().RowGroup(0).ColumnChunk(i)
			if err != nil {
				t.Fatal(err)
			}
			if cc.Compression().String() != "SNAPPY" {
				t.Errorf("%s column %d compressed with %s, want SNAPPY", tc.table, i, cc.Compression())
			}
			for _, st := range cc.EncodingStats() {
				if st.PageType.String() == "DATA_PAGE_V2" {
					t.Errorf("%s column %d has v2 data pages, want v1", tc.table, i)
				}
			}
		}
		r.Close()
	}
}

func TestReadRejectsWrongTable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cells := filepath.Join(dir, CellsFile)
	if err := WriteCells(cells, Cells{Barcodes: []string{"b"}, L: 1, Mean: []float64{1}}); err != nil {
		t.Fatal(err)
	}
	notParquet := filepath.Join(dir, "junk.parquet")
	if err := os.WriteFile(notParquet, []byte("not parquet at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		read func() error
		path string
	}{
		{"codes from cells", func() error { _, err := ReadCodes(cells); return err }, cells},
		{"trace from cells", func() error { _, err := ReadTrace(cells); return err }, cells},
		{"cells from junk", func() error { _, err := ReadCells(notParquet); return err }, notParquet},
		{"missing", func() error { _, err := ReadCells(filepath.Join(dir, "nope")); return err }, filepath.Join(dir, "nope")},
	} {
		if err := tc.read(); err == nil || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: err = %v, want an error naming %s", tc.name, err, tc.path)
		}
	}
}

func TestTraceRoundTrip(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 125} {
		rows := make([]TraceRow, n)
		for i := range rows {
			rows[i] = TraceRow{
				Sweep: int64(i + 1), Phase: PhaseSample, Lambda: 0.5 + float64(i)/7,
				LogLik: -1e9 + float64(i)*1e3, TrainAccuracy: 0.9 + float64(i)/1e4, Flips: int64(1e10) - int64(i), Seconds: 0.25 * float64(i),
			}
			if i < 25 {
				rows[i].Phase = PhaseBurnIn
			}
		}
		path := filepath.Join(t.TempDir(), TraceFile)
		if err := writeTrace(path, rows, 50); err != nil {
			t.Fatal(err)
		}
		got, err := ReadTrace(path)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, rows) {
			t.Errorf("n=%d: read back %v, wrote %v", n, got, rows)
		}
	}
}

func TestSummaryRoundTrip(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	// A variable, so that 0.1 + 0.2 is rounded at run time, not folded exactly.
	tenth := 0.1
	rows := []SummaryRow{ // sorted; the file is written from a shuffled copy
		{L: 2, Chain: 1, Sweeps: 125, Lambda: 2.5, Dropout: 0.6, Background: 0.04, LogLik: -123456.789, TrainAccuracy: 0.91, HeldoutAccuracy: 0.9, HeldoutLogPred: -0.3, Seconds: 12.5, Agreement: 1, RHatLogLik: 1.01,
			HeldoutLogPredSE: 0.003, HeldoutAccuracySE: 0.0015, LogPredGap: 0.002, LogPredGapSE: 0.0005, LogPredTolerance: 0.0005, RHat: 1.2, RHatWithin: 1.05,
			Programs: 2, StablePrograms: 1, StableCodes: []int{2}},
		{L: 2, Chain: 2, Sweeps: 125, Converged: "no", Lambda: tenth + 0.2, LogLik: -1e-300, TrainAccuracy: 1, HeldoutAccuracy: nan, HeldoutLogPred: nan, Seconds: 0, Agreement: 0.75, RHatLogLik: 1.01,
			HeldoutLogPredSE: nan, HeldoutAccuracySE: nan, LogPredGap: nan, LogPredGapSE: nan, LogPredTolerance: nan, RHat: math.Inf(1), RHatWithin: 1,
			Programs: 3, StablePrograms: 1, StableCodes: []int{3}},
		{L: 10, Chain: 1, Sweeps: 3, Lambda: math.Inf(1), LogLik: math.Inf(-1), TrainAccuracy: 5e-324, HeldoutAccuracy: nan, HeldoutLogPred: nan, Seconds: 1, Agreement: 1, RHatLogLik: nan, Recommended: true,
			HeldoutLogPredSE: nan, HeldoutAccuracySE: nan, LogPredGap: 0, LogPredGapSE: 0, LogPredTolerance: 1e-4, RHat: nan, RHatWithin: nan,
			Programs: 0, StablePrograms: -1, StableCodes: nil},
	}
	path := filepath.Join(t.TempDir(), SummaryFile)
	if err := WriteSummary(path, []SummaryRow{rows[2], rows[1], rows[0]}); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	if want := "L\tchain\tsweeps\tlambda\tloglik\ttrain_accuracy\theldout_accuracy\theldout_logpred\tseconds\tagreement\trhat_loglik\tdropout\tbackground\tconverged\trecommended" +
		"\theldout_logpred_se\theldout_accuracy_se\tlogpred_gap\tlogpred_gap_se\tlogpred_tolerance\trhat\trhat_within\tprograms\tstable_programs\tstable_codes"; lines[0] != want {
		t.Errorf("header %q, want %q", lines[0], want)
	}
	if want := "10\t1\t3\tInf\t-Inf\t5e-324\tNA\tNA\t1\t1\tNA\t0\t0\tNA\tyes\tNA\tNA\t0\t0\t0.0001\tNA\tNA\t0\tNA\tNA"; lines[3] != want {
		t.Errorf("line 4 = %q, want %q", lines[3], want)
	}
	if want := "2\t2\t125\t0.30000000000000004\t-1e-300\t1\tNA\tNA\t0\t0.75\t1.01\t0\t0\tno\tno\tNA\tNA\tNA\tNA\tNA\tInf\t1\t3\t1\t3"; lines[2] != want {
		t.Errorf("line 3 = %q, want %q", lines[2], want)
	}
	got, err := ReadSummary(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("read %d rows, wrote %d", len(got), len(rows))
	}
	for i := range rows {
		g, w := got[i], rows[i]
		gf, wf := append(g.floats(), g.extraFloats()...), append(w.floats(), w.extraFloats()...)
		names := slices.Concat(summaryHeader[3:3+len(g.floats())], extraHeader)
		for j := range gf {
			if math.Float64bits(*gf[j]) != math.Float64bits(*wf[j]) && !(math.IsNaN(*gf[j]) && math.IsNaN(*wf[j])) {
				t.Errorf("row %d column %s: read %v, wrote %v", i, names[j], *gf[j], *wf[j])
			}
		}
		if g.L != w.L || g.Chain != w.Chain || g.Sweeps != w.Sweeps || g.Converged != w.Converged || g.Recommended != w.Recommended ||
			g.Programs != w.Programs || g.StablePrograms != w.StablePrograms || !slices.Equal(g.StableCodes, w.StableCodes) || (g.StableCodes == nil) != (w.StableCodes == nil) {
			t.Errorf("row %d: read %+v, wrote %+v", i, g, w)
		}
	}
}

func TestReadSummaryErrors(t *testing.T) {
	t.Parallel()
	header := strings.Join(summaryHeader, "\t") + "\n"
	// row returns a data line of the header's width with field i set to v.
	row := func(i int, v string) string {
		f := make([]string, len(summaryHeader))
		for k := range f {
			f[k] = "1"
		}
		f[len(f)-2], f[len(f)-1] = "yes", "no"
		f[i] = v
		return strings.Join(f, "\t") + "\n"
	}
	loglik := slices.Index(summaryHeader, "loglik")
	for _, tc := range []struct{ name, text, want string }{
		{"empty", "", "empty file"},
		{"bad header", "L\tchains\n", "header column 2"},
		{"short row", header + "2\t1\t125\n", "line 2"},
		{"bad int", header + row(1, "one"), "column chain"},
		{"bad float", header + row(loglik, "x"), "column loglik"},
		{"bad yes/no", header + row(len(summaryHeader)-1, "maybe"), "not yes or no"},
	} {
		path := filepath.Join(t.TempDir(), SummaryFile)
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadSummary(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one naming %s and %q", tc.name, err, path, tc.want)
		}
	}
	// The columns added later are found by name, and checked.
	full := slices.Concat(summaryHeader, extraHeader)
	fullRow := func(name, v string) string {
		f := strings.Split(strings.TrimSuffix(row(2, "125"), "\n"), "\t")
		f = append(f, "0.1", "0.1", "0", "0", "0", "1", "1", "4", "4", "1,2,3,4")
		f[slices.Index(full, name)] = v
		return strings.Join(f, "\t") + "\n"
	}
	fullHeader := strings.Join(full, "\t") + "\n"
	for _, tc := range []struct{ name, column, value, want string }{
		{"bad extra float", "rhat", "high", "column rhat"},
		{"negative count", "programs", "-2", "column programs"},
		{"bad code list", "stable_codes", "1;2", "column stable_codes"},
		{"code 0", "stable_codes", "0,1", "column stable_codes"},
	} {
		path := filepath.Join(t.TempDir(), SummaryFile)
		if err := os.WriteFile(path, []byte(fullHeader+fullRow(tc.column, tc.value)), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadSummary(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one naming %s and %q", tc.name, err, path, tc.want)
		}
	}
	// A file written before the added columns reads them as not known.
	path := filepath.Join(t.TempDir(), SummaryFile)
	if err := os.WriteFile(path, []byte(header+row(2, "125")), 0o644); err != nil {
		t.Fatal(err)
	}
	if rows, err := ReadSummary(path); err != nil || len(rows) != 1 || rows[0].Sweeps != 125 || !math.IsNaN(rows[0].LogPredGap) ||
		!math.IsNaN(rows[0].RHatWithin) || rows[0].Programs != -1 || rows[0].StablePrograms != -1 || rows[0].StableCodes != nil {
		t.Errorf("a file of the first version: rows %+v, err %v", rows, err)
	}
	// Extra columns from a later version are ignored, wherever they are.
	path = filepath.Join(t.TempDir(), SummaryFile)
	if err := os.WriteFile(path, []byte(strings.Replace(fullHeader, "\trhat\t", "\tfuture\trhat\t", 1)+
		strings.Replace(fullRow("stable_codes", "none"), "\t1\t1\t4", "\tx\t1\t1\t4", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if rows, err := ReadSummary(path); err != nil || len(rows) != 1 || rows[0].RHat != 1 || rows[0].Programs != 4 || rows[0].StableCodes == nil || len(rows[0].StableCodes) != 0 {
		t.Errorf("a column inserted: rows %+v, err %v", rows, err)
	}
	path = filepath.Join(t.TempDir(), SummaryFile)
	text := strings.TrimSuffix(header, "\n") + "\tfuture\n" + strings.TrimSuffix(row(2, "125"), "\n") + "\tx\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if rows, err := ReadSummary(path); err != nil || len(rows) != 1 || rows[0].Sweeps != 125 {
		t.Errorf("extra column: rows %v, err %v", rows, err)
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	t.Parallel()
	created := time.Date(2025, 3, 1, 12, 30, 0, 123456789, time.UTC)
	for _, size := range []int{0, 1, 1000, 100_000} {
		payload := make([]byte, size)
		for i := range payload {
			payload[i] = byte(i*7 + i>>8)
		}
		meta := CheckpointMeta{L: 5, Chain: 2, Sweep: int64(size), ConfigHash: "sha256:abc", Created: created}
		path := filepath.Join(t.TempDir(), CheckpointFile)
		if err := WriteCheckpoint(path, meta, payload); err != nil {
			t.Fatal(err)
		}
		gm, gp, err := ReadCheckpoint(path)
		if err != nil {
			t.Fatal(err)
		}
		if !gm.Created.Equal(meta.Created) {
			t.Errorf("created %v, want %v", gm.Created, meta.Created)
		}
		gm.Created = meta.Created
		if gm != meta || !slices.Equal(gp, payload) {
			t.Errorf("size %d: read back %+v and %d bytes", size, gm, len(gp))
		}
	}
}

func TestCheckpointDamage(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), CheckpointFile)
	payload := []byte("the sampler's state: Z, U, lambda, accumulators, RNG position")
	if err := WriteCheckpoint(path, CheckpointMeta{L: 3, Chain: 1, Sweep: 40, ConfigHash: "h"}, payload); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	payloadAt := len(good) - 4 - len(payload)
	damaged := filepath.Join(t.TempDir(), "damaged.ckpt")
	// check decodes data in memory (the exhaustive loops below would spend
	// seconds on files) and wants an error of kind want, or of either kind.
	check := func(what string, data []byte, want error) {
		t.Helper()
		_, _, err := decodeCheckpoint(data)
		switch {
		case err == nil:
			t.Errorf("%s: not detected", what)
		case want != nil && !errors.Is(err, want):
			t.Errorf("%s: err = %v, want %v", what, err, want)
		case !errors.Is(err, errCorrupt) && !errors.Is(err, errTruncated):
			t.Errorf("%s: err = %v, want errCorrupt or errTruncated", what, err)
		}
	}
	for i := range good {
		for _, mask := range []byte{0x01, 0x80} {
			data := slices.Clone(good)
			data[i] ^= mask
			var want error
			if i >= payloadAt {
				want = errCorrupt
			}
			check(fmt.Sprintf("byte %d ^ %#x", i, mask), data, want)
		}
	}
	for n := range len(good) {
		check(fmt.Sprintf("truncated to %d bytes", n), good[:n], errTruncated)
	}
	check("trailing garbage", append(slices.Clone(good), 0), errCorrupt)

	// Through the file API, errors keep their kind and name the file.
	flipped := slices.Clone(good)
	flipped[payloadAt+3] ^= 0x10
	for _, tc := range []struct {
		what string
		data []byte
		want error
	}{{"flipped payload byte", flipped, errCorrupt}, {"truncated payload", good[:payloadAt+5], errTruncated}} {
		if err := os.WriteFile(damaged, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := ReadCheckpoint(damaged)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), damaged) {
			t.Errorf("%s: err = %v, want %v naming %s", tc.what, err, tc.want, damaged)
		}
	}
}

func TestFits(t *testing.T) {
	t.Parallel()
	run := t.TempDir()
	touch := func(L, chain int, names ...string) {
		dir := FitDir(run, L, chain)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	touch(10, 1, CodesFile, CellsFile, TraceFile, CheckpointFile)
	touch(2, 2, CheckpointFile, "."+CodesFile+".tmp-0123456789ab")
	touch(2, 1, CodesFile, CellsFile, TraceFile)
	for _, junk := range []string{"L5/chain1", "L05/chain01", "L05/chainX", "Lxx/chain1", "other"} {
		if err := os.MkdirAll(filepath.Join(run, junk), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(run, SummaryFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Fits(run)
	if err != nil {
		t.Fatal(err)
	}
	want := []Fit{
		{L: 2, Chain: 1, Dir: FitDir(run, 2, 1), Codes: true, Cells: true, Trace: true},
		{L: 2, Chain: 2, Dir: FitDir(run, 2, 2), Checkpoint: true},
		{L: 10, Chain: 1, Dir: FitDir(run, 10, 1), Codes: true, Cells: true, Trace: true, Checkpoint: true},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Fits =\n%+v\nwant\n%+v", got, want)
	}
	if !got[0].Complete() || got[1].Complete() {
		t.Errorf("Complete: %v %v, want true false", got[0].Complete(), got[1].Complete())
	}
	if _, err := Fits(filepath.Join(run, "missing")); err == nil {
		t.Error("Fits of a missing run: no error")
	}
}

// TestOptionalColumnsRoundTrip writes the columns that not every fit has
// (the housekeeping code, each gene's offset, each cell's rates) and reads
// them back, and
// checks that a fit without them still reads as before.
func TestOptionalColumnsRoundTrip(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	const genes, cells, L = 9, 6, 3
	codes := Codes{GeneIDs: make([]string, genes), GeneNames: make([]string, genes), L: L, Mean: randomMatrix(r, genes, L),
		Housekeeping: randomMatrix(r, genes, 1)}
	for i := range codes.GeneIDs {
		codes.GeneIDs[i], codes.GeneNames[i] = fmt.Sprintf("g%d", i), fmt.Sprintf("G%d", i)
	}
	cl := Cells{Barcodes: make([]string, cells), L: L, Mean: randomMatrix(r, cells, L),
		Dropout: randomMatrix(r, cells, 1), Background: randomMatrix(r, cells, 1)}
	for i := range cl.Barcodes {
		cl.Barcodes[i] = fmt.Sprintf("bc%d", i)
	}
	dir := t.TempDir()
	if err := WriteCodes(filepath.Join(dir, CodesFile), codes); err != nil {
		t.Fatal(err)
	}
	if err := WriteCells(filepath.Join(dir, CellsFile), cl); err != nil {
		t.Fatal(err)
	}
	gotCodes, err := ReadCodes(filepath.Join(dir, CodesFile))
	if err != nil {
		t.Fatal(err)
	}
	if gotCodes.L != L || !slices.Equal(gotCodes.Mean, codes.Mean) || !slices.Equal(gotCodes.Housekeeping, codes.Housekeeping) {
		t.Errorf("codes: read back %+v, wrote %+v", gotCodes, codes)
	}
	gotCells, err := ReadCells(filepath.Join(dir, CellsFile))
	if err != nil {
		t.Fatal(err)
	}
	if gotCells.L != L || !slices.Equal(gotCells.Mean, cl.Mean) || !slices.Equal(gotCells.Dropout, cl.Dropout) ||
		!slices.Equal(gotCells.Background, cl.Background) {
		t.Errorf("cells: read back %+v, wrote %+v", gotCells, cl)
	}
	cl.Background = nil
	if err := WriteCells(filepath.Join(dir, "bad.parquet"), cl); err == nil {
		t.Error("cells with dropout rates but no background rates written")
	}
	// The genes' scores and offsets (per-gene levels), each with and
	// without the columns between them.
	lift, score := randomMatrix(r, genes, 1), randomMatrix(r, genes, L)
	for _, tc := range []struct{ score, hk, lift []float64 }{
		{score, codes.Housekeeping, lift}, {nil, nil, lift}, {nil, nil, nil}, {score, nil, nil}, {score, nil, lift}, {nil, codes.Housekeeping, nil},
	} {
		for _, cL := range []int{L, 2} { // 2 codes and their 2 scores are 4 columns, as 4 codes would be
			c := codes
			c.L, c.Mean = cL, randomMatrix(r, genes, cL)
			c.Housekeeping, c.GeneLift, c.Score = tc.hk, tc.lift, nil
			if tc.score != nil {
				c.Score = randomMatrix(r, genes, cL)
			}
			path := filepath.Join(dir, fmt.Sprintf("codes-%d-%v-%v-%v.parquet", cL, tc.score != nil, tc.hk != nil, tc.lift != nil))
			if err := WriteCodes(path, c); err != nil {
				t.Fatal(err)
			}
			got, err := ReadCodes(path)
			if err != nil {
				t.Fatal(err)
			}
			if got.L != cL || !slices.Equal(got.Mean, c.Mean) || !slices.Equal(got.Score, c.Score) ||
				!slices.Equal(got.Housekeeping, c.Housekeeping) || !slices.Equal(got.GeneLift, c.GeneLift) {
				t.Errorf("L %d, scores %v, housekeeping %v, gene offsets %v: read back %+v, wrote %+v",
					cL, tc.score != nil, tc.hk != nil, tc.lift != nil, got, c)
			}
		}
	}
	badScore := codes
	badScore.Score = score[:genes*L-1]
	if err := WriteCodes(filepath.Join(dir, "badscore.parquet"), badScore); err == nil {
		t.Error("codes with a score missing written")
	}
	short := codes
	short.GeneLift = lift[:genes-1]
	if err := WriteCodes(filepath.Join(dir, "short.parquet"), short); err == nil {
		t.Error("codes with an offset missing written")
	}
	// The samples' own offsets, after the genes', with and without scores
	// and the housekeeping code before them; a sample named like a code's
	// column is still the sample's.
	samples := []string{"donor A", "code_1", "lib.2"}
	sampleLift := [][]float64{randomMatrix(r, genes, 1), randomMatrix(r, genes, 1), randomMatrix(r, genes, 1)}
	for i, tc := range []struct{ score, hk []float64 }{{score, codes.Housekeeping}, {nil, nil}} {
		c := codes
		c.Score, c.Housekeeping, c.GeneLift, c.Samples, c.SampleGeneLift = tc.score, tc.hk, lift, samples, sampleLift
		path := filepath.Join(dir, fmt.Sprintf("codes-samples-%d.parquet", i))
		if err := WriteCodes(path, c); err != nil {
			t.Fatal(err)
		}
		got, err := ReadCodes(path)
		if err != nil {
			t.Fatal(err)
		}
		if got.L != L || !slices.Equal(got.Mean, c.Mean) || !slices.Equal(got.Score, c.Score) || !slices.Equal(got.GeneLift, lift) ||
			!slices.Equal(got.Samples, samples) || !slices.EqualFunc(got.SampleGeneLift, sampleLift, slices.Equal) {
			t.Errorf("samples' offsets, scores %v: read back %+v, wrote %+v", tc.score != nil, got, c)
		}
	}
	for name, c := range map[string]Codes{
		"a sample's offsets without the genes'": {GeneIDs: codes.GeneIDs, GeneNames: codes.GeneNames, L: L, Mean: codes.Mean,
			Samples: samples[:1], SampleGeneLift: sampleLift[:1]},
		"a sample's offsets missing": {GeneIDs: codes.GeneIDs, GeneNames: codes.GeneNames, L: L, Mean: codes.Mean, GeneLift: lift,
			Samples: samples, SampleGeneLift: sampleLift[:2]},
		"an offset of a sample missing": {GeneIDs: codes.GeneIDs, GeneNames: codes.GeneNames, L: L, Mean: codes.Mean, GeneLift: lift,
			Samples: samples[:1], SampleGeneLift: [][]float64{lift[:genes-1]}},
	} {
		if err := WriteCodes(filepath.Join(dir, "bad-samples.parquet"), c); err == nil {
			t.Errorf("codes with %s written", name)
		}
	}
}

// TestTablesOneEncodingPerChunk checks that no column chunk of a full row
// group of barcodes and rates mixes page encodings: a chunk whose
// dictionary overflows falls back to plain pages, and arrow-go writes the
// counts of its two encodings in a Go map's order, so that the same table
// would come out in different bytes from one run to the next. It writes
// the table twice and compares the bytes too.
func TestTablesOneEncodingPerChunk(t *testing.T) {
	t.Parallel()
	const cells, L = batchRows, 2
	rng := rand.New(rand.NewPCG(5, 6))
	c := Cells{Barcodes: make([]string, cells), L: L, Mean: randomMatrix(rng, cells, L),
		Dropout: randomMatrix(rng, cells, 1), Background: randomMatrix(rng, cells, 1)}
	for i := range c.Barcodes {
		c.Barcodes[i] = fmt.Sprintf("AAACCTGAGA%06d-1", i) // 65 536 × 22 bytes: past a 1 MB dictionary page
	}
	dir := t.TempDir()
	var files [2][]byte
	for k := range files {
		path := filepath.Join(dir, fmt.Sprintf("cells%d.parquet", k))
		if err := WriteCells(path, c); err != nil {
			t.Fatal(err)
		}
		r, err := file.OpenParquetFile(path, false)
		if err != nil {
			t.Fatal(err)
		}
		for g := range r.NumRowGroups() {
			rg := r.MetaData().RowGroup(g)
			for j := range rg.NumColumns() {
				cc, err := rg.ColumnChunk(j)
				if err != nil {
					t.Fatal(err)
				}
				data := map[parquet.Encoding]bool{}
				for _, st := range cc.EncodingStats() {
					if st.PageType.String() == "DATA_PAGE" {
						data[parquet.Encoding(st.Encoding)] = true
					}
				}
				if len(data) != 1 {
					t.Errorf("row group %d, column %s: data pages of %d encodings %v", g, cc.PathInSchema(), len(data), data)
				}
			}
		}
		r.Close()
		if files[k], err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(files[0], files[1]) {
		t.Error("the same cells table written twice differs")
	}
}

// TestCappedAllocator checks that the decoder's allocator refuses buffers
// past maxAllocation, which only a damaged page header asks for.
func TestCappedAllocator(t *testing.T) {
	t.Parallel()
	a := cappedAllocator{memory.DefaultAllocator}
	for _, tc := range []struct {
		n    int
		fail bool
	}{{1 << 20, false}, {maxAllocation, false}, {maxAllocation + 1, true}, {1 << 31, true}} {
		for name, alloc := range map[string]func(){
			"Allocate":   func() { a.Free(a.Allocate(tc.n)) },
			"Reallocate": func() { a.Free(a.Reallocate(tc.n, a.Allocate(64))) },
		} {
			panicked := func() (p bool) {
				defer func() { p = recover() != nil }()
				alloc()
				return false
			}()
			if panicked != tc.fail {
				t.Errorf("%s(%d): panicked %v, want %v", name, tc.n, panicked, tc.fail)
			}
		}
	}
}
