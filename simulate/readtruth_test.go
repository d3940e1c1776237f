package simulate

import (
	"context"
	"os"
	"path/filepath"
	"scpipe/shard"
	"strings"
	"testing"
)

// TestReadTruth reads back the truth that WriteShards wrote and compares
// every noise-free entry with the planted model's.
func TestReadTruth(t *testing.T) {
	for _, p := range []Params{
		{Cells: 130, Genes: 70, L: 3, CodeDensity: 0.2, UsageDensity: 0.4, FlipOn: 0.1, FlipOff: 0.1, Seed: 4},
		func() Params { p := DefaultDigitsParams(); p.Cells = 12; return p }(),
	} {
		tr, err := New(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "sim")
		if err := WriteShards(context.Background(), dir, tr, shard.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := ReadTruth(filepath.Join(dir, TruthDir))
		if err != nil {
			t.Fatal(err)
		}
		if got.L != p.L || len(got.Genes) != p.Genes || len(got.Cells) != p.Cells || got.GeneIDs[5] != tr.GeneID(5) || got.Barcodes[7] != tr.Barcode(7) {
			t.Fatalf("%v: L %d, %d genes, %d cells, names %q %q", p.Kind, got.L, len(got.Genes), len(got.Cells), got.GeneIDs[5], got.Barcodes[7])
		}
		clean := make([]uint64, tr.Words())
		for n := range p.Cells {
			tr.CleanRow(n, clean)
			for g := range p.Genes {
				if got.Clean(n, g) != (clean[g/64]>>(g%64)&1 == 1) {
					t.Fatalf("%v: cell %d gene %d differs", p.Kind, n, g)
				}
			}
		}
	}
}

func TestReadTruthRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, programs, usage, want string
	}{
		{"header", "id\tname\tprogram_1\n", "barcode\tprogram_1\n", "want gene_id"},
		{"column", "gene_id\tgene_name\tprog1\n", "barcode\tprogram_1\n", `column 3 is "prog1"`},
		{"value", "gene_id\tgene_name\tprogram_1\ng1\tG1\t2\n", "barcode\tprogram_1\n", `line 2: program_1 is "2"`},
		{"fields", "gene_id\tgene_name\tprogram_1\ng1\tG1\n", "barcode\tprogram_1\n", "line 2: 2 fields"},
		{"L differs", "gene_id\tgene_name\tprogram_1\n", "barcode\tprogram_1\tprogram_2\n", "2 programs"},
		{"empty", "", "", "empty file"},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, ProgramsFile), []byte(tc.programs), 0o666)
		os.WriteFile(filepath.Join(dir, usageFile), []byte(tc.usage), 0o666)
		if _, err := ReadTruth(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := ReadTruth(t.TempDir()); err == nil || !strings.Contains(err.Error(), ProgramsFile) {
		t.Errorf("missing files: %v", err)
	}
}
