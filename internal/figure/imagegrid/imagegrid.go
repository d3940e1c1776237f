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
// screen pixels, and links between panels drawn as arrows from the bottom
// of one to the top of another (the paper's Fig. calc_hier); rows are set
// further apart when there are links.
type Figure struct {
	Title string
	Scale int
	Rows  []Row
	Links []Link
}

// Link is an arrow from panel From to panel To, each [row, panel] indices
// into Figure.Rows; Strength in [0, 1] is its opacity and Title its text
// on hovering (SVG only).
type Link struct {
	From, To [2]int
	Strength float64
	Title    string
}

// Geometry of a figure, in screen pixels.
const (
	margin     = 10
	labelWidth = 120 // left of the panels, for the rows' labels
	titleBand  = 16  // above each panel, for its title
	gap        = 8   // between panels and between rows
	headBand   = 28  // above the first row, for the figure's title
	linkBand   = 48  // between rows, with links, for the arrows
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
		if len(f.Links) > 0 {
			y += linkBand
		}
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
	for k, l := range f.Links {
		for _, end := range [][2]int{l.From, l.To} {
			if end[0] < 0 || end[0] >= len(f.Rows) || end[1] < 0 || end[1] >= len(f.Rows[end[0]].Panels) {
				return fmt.Errorf("imagegrid: link %d names panel %d of row %d, which the figure lacks", k+1, end[1]+1, end[0]+1)
			}
		}
		if !(l.Strength >= 0 && l.Strength <= 1) {
			return fmt.Errorf("imagegrid: link %d has strength %v, outside [0, 1]", k+1, l.Strength)
		}
	}
	return nil
}

// ends returns where link l leaves its panel (the bottom's middle) and
// where it arrives (the top's middle, above the panel's title).
func ends(boxes [][]box, l Link) (x1, y1, x2, y2 int) {
	a, b := boxes[l.From[0]][l.From[1]], boxes[l.To[0]][l.To[1]]
	return a.x + a.w/2, a.y + a.h + 2, b.x + b.w/2, b.y - titleBand
}

// line draws a line of colour c from (x1, y1) to (x2, y2), one pixel wide.
func line(img *image.RGBA, x1, y1, x2, y2 int, c color.RGBA) {
	n := max(abs(x2-x1), abs(y2-y1), 1)
	for i := 0; i <= n; i++ {
		x := x1 + int(math.Round(float64((x2-x1)*i)/float64(n)))
		y := y1 + int(math.Round(float64((y2-y1)*i)/float64(n)))
		img.SetRGBA(x, y, c)
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
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
	for _, l := range f.Links {
		x1, y1, x2, y2 := ends(boxes, l)
		v := uint8(math.Round(255 * (1 - 0.8*l.Strength)))
		line(img, x1, y1, x2, y2, color.RGBA{v, v, v, 0xff})
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
	if len(f.Links) > 0 {
		b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="#333"/></marker></defs>` + "\n")
	}
	for _, l := range f.Links {
		x1, y1, x2, y2 := ends(boxes, l)
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333" stroke-width="1.5" stroke-opacity="%.3g" marker-end="url(#arrow)"><title>%s</title></line>`+"\n",
			x1, y1, x2, y2, 0.15+0.85*l.Strength, escape(l.Title))
	}
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
