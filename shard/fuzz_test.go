package shard

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzManifest checks that parsing and validating any manifest.json never
// panics, and that whatever it accepts is self-consistent enough for Open to
// map: every data file the layout needs is listed with its exact size.
func FuzzManifest(f *testing.F) {
	for _, l := range []Layout{
		{Cells: 1, Genes: 1},
		{Cells: 130, Genes: 70, RowsPerBlock: 64, GenesPerTile: 30, Masked: true},
		{Cells: 64, Genes: 129, RowsPerBlock: 128},
	} {
		dir := filepath.Join(f.TempDir(), "seed.shard")
		w, err := Create(dir, l, CreateOptions{})
		if err != nil {
			f.Fatal(err)
		}
		w.Set(0, 0)
		m := Manifest{GeneIDs: names("g", l.Genes), Source: Source{Path: "in.h5", Format: "10x-h5-v3"}}
		if err := w.Commit(context.Background(), m); err != nil {
			f.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, ManifestName))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		``, `{}`, `null`, `[]`, `{"format_version": 1}`,
		`{"format_version":1,"cells":5,"genes":5,"layout":{"cells":5,"genes":5,"rows_per_block":64,"genes_per_tile":5,"words_per_row":1,"cell_blocks":1,"gene_tiles":1},"checksum":"crc32c"}`,
		`{"format_version":1,"cells":2147483647,"genes":2147483647,"layout":{"cells":2147483647,"genes":2147483647,"rows_per_block":64,"genes_per_tile":1,"words_per_row":33554432,"cell_blocks":33554432,"gene_tiles":2147483647},"checksum":"crc32c","files":[]}`,
		`{"format_version":1,"cells":-1,"genes":3,"layout":{"rows_per_block":-64}}`,
		`{"format_version":1,"ones":-5,"density":"NaN"}`,
		`{"format_version":1,"files":[{"name":"../../etc/passwd"},{"name":""}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseManifest(data)
		if err != nil {
			return
		}
		l := m.Layout
		if l.Cells < 1 || l.Genes < 1 || l.RowsPerBlock%64 != 0 || len(m.Files) == 0 {
			t.Fatalf("accepted an impossible manifest: %+v", m)
		}
		sizes := map[string]int64{}
		for _, f := range m.Files {
			sizes[f.Name] = f.Bytes
		}
		for b := range l.CellBlocks {
			if sizes[blockName(KindX, b)] != l.blockBytes(b) {
				t.Fatalf("accepted manifest without a correct %s", blockName(KindX, b))
			}
		}
		// Accepted manifests survive a round trip through JSON unchanged.
		again, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parseManifest(again); err != nil {
			t.Fatalf("re-encoded accepted manifest rejected: %v", err)
		}
	})
}
