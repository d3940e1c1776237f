package imagegrid

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strconv"
	"strings"
)

// Pixels places genes on an image grid: gene g is pixel At[g] of a
// Width × Height image stored row by row.
type Pixels struct {
	Width, Height int
	At            []int
}

// maxSide bounds an image's side, so that a stray name such as r9999999c0
// does not ask for gigabytes.
const maxSide = 1 << 14

// Layout reads the pixel of every gene from its name, "r<row>c<col>". The
// image is as large as the largest row and column named. It fails on a name
// of another form, and on two genes naming one pixel.
func Layout(names []string) (Pixels, error) {
	if len(names) == 0 {
		return Pixels{}, errors.New("imagegrid: no genes")
	}
	rows, cols := make([]int, len(names)), make([]int, len(names))
	var p Pixels
	for g, name := range names {
		r, c, ok := parsePixel(name)
		if !ok {
			return Pixels{}, fmt.Errorf("imagegrid: gene %d is named %q, not a pixel r<row>c<col> (as scpipe simulate --kind digits names them)", g+1, name)
		}
		rows[g], cols[g] = r, c
		p.Height, p.Width = max(p.Height, r+1), max(p.Width, c+1)
	}
	p.At = make([]int, len(names))
	seen := make(map[int]int, len(names))
	for g := range names {
		at := rows[g]*p.Width + cols[g]
		if h, dup := seen[at]; dup {
			return Pixels{}, fmt.Errorf("imagegrid: genes %d and %d are both pixel %s", h+1, g+1, names[g])
		}
		seen[at] = g
		p.At[g] = at
	}
	return p, nil
}

// parsePixel reads "r<row>c<col>" with decimal, non-negative numbers.
func parsePixel(s string) (r, c int, ok bool) {
	rest, ok := strings.CutPrefix(s, "r")
	if !ok {
		return 0, 0, false
	}
	rs, cs, ok := strings.Cut(rest, "c")
	if !ok {
		return 0, 0, false
	}
	r, err1 := strconv.Atoi(rs)
	c, err2 := strconv.Atoi(cs)
	if err1 != nil || err2 != nil || r < 0 || c < 0 || r >= maxSide || c >= maxSide || rs[0] == '+' || cs[0] == '+' {
		return 0, 0, false
	}
	return r, c, true
}

// Panel returns an image of one value per gene (values[g] for gene g, in
// [0, 1]; NaN: missing); pixels of no gene are missing too.
func (p Pixels) Panel(title string, values func(g int) float64) Panel {
	v := make([]float64, p.Width*p.Height)
	for i := range v {
		v[i] = math.NaN()
	}
	for g, at := range p.At {
		v[at] = values(g)
	}
	return Panel{Title: title, Width: p.Width, Height: p.Height, Values: v}
}

// Panel is one image: Values holds Width × Height values in [0, 1] row by
// row, drawn from white (0) to black (1); NaN is missing, drawn pale blue.
type Panel struct {
	Title         string
	Width, Height int
	Values        []float64
}

// Row is a row of panels with a label on its left (SVG only).
type Row struct {
	Label  string
	Panels []Panel
}

// Figure is rows of panels, each image pixel drawn as Scale × Scale
// screen pixels.
type Figure struct {
	Title string
	Scale int
	Rows  []Row
}

// Geometry of a figure, in screen pixels.
const (
	margin     = 10
	labelWidth = 120 // left of the panels, for the rows' labels
	titleBand  = 16  // above each panel, for its title
	gap        = 8   // between panels and between rows
	headBand   = 28  // above the first row, for the figure's title
)

var missing = color.RGBA{0xcf, 0xe3, 0xf5, 0xff}

// box is where a panel goes.
type box struct{ x, y, w, h int }

