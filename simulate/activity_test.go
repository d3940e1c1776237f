package simulate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/shard"
)

// TestActivityPrograms draws identity programs (one per cell in the
// single-cell kind, as cNMF's cell types) with activity programs beside
// them, in both kinds that have them, and checks what an activity program
// is: it follows the identity programs, its cells are a fraction F of the
// cells (within 5 standard deviations) and of the cells of every identity
// alike, its genes number what the kind says, the cells' rows cover its
// genes, and the identity programs are the ones drawn without it.
func TestActivityPrograms(t *testing.T) {
	t.Parallel()
	sc := DefaultSingleCell()
	sc.ProgramsPerCellMax = 1
	cases := []struct {
		name  string
		p     Params
		genes func(Params) (lo, hi int)
	}{
		{"singlecell, one identity per cell", Params{Kind: SingleCell, Cells: 4000, Genes: 2000, L: 6, Seed: 3, SingleCell: sc,
			ActivityPrograms: 1, ActivityFraction: 0.3}, func(p Params) (int, int) {
			n := p.SingleCell.activitySize(p.Genes)
			return n, n
		}},
		{"ormachine, two activity programs", Params{Cells: 3000, Genes: 1500, L: 4, CodeDensity: 0.29, UsageDensity: 0.29,
			FlipOn: 0.05, FlipOff: 0.05, Seed: 21, ActivityPrograms: 2, ActivityFraction: 0.2}, func(p Params) (int, int) {
			mean := p.CodeDensity * float64(p.Genes)
			sd := math.Sqrt(mean * (1 - p.CodeDensity))
			return int(mean - 5*sd), int(mean + 5*sd)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr, err := New(context.Background(), tc.p)
			if err != nil {
				t.Fatal(err)
			}
			plain := tc.p
			plain.ActivityPrograms, plain.ActivityFraction = 0, 0
			base, err := New(context.Background(), plain)
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.U) != tc.p.Programs() || len(tr.Z) != tc.p.Programs() {
				t.Fatalf("%d programs, %d usages, want %d", len(tr.U), len(tr.Z), tc.p.Programs())
			}
			for l := range tc.p.L {
				if !equalWords(tr.U[l], base.U[l]) || !equalWords(tr.Z[l], base.Z[l]) {
					t.Fatalf("identity program %d differs from the one drawn without activity programs", l+1)
				}
			}
			F := tc.p.ActivityFraction
			for a := range tc.p.ActivityPrograms {
				l := tc.p.L + a
				lo, hi := tc.genes(tc.p)
				if g := popcount(tr.U[l]); g < lo || g > hi {
					t.Errorf("activity program %d: %d genes, want %d..%d", a+1, g, lo, hi)
				}
				if bad := popcountAnd(tr.U[l], tr.Housekeeping); bad > 0 {
					t.Errorf("activity program %d holds %d housekeeping genes", a+1, bad)
				}
				check := func(what string, hits, trials int) {
					sd := math.Sqrt(float64(trials) * F * (1 - F))
					if math.Abs(float64(hits)-F*float64(trials)) > 5*sd {
						t.Errorf("activity program %d: %d of %d %s use it, want about %.0f", a+1, hits, trials, what, F*float64(trials))
					}
				}
				check("cells", popcount(tr.Z[l]), tc.p.Cells)
				for k := range tc.p.L {
					check("cells of identity "+string(rune('1'+k)), popcountAnd(tr.Z[l], tr.Z[k]), popcount(tr.Z[k]))
				}
			}
			// A cell using an activity program has its genes in its
			// noise-free row.
			clean := make([]uint64, tr.Words())
			for n := range min(tc.p.Cells, 300) {
				tr.CleanRow(n, clean)
				for l := tc.p.L; l < tc.p.Programs(); l++ {
					if bit(tr.Z[l], n) && popcountAnd(clean, tr.U[l]) != popcount(tr.U[l]) {
						t.Fatalf("cell %d uses activity program %d but its row does not cover its genes", n, l-tc.p.L+1)
					}
				}
			}
		})
	}
}

