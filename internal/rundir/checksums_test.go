package rundir

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// smallFit writes the three tables of a small fit into dir and returns
// their paths with a reader for each.
func smallFit(t testing.TB, dir string) map[string]func(string) error {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	genes, cells, L := 40, 70, 3
	ids, names, bcs := make([]string, genes), make([]string, genes), make([]string, cells)
	for i := range ids {
		ids[i], names[i] = fmt.Sprintf("ENSG%05d", i), fmt.Sprintf("G%d", i)
	}
	for i := range bcs {
		bcs[i] = fmt.Sprintf("AC%04dGT-1", i)
	}
	trace := make([]TraceRow, 20)
	for i := range trace {
		trace[i] = TraceRow{Sweep: int64(i + 1), Phase: PhaseSample, Lambda: 1, Dropout: 0.3, Background: 0.01,
			LogLik: -1000 + float64(i), TrainAccuracy: 0.9, Flips: int64(100 - i), Seconds: 0.01}
	}
	writes := []error{
		WriteCodes(filepath.Join(dir, CodesFile), Codes{GeneIDs: ids, GeneNames: names, L: L, Mean: randomMatrix(rng, genes, L)}),
		WriteCells(filepath.Join(dir, CellsFile), Cells{Barcodes: bcs, L: L, Mean: randomMatrix(rng, cells, L)}),
		WriteTrace(filepath.Join(dir, TraceFile), trace),
	}
	if err := errors.Join(writes...); err != nil {
		t.Fatal(err)
	}
	return map[string]func(string) error{
		filepath.Join(dir, CodesFile): func(p string) error { _, err := ReadCodes(p); return err },
		filepath.Join(dir, CellsFile): func(p string) error { _, err := ReadCells(p); return err },
		filepath.Join(dir, TraceFile): func(p string) error { _, err := ReadTrace(p); return err },
	}
}

// TestChecksumsFile: every table written has its line in SHA256SUMS, in
// sha256sum's format, sorted by name.
func TestChecksumsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	readers := smallFit(t, dir)
	got, err := os.ReadFile(filepath.Join(dir, checksumsFile))
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range readers {
			if !yield(p) {
				return
			}
		}
	}) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(b)
		fmt.Fprintf(&want, "%s  %s\n", hex.EncodeToString(s[:]), filepath.Base(p))
	}
	if string(got) != want.String() {
		t.Errorf("%s:\n%s\nwant\n%s", checksumsFile, got, want.String())
	}
	for p, read := range readers {
		if err := read(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// positions returns the bytes of a file of n bytes to change: its first
// and last 64 (magic, footer length, the end of the footer) and 100 drawn
// from the rest (FuzzRunFiles goes further).
func positions(n int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, 3))
	var at []int
	for i := range n {
		if i < 64 || i >= n-64 || rng.IntN(n) < 100 {
			at = append(at, i)
		}
	}
	return at
}

// TestEveryChangedByteIsNamed changes bytes of each table in turn: every
// change is an error that names the table and wraps errDamaged, never a
// panic and never a silent read (the hostile run found 73 of 744 such
// changes panicking and 16 read with wrong values).
func TestEveryChangedByteIsNamed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for p, read := range smallFit(t, dir) {
		good, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range positions(len(good), 1) {
			bad := slices.Clone(good)
			bad[i] ^= 1 << (i % 8)
			if err := os.WriteFile(p, bad, 0o666); err != nil {
				t.Fatal(err)
			}
			if err := read(p); !errors.Is(err, errDamaged) || !strings.Contains(err.Error(), p) {
				t.Fatalf("%s with byte %d changed: %v, want errDamaged naming the file", p, i, err)
			}
		}
		if err := os.WriteFile(p, good, 0o666); err != nil {
			t.Fatal(err)
		}
	}
}

// TestUncheckedTablesNeverPanic: tables of runs written before SHA256SUMS
// are read unverified; a changed byte may go unnoticed there, but any
// failure of the decoder, panics included, is an error naming the file.
func TestUncheckedTablesNeverPanic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	readers := smallFit(t, dir)
	if err := os.Remove(filepath.Join(dir, checksumsFile)); err != nil {
		t.Fatal(err)
	}
	failed := 0
	for p, read := range readers {
		good, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := read(p); err != nil {
			t.Fatalf("%s without checksums: %v", p, err)
		}
		for _, i := range positions(len(good), 2) {
			for _, flip := range []byte{0xff} {
				bad := slices.Clone(good)
				bad[i] ^= flip
				if err := os.WriteFile(p, bad, 0o666); err != nil {
					t.Fatal(err)
				}
				if err := read(p); err != nil {
					failed++
					if !strings.Contains(err.Error(), p) {
						t.Fatalf("%s with byte %d ^ %#x: %v does not name the file", p, i, flip, err)
					}
				}
			}
		}
		if err := os.WriteFile(p, good, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	if failed == 0 {
		t.Error("no changed byte was noticed: the changes did not reach the decoder")
	}
}

// TestDamagedChecksumsFile: a manifest that does not parse, or lacks a
// table's line, makes the table unreadable with an error naming it.
func TestDamagedChecksumsFile(t *testing.T) {
	t.Parallel()
	for name, edit := range map[string]func([]byte) []byte{
		"short digest":   func(b []byte) []byte { return b[1:] },
		"no line end":    func(b []byte) []byte { return b[:len(b)-1] },
		"upper case hex": func(b []byte) []byte { return []byte(strings.ToUpper(string(b[:64])) + string(b[64:])) },
		"line removed": func(b []byte) []byte {
			lines := strings.SplitAfter(string(b), "\n")
			return []byte(strings.Join(slices.DeleteFunc(lines, func(l string) bool { return strings.HasSuffix(l, "  "+CodesFile+"\n") }), ""))
		},
		"listed twice": func(b []byte) []byte { return append(slices.Clone(b), b...) },
		"path in name": func(b []byte) []byte { return []byte(strings.Replace(string(b), "  "+CodesFile, "  ../"+CodesFile, 1)) },
	} {
		dir := t.TempDir()
		smallFit(t, dir)
		sums := filepath.Join(dir, checksumsFile)
		b, err := os.ReadFile(sums)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(sums, edit(b), 0o666); err != nil {
			t.Fatal(err)
		}
		codes := filepath.Join(dir, CodesFile)
		if _, err := ReadCodes(codes); !errors.Is(err, errDamaged) || !strings.Contains(err.Error(), dir) {
			t.Errorf("%s: %v, want errDamaged naming the file", name, err)
		}
	}
}

// TestChecksummedFile: a fit's other files written with WriteChecksummed
// (samples.bin) share the tables' manifest and read back verified.
func TestChecksummedFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	smallFit(t, dir)
	p := filepath.Join(dir, SamplesFile)
	want := []byte("scpSMPLS and some states")
	if err := WriteChecksummed(p, func(w io.Writer) error { _, err := w.Write(want); return err }); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadChecksummed(p); err != nil || string(got) != string(want) {
		t.Fatalf("read back %q, %v", got, err)
	}
	if _, err := ReadCodes(filepath.Join(dir, CodesFile)); err != nil {
		t.Errorf("codes beside samples: %v", err)
	}
	bad := slices.Clone(want)
	bad[3] ^= 1
	if err := os.WriteFile(p, bad, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadChecksummed(p); !errors.Is(err, errDamaged) || !strings.Contains(err.Error(), p) {
		t.Errorf("changed byte: %v, want errDamaged naming the file", err)
	}
}
