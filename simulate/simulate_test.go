package simulate

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/shard"

	"scpipe/internal/testkit"
)

func TestCleanRowIsBooleanProduct(t *testing.T) {
	p := Params{Cells: 130, Genes: 129, L: 4, CodeDensity: 0.2, UsageDensity: 0.4, Seed: 3}
	tr, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	row, clean := make([]uint64, tr.Words()), make([]uint64, tr.Words())
	for n := range p.Cells {
		tr.Row(n, row, clean)
		for g := range p.Genes {
			want := false
			for l := range p.L {
				want = want || (bit(tr.Z[l], n) && bit(tr.U[l], g))
			}
			if bit(row, g) != want || bit(clean, g) != want {
				t.Fatalf("cell %d gene %d: got %v/%v, want %v", n, g, bit(row, g), bit(clean, g), want)
			}
		}
		if g := p.Genes; row[g/64]>>(g%64) != 0 {
			t.Fatalf("cell %d: padding bits set", n)
		}
	}
}

func TestNoiseRates(t *testing.T) {
	p := Params{Cells: 3000, Genes: 500, L: 3, CodeDensity: 0.2, UsageDensity: 0.3, FlipOn: 0.02, FlipOff: 0.15, Seed: 11}
	tr, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var on, zeros, off, ones float64
	row, clean := make([]uint64, tr.Words()), make([]uint64, tr.Words())
	for n := range p.Cells {
		tr.Row(n, row, clean)
		for i := range row {
			on += float64(popcount([]uint64{row[i] &^ clean[i]}))
			off += float64(popcount([]uint64{clean[i] &^ row[i]}))
			ones += float64(popcount([]uint64{clean[i]}))
		}
	}
	zeros = float64(p.Cells*p.Genes) - ones
	check := func(name string, hits, trials, q float64) {
		if sd := math.Sqrt(trials * q * (1 - q)); math.Abs(hits-trials*q) > 5*sd {
			t.Errorf("%s rate %.4f, want %.4f", name, hits/trials, q)
		}
	}
	check("flip-on", on, zeros, p.FlipOn)
	check("flip-off", off, ones, p.FlipOff)
}

func TestDeterministic(t *testing.T) {
	p := DefaultParams()
	a, _ := New(context.Background(), p)
	b, _ := New(context.Background(), p)
	p.Seed++
	c, _ := New(context.Background(), p)
	ra, rb, rc, s := make([]uint64, a.Words()), make([]uint64, a.Words()), make([]uint64, a.Words()), make([]uint64, a.Words())
	differs := false
	for _, n := range []int{0, 1, 1999, 3999} {
		a.Row(n, ra, s)
		b.Row(n, rb, s)
		c.Row(n, rc, s)
		for i := range ra {
			if ra[i] != rb[i] {
				t.Fatalf("cell %d differs between two draws with the same seed", n)
			}
			differs = differs || ra[i] != rc[i]
		}
	}
	if !differs {
		t.Error("a different seed gave the same rows")
	}
}

func TestValidate(t *testing.T) {
	bad := []Params{
		{Cells: 0, Genes: 1, L: 1},
		{Cells: 1, Genes: 1, L: 0},
		{Cells: 1, Genes: 1, L: 65},
		{Cells: 1, Genes: 1, L: 1, CodeDensity: 1.5},
		{Cells: 1, Genes: 1, L: 1, FlipOn: math.NaN()},
	}
	for _, p := range bad {
		if _, err := New(context.Background(), p); err == nil {
			t.Errorf("New(context.Background(), %+v) succeeded", p)
		}
	}
}

func TestWriteMTX(t *testing.T) {
	p := Params{Cells: 70, Genes: 65, L: 2, CodeDensity: 0.3, UsageDensity: 0.5, FlipOn: 0.05, FlipOff: 0.1, Seed: 5}
	tr, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "sim")
	ctx := context.Background()
	if err := WriteMTX(ctx, dir, tr, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteMTX(ctx, dir, tr, false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("second write without force: %v", err)
	}
	if err := WriteMTX(ctx, dir, tr, true); err != nil {
		t.Fatalf("write with force: %v", err)
	}
	got := readMTX(t, filepath.Join(dir, "matrix.mtx.gz"), p)
	row, clean := make([]uint64, tr.Words()), make([]uint64, tr.Words())
	for n := range p.Cells {
		tr.Row(n, row, clean)
		for i := range row {
			if got[n][i] != row[i] {
				t.Fatalf("cell %d: matrix.mtx.gz differs from the simulated row", n)
			}
		}
	}
	for _, f := range []string{"features.tsv.gz", "barcodes.tsv.gz", "truth/programs.tsv", "truth/usage.tsv", "truth/truth.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	leftovers, _ := filepath.Glob(dir + ".tmp-*")
	if len(leftovers) > 0 {
		t.Errorf("temporary folders left behind: %v", leftovers)
	}
}

// readMTX parses the simulator's own MatrixMarket output back into rows.
func readMTX(t *testing.T, path string, p Params) [][]uint64 {
	t.Helper()
	zr := bytes.NewReader(testkit.ReadGzip(t, path))
	rows := make([][]uint64, p.Cells)
	for i := range rows {
		rows[i] = make([]uint64, (p.Genes+63)/64)
	}
	sc := bufio.NewScanner(zr)
	header := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "%") {
			continue
		}
		var g, n, c int
		if !header {
			header = true
			continue
		}
		if _, err := fmt.Sscan(line, &g, &n, &c); err != nil || c < 1 {
			t.Fatalf("bad entry %q: %v", line, err)
		}
		rows[n-1][(g-1)/64] |= 1 << ((g - 1) % 64)
	}
	return rows
}