// TestActivityTruthAndDefaults writes a simulation with an activity
// program and checks that its truth tables list it as the program after
// the identity programs and truth.json records it; and that a
// simulation without one writes the files it wrote before activity
// programs existed (their digests pinned then).
func TestActivityTruthAndDefaults(t *testing.T) {
	t.Parallel()
	p := Params{Cells: 200, Genes: 150, L: 3, CodeDensity: 0.2, UsageDensity: 0.3, FlipOn: 0.01, FlipOff: 0.1, Seed: 9}
	digest := func(dir string) string {
		h := sha256.New()
		for _, f := range []string{ProgramsFile, usageFile, "truth.json"} {
			b, err := os.ReadFile(filepath.Join(dir, TruthDir, f))
			if err != nil {
				t.Fatal(err)
			}
			h.Write(b)
		}
		return hex.EncodeToString(h.Sum(nil))
	}
	write := func(p Params) string {
		tr, err := New(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "sim")
		if err := WriteShards(context.Background(), dir, tr, shard.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	// Recorded before activity programs existed (build a650931).
	const before = "e3d6db0fdce61e6182b46fc53559fe540ff093d0cbea7ff7c85bc15a193b1df2"
	if got := digest(write(p)); got != before {
		t.Errorf("truth without activity programs: digest %s, want %s", got, before)
	}
	p.ActivityPrograms, p.ActivityFraction = 1, 0.4
	dir := write(p)
	truth, err := ReadTruth(filepath.Join(dir, TruthDir))
	if err != nil {
		t.Fatal(err)
	}
	if truth.L != 4 {
		t.Fatalf("the truth lists %d programs, want 3 identity + 1 activity", truth.L)
	}
	b, err := os.ReadFile(filepath.Join(dir, TruthDir, "truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"ActivityPrograms": 1`, `"ActivityFraction": 0.4`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("truth.json lacks %s", want)
		}
	}
}

// TestActivityValidate refuses activity programs the model cannot draw.
func TestActivityValidate(t *testing.T) {
	t.Parallel()
	ok := Params{Cells: 10, Genes: 10, L: 2, CodeDensity: 0.3, UsageDensity: 0.3, ActivityPrograms: 1, ActivityFraction: 0.5}
	if _, err := New(context.Background(), ok); err != nil {
		t.Fatalf("valid activity program refused: %v", err)
	}
	digits := DefaultDigitsParams()
	digits.ActivityPrograms, digits.ActivityFraction = 1, 0.5
	for _, tc := range []struct {
		name string
		edit func(*Params)
		p    *Params
		want string
	}{
		{"negative count", func(p *Params) { p.ActivityPrograms = -1 }, nil, "activity programs"},
		{"over 64 programs", func(p *Params) { p.ActivityPrograms = 63 }, nil, "at most 64"},
		// L + the count overflowed, passed, and New drew programs until
		// memory ran out, deaf to Ctrl-C.
		{"the largest int", func(p *Params) { p.ActivityPrograms = math.MaxInt }, nil, "at most 64"},
		{"fraction zero", func(p *Params) { p.ActivityFraction = 0 }, nil, "activity fraction"},
		{"fraction above 1", func(p *Params) { p.ActivityFraction = 1.5 }, nil, "activity fraction"},
		{"fraction without programs", func(p *Params) { p.ActivityPrograms = 0 }, nil, "without activity programs"},
		{"digits", func(*Params) {}, &digits, "no activity programs"},
	} {
		p := ok
		if tc.p != nil {
			p = *tc.p
		}
		tc.edit(&p)
		_, err := New(context.Background(), p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

func equalWords(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func popcountAnd(a, b []uint64) int {
	n := 0
	for i := range min(len(a), len(b)) {
		n += popcount([]uint64{a[i] & b[i]})
	}
	return n
}
