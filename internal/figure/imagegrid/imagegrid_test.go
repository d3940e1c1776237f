package imagegrid

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"image/color"
	"image/png"
	"io"
	"math"
	"strings"
	"testing"
)

func TestLayout(t *testing.T) {
	// A 3 × 2 image of which pixel r1c0 was dropped, genes out of order.
	p, err := Layout([]string{"r0c1", "r0c0", "r1c2", "r0c2", "r1c1"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Width != 3 || p.Height != 2 || p.At[0] != 1 || p.At[2] != 5 || p.At[4] != 4 {
		t.Errorf("layout %+v", p)
	}
	pan := p.Panel("x", func(g int) float64 { return float64(g) / 4 })
	if pan.Values[1] != 0 || pan.Values[5] != 0.5 || !math.IsNaN(pan.Values[3]) {
		t.Errorf("panel values %v: want gene 0 at 1, gene 2 at 5, pixel 3 missing", pan.Values)
	}
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"r0c0", "CD3E"}, `gene 2 is named "CD3E"`},
		{[]string{"r0c0", "r-1c2"}, `"r-1c2"`},
		{[]string{"r0c0", "r+1c2"}, `"r+1c2"`},
		{[]string{"r0c0", "r1c"}, `"r1c"`},
		{[]string{"r99999999c0"}, `"r99999999c0"`},
		{[]string{"r1c1", "r0c0", "r01c1"}, "genes 1 and 3 are both pixel r01c1"},
		{nil, "no genes"},
	} {
		if _, err := Layout(tc.names); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Layout(%q): %v, want %q", tc.names, err, tc.want)
		}
	}
}

// figure is two rows: a 2 × 3 panel (black, white, missing and greys) and a
// 4 × 1 strip.
func figure() Figure {
	return Figure{Title: "test & <figure>", Scale: 3, Rows: []Row{
		{Label: "codes", Panels: []Panel{{Title: "code 1", Width: 2, Height: 3, Values: []float64{1, 0, math.NaN(), 0.5, 0.25, 1}}}},
		{Label: "usage", Panels: []Panel{{Title: "z", Width: 4, Height: 1, Values: []float64{0, 1, 0, 1}}}},
	}}
}

// TestPNG decodes the PNG and checks every screen pixel of the first panel.
func TestPNG(t *testing.T) {
	f := figure()
	var b bytes.Buffer
	if err := f.WritePNG(&b); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	boxes, w, h := f.layout()
	if img.Bounds().Dx() != w || img.Bounds().Dy() != h {
		t.Fatalf("PNG %v, want %d × %d", img.Bounds(), w, h)
	}
	want := []color.RGBA{{0, 0, 0, 255}, {255, 255, 255, 255}, missing, {128, 128, 128, 255}, {191, 191, 191, 255}, {0, 0, 0, 255}}
	bx := boxes[0][0]
	for y := range bx.h {
		for x := range bx.w {
			got := color.RGBAModel.Convert(img.At(bx.x+x, bx.y+y)).(color.RGBA)
			if w := want[(y/3)*2+x/3]; got != w {
				t.Fatalf("screen pixel (%d, %d) of the panel: %v, want %v", x, y, got, w)
			}
		}
	}
	if got := color.RGBAModel.Convert(img.At(bx.x-1, bx.y)).(color.RGBA); got != frameColour {
		t.Errorf("frame %v, want %v", got, frameColour)
	}
	if got := color.RGBAModel.Convert(img.At(bx.x-2, bx.y)).(color.RGBA); got != (color.RGBA{255, 255, 255, 255}) {
		t.Errorf("background %v, want white", got)
	}
}

// TestSVG checks that the SVG is well-formed, carries the titles and
// labels, and embeds each panel as a PNG of its pixels.
func TestSVG(t *testing.T) {
	f := figure()
	var b bytes.Buffer
	if err := f.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(b.Bytes()))
	var texts []string
	var images []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v", err)
		}
		switch tok := tok.(type) {
		case xml.CharData:
			if s := strings.TrimSpace(string(tok)); s != "" {
				texts = append(texts, s)
			}
		case xml.StartElement:
			for _, a := range tok.Attr {
				if a.Name.Local == "href" {
					images = append(images, a.Value)
				}
			}
		}
	}
	for _, w := range []string{"test & <figure>", "codes", "usage", "code 1", "z"} {
		if !strings.Contains(strings.Join(texts, "\n"), w) {
			t.Errorf("SVG lacks the text %q (has %q)", w, texts)
		}
	}
	if len(images) != 2 {
		t.Fatalf("%d embedded images, want 2", len(images))
	}
	data, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(images[1], "data:image/png;base64,"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != 4 || img.Bounds().Dy() != 1 {
		t.Fatalf("embedded strip %v, want 4 × 1", img.Bounds())
	}
	if r, _, _, _ := img.At(1, 0).RGBA(); r != 0 {
		t.Errorf("strip pixel 1 (value 1) not black")
	}
	bad := Figure{Rows: []Row{{Panels: []Panel{{Width: 2, Height: 2, Values: []float64{1}}}}}}
	if err := bad.WriteSVG(io.Discard); err == nil {
		t.Error("a panel with too few values was drawn")
	}
}

// TestLinks draws an arrow from the first row's panel to the second's:
// the SVG has one line with its title, between the panels' edges; the PNG
// darkens the screen pixels on its way, more for a stronger link; links
// to panels the figure lacks, and strengths outside [0, 1], are errors.
func TestLinks(t *testing.T) {
	f := figure()
	f.Links = []Link{{From: [2]int{0, 0}, To: [2]int{1, 0}, Strength: 1, Title: "part of, 0.97"}}
	var b bytes.Buffer
	if err := f.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	if strings.Count(svg, "<line ") != 1 || !strings.Contains(svg, "<title>part of, 0.97</title>") {
		t.Errorf("SVG: want one line titled %q:\n%s", "part of, 0.97", svg)
	}
	boxes, _, _ := f.layout()
	x1, y1, x2, y2 := ends(boxes, f.Links[0])
	if from, to := boxes[0][0], boxes[1][0]; y1 <= from.y+from.h || y2 >= to.y || y2-y1 < linkBand {
		t.Errorf("arrow from y %d to %d, panels end at %d and start at %d", y1, y2, from.y+from.h, to.y)
	}
	mid := func(strength float64) uint32 {
		f.Links[0].Strength = strength
		var b bytes.Buffer
		if err := f.WritePNG(&b); err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(&b)
		if err != nil {
			t.Fatal(err)
		}
		darkest := uint32(0xffff) // around the middle: the line may pass a pixel beside it
		for dx := -1; dx <= 1; dx++ {
			r, _, _, _ := img.At((x1+x2)/2+dx, (y1+y2)/2).RGBA()
			darkest = min(darkest, r)
		}
		return darkest
	}
	if strong, weak := mid(1), mid(0.2); strong >= weak || weak >= 0xffff {
		t.Errorf("PNG line at its middle: red %d at strength 1, %d at 0.2; want darker when stronger, and drawn", strong, weak)
	}
	for _, bad := range []Link{{From: [2]int{0, 1}, To: [2]int{1, 0}}, {From: [2]int{0, 0}, To: [2]int{2, 0}}, {To: [2]int{1, 0}, Strength: 1.5}} {
		f.Links = []Link{bad}
		if err := f.WriteSVG(io.Discard); err == nil {
			t.Errorf("link %+v: no error", bad)
		}
	}
}
