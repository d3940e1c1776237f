package simulate

import (
	"fmt"
	"strconv"
)

// The calculator digits of the paper's Fig. calc: each digit is drawn by
// its lit segments of a seven-segment display on a digitsWidth × digitsHeight
// pixel grid (10 × 17), each grid cell Scale × Scale pixels. The seven
// segments are disjoint sets of pixels, so they are the codes U (L = 7) and
// a digit's lit segments its usage z.
const (
	digitsWidth  = 10
	digitsHeight = 17
	// DigitsL is the number of segments, the planted L of the digits kind.
	DigitsL = 7
)

// DigitsParams are the digits kind's parameters.
type DigitsParams struct {
	// Scale is the side of a grid cell in pixels: 1 draws the paper's
	// 10 × 17 digits (170 pixels); 10 draws 100 × 170 (17 000 pixels), the
	// high-resolution variant (100 digits: N·D = 1.7e6).
	Scale int
}

// maxDigitsScale bounds the pixels of one digit (170·Scale²) far inside
// what a row holds.
const maxDigitsScale = 100

// DigitsGenes returns the number of pixels of a digit at scale s.
func DigitsGenes(scale int) int { return digitsWidth * digitsHeight * scale * scale }

// DefaultDigitsParams returns the paper's Fig. calc: the ten digits once
// each, 10 × 17 pixels, without noise.
func DefaultDigitsParams() Params {
	return Params{Kind: Digits, Cells: 10, Genes: DigitsGenes(1), L: DigitsL, Seed: 1, Digits: DigitsParams{Scale: 1}}
}

// segmentNames names the segments in the usual order a…g: top, upper
// right, lower right, bottom, lower left, upper left, middle.
var segmentNames = [DigitsL]string{"a", "b", "c", "d", "e", "f", "g"}

// segmentBoxes are the segments' pixels on the 10 × 17 grid: rows
// [r0, r1) × columns [c0, c1). Horizontal segments are two rows thick
// except the middle one, which sits on the centre row 8, so that the digit
// is symmetric about it; there is a one-pixel margin all round.
var segmentBoxes = [DigitsL]struct{ r0, r1, c0, c1 int }{
	{1, 3, 3, 7},   // a: top
	{3, 8, 7, 9},   // b: upper right
	{9, 14, 7, 9},  // c: lower right
	{14, 16, 3, 7}, // d: bottom
	{9, 14, 1, 3},  // e: lower left
	{3, 8, 1, 3},   // f: upper left
	{8, 9, 3, 7},   // g: middle
}

// digitSegments lists the lit segments of each digit as bits (bit l:
// segment l of segmentNames).
var digitSegments = [10]uint8{
	0b0111111, // 0: a b c d e f
	0b0000110, // 1: b c
	0b1011011, // 2: a b d e g
	0b1001111, // 3: a b c d g
	0b1100110, // 4: b c f g
	0b1101101, // 5: a c d f g
	0b1111101, // 6: a c d e f g
	0b0000111, // 7: a b c
	0b1111111, // 8: all
	0b1101111, // 9: a b c d f g
}

// Digit returns the digit image n shows: n mod 10, so that any ten
// consecutive images are the ten digits.
func Digit(n int) int { return n % 10 }

// SegmentName returns the name (a…g) of segment l.
func SegmentName(l int) string { return segmentNames[l] }

// digitLights reports whether digit d lights segment l.
func digitLights(d, l int) bool { return digitSegments[d]>>l&1 == 1 }

// segmentOf returns the segment that pixel g of a digit at scale s belongs
// to, or -1 for the background.
func segmentOf(g, scale int) int {
	w := digitsWidth * scale
	r, c := g/w/scale, g%w/scale
	for l, b := range segmentBoxes {
		if r >= b.r0 && r < b.r1 && c >= b.c0 && c < b.c1 {
			return l
		}
	}
	return -1
}

// drawDigits plants the digits: U[l] is segment l's pixels, Z[l] the images
// of digits that light it.
func (t *Truth) drawDigits() {
	t.U = make([][]uint64, DigitsL)
	t.Z = make([][]uint64, DigitsL)
	for l := range DigitsL {
		t.U[l] = make([]uint64, t.words)
		t.Z[l] = make([]uint64, (t.Cells+63)/64)
	}
	for g := range t.Genes {
		if l := segmentOf(g, t.Digits.Scale); l >= 0 {
			t.U[l][g/64] |= 1 << (g % 64)
		}
	}
	for n := range t.Cells {
		for l := range DigitsL {
			if digitLights(Digit(n), l) {
				t.Z[l][n/64] |= 1 << (n % 64)
			}
		}
	}
}

// validate checks the digits kind's parameters against the rest of p.
func (d DigitsParams) validate(p Params) error {
	switch {
	case d.Scale < 1 || d.Scale > maxDigitsScale:
		return fmt.Errorf("simulate: digits scale must be in 1..%d (got %d)", maxDigitsScale, d.Scale)
	case p.Genes != DigitsGenes(d.Scale):
		return fmt.Errorf("simulate: digits at scale %d have %d pixels, not %d genes", d.Scale, DigitsGenes(d.Scale), p.Genes)
	case p.L != DigitsL:
		return fmt.Errorf("simulate: digits have %d segments, not L = %d", DigitsL, p.L)
	case p.CodeDensity != 0 || p.UsageDensity != 0:
		return fmt.Errorf("simulate: code and usage densities do not apply to the %s kind (its codes are the seven segments)", Digits)
	}
	for _, q := range []struct {
		name string
		v    float64
	}{{"flip-on", p.FlipOn}, {"flip-off", p.FlipOff}} {
		if !(q.v >= 0 && q.v <= 1) {
			return fmt.Errorf("simulate: %s must be in [0, 1] (got %v)", q.name, q.v)
		}
	}
	return nil
}

// pixelName returns the name of pixel g of an image width pixels wide:
// "r<row>c<column>", 0-based from the top left, e.g. "r3c7". Pixel names
// are the genes' ids and names of the digits kind, and what lets images be
// drawn again from a fit's genes whatever subset of pixels it kept.
func pixelName(g, width int) string {
	return "r" + strconv.Itoa(g/width) + "c" + strconv.Itoa(g%width)
}

// GeneID returns the id of gene g: GeneID(g), or for the digits kind its
// pixel name.
func (t *Truth) GeneID(g int) string {
	if t.Kind == Digits {
		return pixelName(g, digitsWidth*t.Digits.Scale)
	}
	return GeneID(g)
}

// GeneName returns the name of gene g: GeneName(g), or for the digits kind
// its pixel name.
func (t *Truth) GeneName(g int) string {
	if t.Kind == Digits {
		return pixelName(g, digitsWidth*t.Digits.Scale)
	}
	return GeneName(g)
}

// Barcode returns the barcode of cell n: Barcode(n), unless an earlier
// cell has it (barcodeFixes), or for the digits kind "digit<d>-<n+1>",
// e.g. "digit3-14" for the 14th image, a 3. No two cells share one.
func (t *Truth) Barcode(n int) string {
	if t.Kind == Digits {
		return "digit" + strconv.Itoa(Digit(n)) + "-" + strconv.Itoa(n+1)
	}
	t.barcodeOnce.Do(func() { t.barcodeFixes = barcodeFixes(t.Cells) })
	if b, ok := t.barcodeFixes[n]; ok {
		return b
	}
	return Barcode(n)
}
