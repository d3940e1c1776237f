package shard

import (
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// transposeImpls are the 64×64 transpositions to test; files built for
// vector units add theirs.
var transposeImpls = map[string]func(*[64]uint64){"go": transpose64Go, "default": transpose64}

// TestTranspose64 checks every transposition this machine has against the
// reference loop (tests touching tiles then run the one selected).
func TestTranspose64(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 60 {
		var a, want [64]uint64
		for r := range a {
			switch trial % 4 {
			case 0:
				a[r] = rng.Uint64()
			case 1:
				a[r] = 1 << uint(rng.IntN(64))
			case 2:
				a[r] = rng.Uint64() & rng.Uint64() & rng.Uint64()
			default:
				a[r] = uint64(r) * 0x0101010101010101 // every byte of a row alike
			}
		}
		for r := range 64 {
			for c := range 64 {
				want[c] |= (a[r] >> c & 1) << r
			}
		}
		for name, f := range transposeImpls {
			got := a
			f(&got)
			if got != want {
				t.Fatalf("trial %d: transpose64 (%s) differs from the reference loop", trial, name)
			}
		}
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	edges := []int{1, 63, 64, 65, 127, 128, 129}
	type tc struct {
		cells, genes, rowsPerBlock, genesPerTile int
		p                                        float64
	}
	var cases []tc
	// Word boundaries in both dimensions, automatic layout (one block).
	for _, c := range edges {
		for _, g := range edges {
			cases = append(cases, tc{c, g, 0, 0, 0.15})
		}
	}
	// Block and tile boundaries with small overrides.
	for _, c := range []int{63, 64, 65, 127, 128, 129, 191, 192, 193, 320} {
		for _, g := range []struct{ genes, tile int }{{1, 1}, {65, 64}, {129, 7}, {130, 65}, {200, 200}} {
			cases = append(cases, tc{c, g.genes, 64, g.tile, 0.1})
		}
	}
	cases = append(cases,
		tc{129, 130, 128, 64, 1},  // all ones: padding must stay zero
		tc{129, 130, 64, 64, 0},   // all zeros
		tc{300, 77, 192, 77, 0.5}, // blocks of 3 words
	)
	for _, c := range cases {
		rng := rand.New(rand.NewPCG(uint64(c.cells), uint64(c.genes)))
		want := randomDense(rng, c.cells, c.genes, c.p)
		dst := filepath.Join(t.TempDir(), "x.shard")
		writeShard(t, dst, Layout{RowsPerBlock: c.rowsPerBlock, GenesPerTile: c.genesPerTile}, want, nil, Manifest{}, uint64(c.cells))
		s := openShard(t, dst)
		checkMatrices(t, s.X(), s.XT(), want)
		m := s.Manifest()
		if m.Ones != want.ones() || m.Cells != c.cells || m.Genes != c.genes {
			t.Fatalf("%+v: manifest %d×%d with %d ones, want %d×%d with %d", c, m.Cells, m.Genes, m.Ones, c.cells, c.genes, want.ones())
		}
		if s.Mask() != nil || s.MaskT() != nil {
			t.Fatalf("%+v: unmasked shard has mask planes", c)
		}
		if got := len(s.XT().Segments()) - 1; got != m.Layout.CellBlocks || got != len(s.CellBlocks()) {
			t.Fatalf("%+v: XT has %d segments, layout %d cell blocks", c, got, m.Layout.CellBlocks)
		}
		for b, r := range s.CellBlocks() {
			if r.Lo != s.XT().Segments()[b] || r.Hi != s.XT().Segments()[b+1] {
				t.Fatalf("%+v: cell block %d = %v, XT segment [%d, %d)", c, b, r, s.XT().Segments()[b], s.XT().Segments()[b+1])
			}
		}
		if err := s.Verify(t.Context(), 0); err != nil {
			t.Fatalf("%+v: Verify: %v", c, err)
		}
	}
}

func TestMaskedRoundTrip(t *testing.T) {
	t.Parallel()
	s := openShard(t, smallShard(t))
	rng := rand.New(rand.NewPCG(7, 7))
	x := randomDense(rng, 150, 70, 0.2)
	mask := randomDense(rng, 150, 70, 0.9)
	checkMatrices(t, s.X(), s.XT(), x)
	if s.Mask() == nil || s.MaskT() == nil {
		t.Fatal("masked shard without mask planes")
	}
	checkMatrices(t, s.Mask(), s.MaskT(), mask)
	if m := s.Manifest(); m.Observed != mask.ones() || m.Ones != x.ones() {
		t.Fatalf("observed %d ones %d, want %d and %d", m.Observed, m.Ones, mask.ones(), x.ones())
	}
	if err := s.Verify(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
}
