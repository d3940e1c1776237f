package shard

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// editManifest rewrites dir/manifest.json through f.
func editManifest(t *testing.T, dir string, f func(m map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, ManifestName)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		break_ func(t *testing.T, dir string)
		want   []string // substrings of the error
	}{
		{"missing manifest", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, ManifestName))
		}, []string{ManifestName, "missing"}},
		{"bad JSON", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, ManifestName), []byte(`{"format_version": 1,`), 0o644)
		}, []string{ManifestName, "bad JSON"}},
		{"unknown version", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { m["format_version"] = 2 })
		}, []string{ManifestName, "format version 2"}},
		{"truncated data file", func(t *testing.T, dir string) {
			os.Truncate(filepath.Join(dir, "xt.000001.000002.bin"), 100)
		}, []string{"xt.000001.000002.bin", "100 bytes", "truncated"}},
		{"missing data file", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "mask.000002.bin"))
		}, []string{"mask.000002.bin", "missing"}},
		{"missing side file", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, barcodesName))
		}, []string{barcodesName, "missing"}},
		{"short side file", func(t *testing.T, dir string) {
			p := filepath.Join(dir, barcodesName)
			os.WriteFile(p, []byte("a\nb\n"), 0o644)
			editManifest(t, dir, func(m map[string]any) {
				for _, f := range m["files"].([]any) {
					if f := f.(map[string]any); f["name"] == barcodesName {
						f["bytes"] = 4
					}
				}
			})
		}, []string{barcodesName, "2 lines, want 150"}},
		{"file not listed", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { m["files"] = m["files"].([]any)[1:] })
		}, []string{"x.000000.bin", "not listed"}},
		{"inconsistent layout", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { m["layout"].(map[string]any)["cell_blocks"] = 2 })
		}, []string{ManifestName, "cell_blocks 2"}},
		{"rows per block not a multiple of 64", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { m["layout"].(map[string]any)["rows_per_block"] = 65 })
		}, []string{ManifestName, "multiple of 64"}},
		{"ones out of range", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { m["ones"] = 1e9 })
		}, []string{ManifestName, "ones"}},
		{"unknown checksum", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { m["checksum"] = "md5" })
		}, []string{ManifestName, `"md5"`}},
		{"path in file name", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) {
				m["files"].([]any)[0].(map[string]any)["name"] = "../x.000000.bin"
			})
		}, []string{ManifestName, "bad name"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := smallShard(t)
			c.break_(t, dir)
			s, err := Open(dir)
			if err == nil {
				// barcodes.tsv is read, and checked, on demand.
				_, err = s.Barcodes()
				s.Close()
				if err == nil {
					t.Fatal("Open and Barcodes succeeded")
				}
			}
			if !errors.Is(err, errFormat) {
				t.Errorf("error %v does not wrap errFormat", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestVerifyDetectsCorruption(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"x.000001.bin", "xt.000002.000001.bin", "maskt.000000.000000.bin", GenesName} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := smallShard(t)
			p := filepath.Join(dir, name)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			data[len(data)/2] ^= 0x10
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			s := openShard(t, dir)
			err = s.Verify(t.Context(), 0)
			if err == nil || !errors.Is(err, errFormat) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "crc32c") {
				t.Fatalf("Verify after flipping a bit of %s: %v", name, err)
			}
			if s, err := OpenVerified(t.Context(), dir, 2); s != nil || !errors.Is(err, errFormat) || !strings.Contains(err.Error(), name) {
				t.Fatalf("OpenVerified after flipping a bit of %s: %v", name, err)
			}
		})
	}
}

func TestVerifyDetectsPaddingBits(t *testing.T) {
	t.Parallel()
	dir := smallShard(t) // 70 genes: bits 70..127 of every X row are padding
	// Set a padding bit in x.000000.bin and record the matching checksum, so
	// that only the padding check can catch it.
	const name = "x.000000.bin"
	p := filepath.Join(dir, name)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data[8+7] |= 0x80 // row 0, word 1, bit 63 = column 127
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	editManifest(t, dir, func(m map[string]any) {
		for _, f := range m["files"].([]any) {
			if f := f.(map[string]any); f["name"] == name {
				f["crc32c"] = crcHex(crc32c(data))
			}
		}
	})
	err = openShard(t, dir).Verify(t.Context(), 0)
	if err == nil || !strings.Contains(err.Error(), "row 0 segment 0: padding bit 127 set") {
		t.Fatalf("Verify with a padding bit set: %v", err)
	}
}

func TestVerifyCancelled(t *testing.T) {
	t.Parallel()
	s := openShard(t, smallShard(t))
	ctx, cancel := contextWithCancel(t)
	cancel()
	if err := s.Verify(ctx, 0); err == nil {
		t.Fatal("Verify with a cancelled context succeeded")
	}
}

// TestObservedRow: a masked shard's observed entries of a cell are its
// mask's row; an unmasked shard's are every gene, and none of the padding
// bits past the last gene. OpenVerified opens an intact shard.
func TestObservedRow(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 3))
	x, mask := randomDense(rng, 100, 70, 0.2), randomDense(rng, 100, 70, 0.6)
	for _, masked := range []bool{false, true} {
		dst := filepath.Join(t.TempDir(), "s.shard")
		m := mask
		if !masked {
			m = nil
		}
		writeShard(t, dst, Layout{RowsPerBlock: 64}, x, m, Manifest{}, 1)
		s, err := OpenVerified(t.Context(), dst, 2)
		if err != nil {
			t.Fatal(err)
		}
		row := make([]uint64, 2)
		for c := range 100 {
			s.ObservedRow(c, row)
			for g := range 128 {
				want := g < 70 && (!masked || mask.bit[c][g])
				if got := row[g/64]>>(g%64)&1 == 1; got != want {
					t.Fatalf("masked %v, cell %d, gene %d: observed %v, want %v", masked, c, g, got, want)
				}
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
