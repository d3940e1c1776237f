package simulate

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/shard"
)

// picture draws the noise-free image n of t as text, one line per pixel
// row, '#' for a lit pixel.
func picture(t *Truth, n int) string {
	row, clean := make([]uint64, t.Words()), make([]uint64, t.Words())
	t.Row(n, row, clean)
	w := digitsWidth * t.Digits.Scale
	var b strings.Builder
	for g := range t.Genes {
		if clean[g/64]>>(g%64)&1 == 1 {
			b.WriteByte('#')
		} else {
			b.WriteByte('.')
		}
		if g%w == w-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestDigitsPictures compares digits 2 and 4 with drawings made by hand.
func TestDigitsPictures(t *testing.T) {
	p := DefaultDigitsParams()
	p.Cells = 20
	tr, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n    int
		want string
	}{
		{2, `
..........
...####...
...####...
.......##.
.......##.
.......##.
.......##.
.......##.
...####...
.##.......
.##.......
.##.......
.##.......
.##.......
...####...
...####...
..........
`},
		{14, `
..........
..........
..........
.##....##.
.##....##.
.##....##.
.##....##.
.##....##.
...####...
.......##.
.......##.
.......##.
.......##.
.......##.
..........
..........
..........
`},
	} {
		if got := picture(tr, tc.n); got != tc.want[1:] {
			t.Errorf("image %d (digit %d):\n%s\nwant\n%s", tc.n, Digit(tc.n), got, tc.want[1:])
		}
	}
}

// TestDigitsSegments checks the planted codes at two scales: seven disjoint
// segments of the expected sizes, the background never lit, and each
// image's usage its digit's segments.
func TestDigitsSegments(t *testing.T) {
	for _, scale := range []int{1, 3} {
		p := DefaultDigitsParams()
		p.Cells, p.Genes, p.Digits.Scale = 23, DigitsGenes(scale), scale
		tr, err := New(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		s2 := scale * scale
		want := []int{8 * s2, 10 * s2, 10 * s2, 8 * s2, 10 * s2, 10 * s2, 4 * s2} // a … g
		seen := make([]int, p.Genes)
		for l := range DigitsL {
			genes := tr.ProgramGenes(l)
			if len(genes) != want[l] {
				t.Errorf("scale %d: segment %s has %d pixels, want %d", scale, SegmentName(l), len(genes), want[l])
			}
			for _, g := range genes {
				seen[g]++
			}
			for n := range p.Cells {
				if bit(tr.Z[l], n) != digitLights(Digit(n), l) {
					t.Errorf("scale %d: image %d (digit %d) uses segment %s: %v", scale, n, Digit(n), SegmentName(l), bit(tr.Z[l], n))
				}
			}
		}
		lit := 0
		for _, k := range seen {
			if k > 1 {
				t.Fatalf("scale %d: segments overlap", scale)
			}
			lit += k
		}
		if lit != 60*s2 {
			t.Errorf("scale %d: %d pixels in segments, want %d", scale, lit, 60*s2)
		}
	}
	if nd := 100 * DigitsGenes(10); nd != 1_700_000 {
		t.Errorf("the high-resolution set (100 images at scale 10) has N·D = %d, want the paper's 1.7e6", nd)
	}
}

// TestDigitsNoise writes noisy digits with missing pixels as shards and
// checks the flip and missing rates against their binomial spread.
func TestDigitsNoise(t *testing.T) {
	p := DefaultDigitsParams()
	p.Cells, p.Genes, p.Digits.Scale = 200, DigitsGenes(4), 4
	p.FlipOn, p.FlipOff, p.Missing = 0.1, 0.1, 0.3
	tr, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "calc")
	if err := WriteShards(context.Background(), dir, tr, shard.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s, err := shard.Open(filepath.Join(dir, ShardsDir))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := s.Manifest()
	bcs, err := s.Barcodes()
	if err != nil {
		t.Fatal(err)
	}
	if m.GeneIDs[0] != "r0c0" || m.GeneNames[41] != "r1c1" || bcs[13] != "digit3-14" {
		t.Errorf("names: gene %q, %q, barcode %q", m.GeneIDs[0], m.GeneNames[41], bcs[13])
	}
	clean, row := make([]uint64, tr.Words()), make([]uint64, tr.Words())
	var flips, missing int
	for n := range p.Cells {
		tr.CleanRow(n, clean)
		x, obs := s.X().Segment(n, 0), s.Mask().Segment(n, 0)
		for i := range row {
			flips += popcount([]uint64{x[i] ^ clean[i]})
			missing += popcount([]uint64{^obs[i]})
		}
	}
	missing -= p.Cells * (64*tr.Words() - p.Genes) // padding bits
	total := float64(p.Cells * p.Genes)
	for _, q := range []struct {
		what string
		got  int
		p    float64
	}{{"flipped", flips, 0.1}, {"missing", missing, 0.3}} {
		sd := math.Sqrt(total * q.p * (1 - q.p))
		if math.Abs(float64(q.got)-total*q.p) > 5*sd {
			t.Errorf("%d of %.0f pixels %s, want %.0f ± %.0f", q.got, total, q.what, total*q.p, 5*sd)
		}
	}
}

func TestDigitsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Params)
		want string
	}{
		{"L", func(p *Params) { p.L = 6 }, "7 segments, not L = 6"},
		{"genes", func(p *Params) { p.Genes = 100 }, "170 pixels, not 100 genes"},
		{"scale", func(p *Params) { p.Digits.Scale = 0 }, "scale must be in 1..100"},
		{"density", func(p *Params) { p.CodeDensity = 0.1 }, "densities do not apply"},
		{"flip", func(p *Params) { p.FlipOn = 2 }, "flip-on must be in [0, 1]"},
		{"single-cell", func(p *Params) { p.SingleCell = DefaultSingleCell() }, "single-cell parameters"},
		{"other kind", func(p *Params) { p.Kind = OrMachine }, "digits parameters given for the ormachine kind"},
	} {
		p := DefaultDigitsParams()
		tc.edit(&p)
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