// layout places every panel and returns the figure's size.
func (f *Figure) layout() (boxes [][]box, width, height int) {
	s := max(1, f.Scale)
	y := margin + headBand
	width = margin + labelWidth
	for _, r := range f.Rows {
		x, rowH := margin+labelWidth, 0
		var bs []box
		for _, p := range r.Panels {
			b := box{x: x, y: y + titleBand, w: p.Width * s, h: p.Height * s}
			bs = append(bs, b)
			x += b.w + gap
			rowH = max(rowH, b.h)
		}
		boxes = append(boxes, bs)
		width = max(width, x)
		y += titleBand + rowH + gap
	}
	return boxes, width + margin, y + margin
}

var frameColour = color.RGBA{0xbb, 0xbb, 0xbb, 0xff}

// frame draws a one-pixel frame just outside b.
func frame(img *image.RGBA, b box) {
	for x := b.x - 1; x <= b.x+b.w; x++ {
		img.SetRGBA(x, b.y-1, frameColour)
		img.SetRGBA(x, b.y+b.h, frameColour)
	}
	for y := b.y - 1; y <= b.y+b.h; y++ {
		img.SetRGBA(b.x-1, y, frameColour)
		img.SetRGBA(b.x+b.w, y, frameColour)
	}
}

// grey returns the colour of v.
func grey(v float64) color.RGBA {
	if math.IsNaN(v) {
		return missing
	}
	l := uint8(math.Round(255 * (1 - max(0, min(1, v)))))
	return color.RGBA{l, l, l, 0xff}
}

// paint draws p at b into img.
func paint(img *image.RGBA, p Panel, b box, s int) {
	for y := range b.h {
		for x := range b.w {
			img.SetRGBA(b.x+x, b.y+y, grey(p.Values[(y/s)*p.Width+x/s]))
		}
	}
}

func (f *Figure) check() error {
	for i, r := range f.Rows {
		for j, p := range r.Panels {
			if p.Width < 1 || p.Height < 1 || len(p.Values) != p.Width*p.Height {
				return fmt.Errorf("imagegrid: row %d panel %d: %d values for %d × %d pixels", i+1, j+1, len(p.Values), p.Width, p.Height)
			}
		}
	}
	return nil
}

// WritePNG writes the figure's images on white, without text.
func (f *Figure) WritePNG(w io.Writer) error {
	if err := f.check(); err != nil {
		return err
	}
	boxes, width, height := f.layout()
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	for i, r := range f.Rows {
		for j, p := range r.Panels {
			b := boxes[i][j]
			frame(img, b)
			paint(img, p, b, max(1, f.Scale))
		}
	}
	return png.Encode(w, img)
}

// WriteSVG writes the figure with its title, the rows' labels and the
// panels' titles; each panel is a PNG embedded in the SVG and drawn with
// sharp pixels, so that the file stays small for large images.
func (f *Figure) WriteSVG(w io.Writer) error {
	if err := f.check(); err != nil {
		return err
	}
	boxes, width, height := f.layout()
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, "<title>%s</title>\n", escape(f.Title))
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="14" font-weight="bold">%s</text>`+"\n", margin, margin+14, escape(f.Title))
	for i, r := range f.Rows {
		if len(boxes[i]) == 0 {
			continue
		}
		bx := boxes[i][0]
		fmt.Fprintf(&b, `<text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n", margin, bx.y+bx.h/2, escape(r.Label))
		for j, p := range r.Panels {
			bx := boxes[i][j]
			var img bytes.Buffer
			if err := png.Encode(&img, panelImage(p)); err != nil {
				return err
			}
			fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", bx.x, bx.y-4, escape(p.Title))
			fmt.Fprintf(&b, `<image x="%d" y="%d" width="%d" height="%d" preserveAspectRatio="none" style="image-rendering:pixelated;image-rendering:crisp-edges" xlink:href="data:image/png;base64,%s"/>`+"\n",
				bx.x, bx.y, bx.w, bx.h, base64.StdEncoding.EncodeToString(img.Bytes()))
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#bbb"/>`+"\n", bx.x, bx.y, bx.w, bx.h)
		}
	}
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// panelImage returns p at one screen pixel per image pixel.
func panelImage(p Panel) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, p.Width, p.Height))
	paint(img, p, box{w: p.Width, h: p.Height}, 1)
	return img
}

func escape(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
