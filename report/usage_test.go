package report

import (
	"bytes"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestUsageIdle counts the cells that use none of a set of codes against
// a count over the cells themselves.
func TestUsageIdle(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	const N, L = 500, 3
	mean := make([]float64, N*L)
	for i := range mean {
		mean[i] = rng.Float64() * rng.Float64()
	}
	u := countUsage(mean, L, 0.5)
	for _, uses := range [][]bool{{true, true, true}, {true, false, true}, {false, false, false}, {false, true, false}} {
		want := 0
		for n := range N {
			used := false
			for k := range L {
				used = used || uses[k] && mean[n*L+k] >= 0.5
			}
			if !used {
				want++
			}
		}
		if got := u.idle(uses); got != want {
			t.Errorf("idle(%v) = %d, want %d", uses, got, want)
		}
	}
}

// TestUsageBands checks the bands of cells against sums over the cells
// themselves: with one band per cell, each band is its pattern's mean; in
// any number of bands, each code's total usage over the bands (band mean ×
// cells per band) is its total over the cells, and cells come in the
// display order of their patterns.
func TestUsageBands(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	const N, L = 997, 4 // a prime, so that no number of bands divides it
	mean := make([]float64, N*L)
	for i := range mean {
		if rng.Float64() < 0.3 {
			mean[i] = 0.5 + 0.5*rng.Float64()
		} else {
			mean[i] = 0.5 * rng.Float64()
		}
	}
	u := countUsage(mean, L, 0.5)
	if u.Cells != N || len(u.Patterns) > 1<<L {
		t.Fatalf("%d cells in %d patterns", u.Cells, len(u.Patterns))
	}
	total := 0
	for _, c := range u.Count {
		total += c
	}
	if total != N {
		t.Fatalf("patterns hold %d cells, want %d", total, N)
	}
	codes := []int{2, 0, 3, 1}
	sums := make([]float64, L)
	for n := range N {
		for k := range L {
			sums[k] += mean[n*L+k]
		}
	}
	for _, rows := range []int{1, 7, 400, N, 5000} {
		z, got, _, _ := u.bands(codes, rows)
		if want := min(rows, N); got != want || len(z) != want*len(codes) {
			t.Fatalf("%d rows asked: %d bands, %d values", rows, got, len(z))
		}
		for j, k := range codes {
			s := 0.0
			for b := range got {
				s += z[b*len(codes)+j] * float64(N) / float64(got)
			}
			if math.Abs(s-sums[k]) > 1e-9*sums[k] {
				t.Errorf("%d bands: code %d totals %v over the bands, %v over the cells", got, k, s, sums[k])
			}
		}
	}
	// One band per cell: the bands are the cells' patterns in display order,
	// each showing its pattern's mean.
	z, _, order, start := u.bands(codes, N)
	for i, p := range order {
		if i > 0 {
			prev := u.Patterns[order[i-1]]
			for _, k := range codes {
				if prev[k] != u.Patterns[p][k] {
					if prev[k] < u.Patterns[p][k] {
						t.Fatalf("pattern %q before %q: cells using code %d must come first", prev, u.Patterns[p], k)
					}
					break
				}
			}
		}
		for b := int(start[i]); b < int(start[i])+u.Count[p]; b++ {
			for j, k := range codes {
				if want := u.Sum[p*L+k] / float64(u.Count[p]); math.Abs(z[b*L+j]-want) > 1e-12 {
					t.Fatalf("band %d, code %d: %v, its pattern's mean %v", b, k, z[b*L+j], want)
				}
			}
		}
	}
}

// TestCellsFigureBounded: the cell usage figure of a thousand cells and of
// half a million is the same size, element for element, and draws its
// heat map as one image: nothing in it grows with the cells.
func TestCellsFigureBounded(t *testing.T) {
	t.Parallel()
	const L = 5
	codes, labels := []int{0, 1, 2, 3, 4}, []string{"1", "2", "3", "4", "5"}
	var sizes []int
	for _, N := range []int{1000, 500000} {
		mean := make([]float64, N*L)
		for n := range N {
			mean[n*L+n%L] = 0.95
			mean[n*L+(n/L)%L] += 0.6 * float64(n%3/2)
		}
		fig, err := cellsFigure("cells", countUsage(mean, L, 0.5), codes, labels)
		must(t, err)
		if n := bytes.Count(fig.SVG, []byte("<image ")); n != 2 { // the heat map and the colour bar
			t.Errorf("%d cells: %d images, want 2", N, n)
		}
		sizes = append(sizes, bytes.Count(fig.SVG, []byte("<")))
		if len(fig.SVG) > 200_000 {
			t.Errorf("%d cells: %d bytes", N, len(fig.SVG))
		}
	}
	if sizes[0] != sizes[1] {
		t.Errorf("elements: %d for a thousand cells, %d for half a million", sizes[0], sizes[1])
	}
}

// TestCheckPage feeds the page checker what a report must never hold: it
// must say why for each, or the tests that use it could not fail.
func TestCheckPage(t *testing.T) {
	t.Parallel()
	const head, tail = "<!DOCTYPE html><html><head><title>x</title></head><body>", "</body></html>"
	good := head + `<figure id="fig-a"><svg viewBox="0 0 1 1"><path d="M0,0L1,1"/><image href="data:image/png;base64,iVBO//w=="/></svg></figure>` + tail
	figs, err := checkPage([]byte(good))
	if err != nil || len(figs) != 1 || figs[0] != "fig-a" {
		t.Fatalf("a good page: figures %v, %v", figs, err)
	}
	for _, tc := range []struct{ page, want string }{
		{head + `<script>alert(1)</script>` + tail, "<script>"},
		{head + `<img src="plot.png">` + tail, "outside the page"},
		{head + `<a href="https://example.org">x</a>` + tail, "outside the page"},
		{head + `<svg><image xlink:href="//cdn/x.png"/></svg>` + tail, "outside the page"},
		{head + `<div style="background: url(x.png)">x</div>` + tail, "address"},
		{head + `<div title="see http://x">x</div>` + tail, "address"},
		{head + `<style>@import "x.css";</style>` + tail, "style sheet"},
		{head + `<p onclick="x()">x</p>` + tail, "event handler"},
		{head + `<div><p>x</div>` + tail, "closes"},
		{head + `<div>x` + tail, "closes"},
		{strings.TrimPrefix(good, "<!DOCTYPE html>"), "DOCTYPE"},
		{head + `<link rel="stylesheet" href="#x">` + tail, "<link>"},
	} {
		if _, err := checkPage([]byte(tc.page)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.60q: error %v, want one saying %q", tc.page, err, tc.want)
		}
	}
}

// TestCheckNotBlank: a uniform screenshot and one with too little on it
// fail; one with text and figures passes.
func TestCheckNotBlank(t *testing.T) {
	t.Parallel()
	page := func(text, figure int) image.Image {
		img := image.NewRGBA(image.Rect(0, 0, 200, 200))
		for i := range img.Pix {
			img.Pix[i] = 0xff
		}
		for i := range text {
			img.Set(i%200, 10+i/200, color.Black)
		}
		for i := range figure {
			img.Set(i%200, 100+i/200, color.RGBA{0x21, 0x71, 0xb5, 0xff})
		}
		return img
	}
	for _, tc := range []struct {
		name         string
		text, figure int
		ok           bool
	}{
		{"blank", 0, 0, false},
		{"a few specks", 100, 100, false},
		{"text only", 2000, 0, false},
		{"figures only", 0, 2000, false},
		{"text and figures", 1000, 3000, true},
	} {
		err := checkNotBlank(page(tc.text, tc.figure))
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestCountUsageManyCodes: past 64 codes patterns are told apart by all
// their codes, not by a 64-bit mask (codes 1 and 65 share a bit of it).
func TestCountUsageManyCodes(t *testing.T) {
	t.Parallel()
	const L = 70
	mean := make([]float64, 3*L)
	mean[0*L+0] = 1  // cell 1 uses code 1
	mean[1*L+64] = 1 // cell 2 code 65
	mean[2*L+0] = 1  // cell 3 code 1 again
	u := countUsage(mean, L, 0.5)
	if len(u.Patterns) != 2 || u.Count[0] != 2 || u.Count[1] != 1 || u.Patterns[1][64] != 1 {
		t.Errorf("patterns %d, counts %v", len(u.Patterns), u.Count)
	}
}
