package ingest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"scpipe/ingest/internal/h5gen"
	"scpipe/internal/anndata"
	"scpipe/shard"
)

// shardRows returns the rows of an ingested matrix as bit words.
func shardRows(t *testing.T, dir string) (*shard.Manifest, [][]uint64) {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows := make([][]uint64, s.Manifest().Cells)
	for i := range rows {
		rows[i] = slices.Clone(s.X().Segment(i, 0))
	}
	return s.Manifest(), rows
}

// Open is shard.Open (a name local to these tests).
var Open = shard.Open

// TestAppendKeepsFile appends elements with anndata.Append to AnnData files
// written by h5gen (superblock 2, checksummed version-2 headers: the repo's
// test writer) and by anndata itself (anndata's own v0.7.8 fixture: h5py,
// superblock 0, LZF-filtered datasets), twice (the second replaces the
// first's elements), and reads the copy with ingest's reader, which checks
// every checksum: names and matrix are the input's.
func TestAppendKeepsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gen := filepath.Join(dir, "gen.h5ad")
	x := h5gen.CSR{Rows: 3, Cols: 4, Indptr: []int64{0, 2, 2, 4}, Indices: []int64{0, 3, 1, 2}, Data: []float64{1, 5, 2, 1}}
	if err := h5gen.WriteH5ADCSR(gen, x, []string{"c1", "c2", "c3"}, []string{"g1", "g2", "g3", "g4"}, h5gen.Options{}); err != nil {
		t.Fatal(err)
	}
	inputs := []string{gen}
	for _, v := range []string{"v0.7.0", "v0.7.8"} {
		if real := filepath.Join("..", "..", "shared", "data", "anndata-h5ad", v, "adata.h5ad"); fileExists(real) {
			inputs = append(inputs, real)
		} else if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing", real)
		}
	}
	for i, in := range inputs {
		before, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		obs, vars, ids, err := AnnDataNames(in, 0)
		if err != nil {
			t.Fatal(err)
		}
		src := in
		for round := range 2 {
			out := filepath.Join(dir, "out"+string(rune('a'+i))+string(rune('0'+round))+".h5ad")
			w, err := anndata.Append(context.Background(), src, out)
			if err != nil {
				t.Fatal(err)
			}
			w.Remove("/obsm/X_test")
			w.Remove("/uns/test")
			w.Dict("/obsm")
			w.Matrix("/obsm/X_test", len(obs), 1, make([]float64, len(obs)))
			w.Dict("/uns")
			w.Dict("/uns/test")
			w.Int64("/uns/test/round", int64(round))
			if err := w.Commit(); err != nil {
				t.Fatalf("%s round %d: %v", in, round, err)
			}
			o2, v2, i2, err := AnnDataNames(out, 0)
			if err != nil {
				t.Fatalf("%s round %d: %v", in, round, err)
			}
			if !slices.Equal(o2, obs) || !slices.Equal(v2, vars) || !slices.Equal(i2, ids) {
				t.Errorf("%s round %d: names changed", in, round)
			}
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			for _, p := range []struct{ in, out string }{{in, a}, {out, b}} {
				os.RemoveAll(p.out)
				if _, err := Run(context.Background(), Options{Input: p.in, Output: p.out}); err != nil {
					t.Fatal(err)
				}
			}
			ma, ra := shardRows(t, a)
			mb, rb := shardRows(t, b)
			if ma.Fingerprint() != mb.Fingerprint() || !slices.EqualFunc(ra, rb, slices.Equal) {
				t.Errorf("%s round %d: the copy's matrix differs", in, round)
			}
			src = out
		}
		after, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(before, after) {
			t.Errorf("%s was modified", in)
		}
	}
}

// TestAppendRefusesOldAnnData: anndata 0.5 stored obsm as one compound
// dataset, which cannot gain a key without rewriting it; Append refuses it
// with an error naming the file, and writes nothing.
func TestAppendRefusesOldAnnData(t *testing.T) {
	t.Parallel()
	in := filepath.Join("..", "..", "shared", "data", "anndata-h5ad", "v0.5.0", "adata.h5ad")
	if !fileExists(in) {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing", in)
		}
		t.Skipf("%s is missing (../shared/data is not beside the repository)", in)
	}
	out := filepath.Join(t.TempDir(), "out.h5ad")
	w, err := anndata.Append(context.Background(), in, out)
	if err == nil {
		w.Dict("/obsm")
		w.Matrix("/obsm/X_test", 1, 1, []float64{0})
		err = w.Commit()
	}
	if err == nil || !strings.Contains(err.Error(), "adata.h5ad") {
		t.Fatalf("appending to anndata 0.5's file: %v, want an error naming it", err)
	}
	if fileExists(out) {
		t.Errorf("%s written", out)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
