package ingest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/ingest/internal/h5gen"
)

func TestLooksLikeBarcode(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"AAACCTGAGAAACCAT-1", true}, // 10x v2/v3
		{"AAACATACAACCAC-1", true},   // 10x v1
		{"AAACCTGAGAAACCAT", true},   // no suffix
		{"pbmc1_AAACCTGAGAAACCAT-12", true},
		{"sample:AAACCTGAGAAACCATx", false},
		{"ACGTACG", false}, // too short to tell
		{"ENSG00000141510", false},
		{"CD3E", false},
		{"GATA1", false},
		{"ACTB", false},
		{"", false},
		{"-1", false},
	} {
		if got := looksLikeBarcode(tc.s); got != tc.want {
			t.Errorf("looksLikeBarcode(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

func TestAxesWarning(t *testing.T) {
	bcs := func(n int) []string {
		s := make([]string, n)
		for i := range s {
			digits := fmt.Sprintf("AAAC%012d", i)
			s[i] = strings.NewReplacer("0", "A", "1", "C", "2", "G", "3", "T", "4", "A", "5", "C", "6", "G", "7", "T", "8", "A", "9", "C").Replace(digits) + "-1"
		}
		return s
	}
	ens := func(n int) []string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf("ENSMUSG%011d", i)
		}
		return s
	}
	for _, tc := range []struct {
		name      string
		f         features
		barcodes  []string
		transpose bool
		want      []string // "" parts: no warning
	}{
		{"right way round", features{IDs: ens(50), Names: names("Gene", 50)}, bcs(80), false, nil},
		{"no names", features{IDs: numbered(50)}, numbered(80), false, nil},
		{"genes named like barcodes", features{IDs: bcs(80), Names: bcs(80)}, names("Xkr", 50), false,
			[]string{"genes are named like cell barcodes", "--transpose", "50 cells × 80 genes"}},
		{"both axes swapped", features{IDs: bcs(80)}, ens(50), false,
			[]string{"genes are named like cell barcodes", "cells are named like Ensembl gene ids", "--transpose"}},
		{"swapped by --transpose", features{IDs: bcs(80)}, ens(50), true, []string{"without --transpose"}},
		{"a few odd names", features{IDs: append(ens(45), bcs(5)...)}, append(bcs(75), ens(5)...), false, nil},
	} {
		got := axesWarning("m.h5ad", len(tc.barcodes), len(tc.f.IDs), tc.f, tc.barcodes, tc.transpose)
		if (got == "") != (tc.want == nil) {
			t.Errorf("%s: warning %q", tc.name, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: warning %q lacks %q", tc.name, got, w)
			}
		}
	}
}

// TestSwappedAxesWarned ingests an AnnData file stored genes × cells: read
// as it is, ingest warns that its axes look swapped; with --transpose it
// does not.
func TestSwappedAxesWarned(t *testing.T) {
	genes := []string{"ENSG00000243485", "ENSG00000237613", "ENSG00000186092", "ENSG00000238009"}
	cells := []string{"AAACCTGAGAAACCAT-1", "AAACCTGAGAAACCGC-1", "AAACCTGAGAAACCTA-1"}
	// 4 genes × 3 cells as rows × columns.
	x := h5gen.CSR{Rows: 4, Cols: 3, Indptr: []int64{0, 2, 3, 4, 6}, Indices: []int64{0, 2, 1, 0, 1, 2}, Data: []float64{1, 2, 3, 4, 5, 6}}
	in := filepath.Join(t.TempDir(), "genes_by_cells.h5ad")
	if err := h5gen.WriteH5ADCSR(in, x, genes, cells, h5gen.Options{DataType: "float64"}); err != nil {
		t.Fatal(err)
	}
	for _, transpose := range []bool{false, true} {
		var log bytes.Buffer
		opt := exact(in, filepath.Join(t.TempDir(), "shards"))
		opt.Transpose = transpose
		opt.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))
		if _, err := Run(context.Background(), opt); err != nil {
			t.Fatal(err)
		}
		warned := strings.Contains(log.String(), "look swapped") && strings.Contains(log.String(), "--transpose")
		if warned == transpose {
			t.Errorf("--transpose %v: log %q", transpose, log.String())
		}
	}
}

// TestSwappedAxesWarnedRealFile: the brain subset's AnnData file (cells ×
// genes, barcodes on obs) ingested with --transpose by mistake is warned
// about.
func TestSwappedAxesWarnedRealFile(t *testing.T) {
	var log bytes.Buffer
	opt := DefaultOptions()
	opt.Input = filepath.Join(sharedData(t), "brain1m-10k-subset", "derived_anndata080.h5ad")
	opt.Output, opt.Transpose = filepath.Join(t.TempDir(), "shards"), true
	opt.MinCellFrac = 0.1 // a small output: the warning comes before the filters
	opt.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if _, err := Run(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	if want := "genes are named like cell barcodes"; !strings.Contains(log.String(), want) || !strings.Contains(log.String(), "without --transpose") {
		t.Errorf("log %q, want a warning that the %s", log.String(), want)
	}
}