func TestWriteShards(t *testing.T) {
	for _, missing := range []float64{0, 0.3} {
		p := Params{Cells: 130, Genes: 129, L: 3, CodeDensity: 0.2, UsageDensity: 0.4, FlipOn: 0.02, FlipOff: 0.1, Missing: missing, Seed: 9}
		tr, err := New(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "sim")
		if err := WriteShards(context.Background(), dir, tr, shard.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		s, err := shard.Open(filepath.Join(dir, ShardsDir))
		if err != nil {
			t.Fatal(err)
		}
		if (s.Mask() != nil) != (missing > 0) {
			t.Fatalf("missing=%v: mask present = %v", missing, s.Mask() != nil)
		}
		row, clean, obs := make([]uint64, tr.Words()), make([]uint64, tr.Words()), make([]uint64, tr.Words())
		var unobserved int
		for n := range p.Cells {
			tr.Row(n, row, clean)
			tr.ObservedRow(n, obs)
			for g := range p.Genes {
				if s.X().At(n, g) != bit(row, g) {
					t.Fatalf("missing=%v: cell %d gene %d differs from the simulated row", missing, n, g)
				}
				if s.Mask() != nil {
					if s.Mask().At(n, g) != bit(obs, g) {
						t.Fatalf("cell %d gene %d: mask differs", n, g)
					}
					if !bit(obs, g) {
						unobserved++
					}
				}
			}
		}
		bcs, err := s.Barcodes()
		if err != nil {
			t.Fatal(err)
		}
		if m := s.Manifest(); m.Cells != p.Cells || m.Genes != p.Genes || len(bcs) != p.Cells || m.GeneIDs[0] != GeneID(0) {
			t.Errorf("manifest: %d cells, %d genes, %d barcodes, first gene %q", m.Cells, m.Genes, len(bcs), m.GeneIDs[0])
		}
		if missing > 0 {
			frac := float64(unobserved) / float64(p.Cells*p.Genes)
			if math.Abs(frac-missing) > 0.02 {
				t.Errorf("unobserved fraction %.3f, want %.3f", frac, missing)
			}
		}
		s.Close()
	}
	tr, _ := New(context.Background(), Params{Cells: 5, Genes: 5, L: 1, Missing: 0.5})
	if err := WriteMTX(context.Background(), filepath.Join(t.TempDir(), "x"), tr, false); err == nil {
		t.Error("WriteMTX accepted missing entries")
	}
}

// TestBarcodePinned pins barcodes that earlier versions wrote, so that a
// change of the hash behind them (package splitmix) cannot pass unseen:
// simulated folders would no longer match their earlier copies.
func TestBarcodePinned(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "TTGGCTATCTCATGTC-1"}, {1, "CAATATCCGAAACGAG-1"}, {999, "ATCGCACAAGCAGTTG-1"}} {
		if got := Barcode(tc.n); got != tc.want {
			t.Errorf("Barcode(%d) = %s, want %s", tc.n, got, tc.want)
		}
	}
}

// TestShardsValues: the manifest of simulated shards says what fit's auto
// model reads: counts for the single-cell kind, binary for the others.
func TestShardsValues(t *testing.T) {
	cells := DefaultSingleCellParams()
	cells.Cells, cells.Genes = 50, 40
	digits := DefaultDigitsParams()
	digits.Cells = 10
	for _, tc := range []struct {
		p    Params
		want string
	}{
		{Params{Cells: 50, Genes: 40, L: 2, CodeDensity: 0.2, UsageDensity: 0.4, Seed: 2}, shard.ValuesBinary},
		{digits, shard.ValuesBinary},
		{cells, shard.ValuesCounts},
	} {
		tr, err := New(context.Background(), tc.p)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "sim")
		if err := WriteShards(context.Background(), dir, tr, shard.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		s, err := shard.Open(filepath.Join(dir, ShardsDir))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Manifest().Source.Values; got != tc.want {
			t.Errorf("%v: source values %q, want %q", tc.p.Kind, got, tc.want)
		}
		s.Close()
	}
}

// TestBarcodesUnique: 16 bases hold 2^32 barcodes, so a few hundred
// thousand cells drawn by Barcode share some (about n²/2^33 pairs), and
// ingest refuses a barcode that names two cells. Every cell of a
// simulation has its own barcode, and a cell whose Barcode no earlier cell
// has keeps it (TestBarcodePinned), so that small simulations are written
// as before.
func TestBarcodesUnique(t *testing.T) {
	for _, tc := range []struct {
		cells     int
		collision bool // some cell's Barcode is an earlier cell's
	}{{1000, false}, {300000, true}} {
		tr, err := New(context.Background(), Params{Cells: tc.cells, Genes: 10, L: 1, CodeDensity: 0.5, UsageDensity: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		seen := make(map[string]int, tc.cells)
		moved := 0
		for n := range tc.cells {
			b := tr.Barcode(n)
			if m, ok := seen[b]; ok {
				t.Fatalf("%d cells: cells %d and %d share the barcode %s", tc.cells, m, n, b)
			}
			seen[b] = n
			if b != Barcode(n) {
				if m, ok := seen[Barcode(n)]; !ok || m >= n {
					t.Errorf("%d cells: cell %d has %s, not its own Barcode %s, which no earlier cell has", tc.cells, n, b, Barcode(n))
				}
				moved++
			}
		}
		if (moved > 0) != tc.collision {
			t.Errorf("%d cells: %d cells moved to another barcode, want collisions %v", tc.cells, moved, tc.collision)
		}
	}
}
