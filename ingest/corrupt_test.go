package ingest

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// corruption is one line of ../shared/data/corrupt-h5/patches.tsv: bytes
// to change in a copy of a shared file, and the crash they once caused.
type corruption struct {
	file    string // relative to the shared data folder
	patches map[int64]byte
	crash   string
}

// readCorruptions parses patches.tsv: the file, "offset:0xvalue" pairs
// separated by spaces, and the crash seen, tab-separated.
func readCorruptions(t *testing.T, path string) []corruption {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corruption
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.HasPrefix(text, "#") || strings.TrimSpace(text) == "" {
			continue
		}
		cols := strings.Split(text, "\t")
		if len(cols) != 3 {
			t.Fatalf("%s line %d: %d columns, want 3", path, line, len(cols))
		}
		c := corruption{file: cols[0], patches: map[int64]byte{}, crash: cols[2]}
		for _, p := range strings.Fields(cols[1]) {
			off, val, ok := strings.Cut(p, ":")
			o, err1 := strconv.ParseInt(off, 10, 64)
			v, err2 := strconv.ParseUint(strings.TrimPrefix(val, "0x"), 16, 8)
			if !ok || err1 != nil || err2 != nil {
				t.Fatalf("%s line %d: bad change %q", path, line, p)
			}
			c.patches[o] = byte(v)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCorruptHDF5: the shared files with the byte changes of
// corrupt-h5/patches.tsv, which once crashed ingest (out of memory in
// scigolib/hdf5's local heap loading and in our chunk reader, a makeslice
// panic), give an error naming the file and leave no output. A crash
// here ends the test binary, so the test fails either way.
func TestCorruptHDF5(t *testing.T) {
	t.Parallel()
	data := sharedData(t)
	cases := readCorruptions(t, filepath.Join(data, "corrupt-h5", "patches.tsv"))
	if len(cases) < 3 {
		t.Fatalf("patches.tsv lists %d corruptions, want at least 3", len(cases))
	}
	for i, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(filepath.Join(data, c.file))
			if err != nil {
				t.Fatal(err)
			}
			for off, v := range c.patches {
				if off >= int64(len(b)) {
					t.Fatalf("change at %d beyond the %d-byte file", off, len(b))
				}
				if b[off] == v {
					t.Fatalf("byte %d is already %#x: the patch changes nothing", off, v)
				}
				b[off] = v
			}
			in := filepath.Join(t.TempDir(), strconv.Itoa(i)+"-"+filepath.Base(c.file))
			if err := os.WriteFile(in, b, 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "shards")
			_, err = Run(context.Background(), exact(in, out))
			if err == nil {
				t.Fatalf("no error (once: %s)", c.crash)
			}
			t.Log(err)
			if msg := err.Error(); !strings.HasPrefix(msg, "ingest: ") || !strings.Contains(msg, in) {
				t.Errorf("error %q does not name %s", msg, in)
			}
			assertNoOutput(t, out)
		})
	}
}
