package shard

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestSpecReader decodes a shard the way README.md tells a foreign reader to
// (raw file bytes, names built from the manifest's layout, little-endian
// words, LSB-first bits) without using Open or Matrix, and compares the
// result with the matrix that was written.
func TestSpecReader(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 11))
	want := randomDense(rng, 200, 150, 0.2)
	dir := filepath.Join(t.TempDir(), "spec.shard")
	writeShard(t, dir, Layout{RowsPerBlock: 128, GenesPerTile: 100}, want, nil, Manifest{}, 3)

	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Cells, Genes int
		Layout       struct {
			RowsPerBlock int `json:"rows_per_block"`
			GenesPerTile int `json:"genes_per_tile"`
			WordsPerRow  int `json:"words_per_row"`
			CellBlocks   int `json:"cell_blocks"`
			GeneTiles    int `json:"gene_tiles"`
		}
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	bit := func(data []byte, row, wordsPerRow, j int) bool {
		w := binary.LittleEndian.Uint64(data[(row*wordsPerRow+j/64)*8:])
		return w>>(j%64)&1 == 1
	}
	L := m.Layout
	for b := range L.CellBlocks {
		nb := min(L.RowsPerBlock, m.Cells-b*L.RowsPerBlock)
		x, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("x.%06d.bin", b)))
		if err != nil {
			t.Fatal(err)
		}
		if len(x) != nb*L.WordsPerRow*8 {
			t.Fatalf("x block %d: %d bytes, spec says %d", b, len(x), nb*L.WordsPerRow*8)
		}
		for i := range nb {
			for j := range m.Genes {
				if bit(x, i, L.WordsPerRow, j) != want.bit[b*L.RowsPerBlock+i][j] {
					t.Fatalf("x block %d row %d col %d differs", b, i, j)
				}
			}
		}
		sb := (nb + 63) / 64
		for tile := range L.GeneTiles {
			gt := min(L.GenesPerTile, m.Genes-tile*L.GenesPerTile)
			xt, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("xt.%06d.%06d.bin", b, tile)))
			if err != nil {
				t.Fatal(err)
			}
			if len(xt) != gt*sb*8 {
				t.Fatalf("xt %d.%d: %d bytes, spec says %d", b, tile, len(xt), gt*sb*8)
			}
			for r := range gt {
				for k := range sb * 64 {
					got := bit(xt, r, sb, k)
					if k >= nb {
						if got {
							t.Fatalf("xt %d.%d row %d: padding bit %d set", b, tile, r, k)
						}
						continue
					}
					if got != want.bit[b*L.RowsPerBlock+k][tile*L.GenesPerTile+r] {
						t.Fatalf("xt %d.%d row %d cell %d differs", b, tile, r, k)
					}
				}
			}
		}
	}
}
