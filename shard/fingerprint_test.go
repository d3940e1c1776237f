package shard

import (
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// TestFingerprint: the fingerprint follows the data and the annotations,
// not the manifest's bookkeeping (creation time, tool, source path).
func TestFingerprint(t *testing.T) {
	t.Parallel()
	x := randomDense(rand.New(rand.NewPCG(5, 5)), 130, 70, 0.2)
	bcs := names("AAAC-", 130)
	write := func(x *dense, m Manifest) string {
		dst := filepath.Join(t.TempDir(), "s")
		writeShard(t, dst, Layout{RowsPerBlock: 64}, x, nil, m, 1)
		return openShard(t, dst).Manifest().Fingerprint()
	}
	base := write(x, Manifest{Tool: "a", Created: "2025-01-01T00:00:00Z", Barcodes: bcs, Source: Source{Path: "in.h5"}})
	if len(base) != 64 {
		t.Fatalf("fingerprint %q, want 64 hex digits", base)
	}
	if again := write(x, Manifest{Tool: "b", Created: "2026-01-01T00:00:00Z", Barcodes: bcs, Source: Source{Path: "elsewhere/in.h5"}}); again != base {
		t.Errorf("same data, other bookkeeping: fingerprint %s, want %s", again, base)
	}
	flipped := randomDense(rand.New(rand.NewPCG(5, 5)), 130, 70, 0.2)
	flipped.rows[77] = append(flipped.rows[77], 69)
	if flipped.bit[77][69] {
		t.Fatal("test bit already set")
	}
	if fp := write(flipped, Manifest{Barcodes: bcs}); fp == base {
		t.Error("one bit more: same fingerprint")
	}
	other := append([]string(nil), bcs...)
	other[3] = "TTTT-1"
	if fp := write(x, Manifest{Barcodes: other}); fp == base {
		t.Error("another barcode: same fingerprint")
	}
}
