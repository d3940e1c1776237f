// Package figure draws every plot and diagram scpipe writes (pictures of
// image data, package imagegrid, aside), with gonum/plot, in one
// look: a sans-serif font, the Okabe–Ito palette for chains (readable by
// colour-blind readers; past its seven colours the lines repeat it
// dashed), error bars of one standard error, panels aligned in a grid,
// the legend in a strip of its own where it covers no data. Each figure is
// a standalone SVG file.
//
// The figures of a run (Selection, the run's selection.svg and the
// report's; Traces) take rundir's tables, evaluate's (ROC, Calibration)
// its tallies; NewPlot, Font, the tick markers and Render are what the
// report's heat maps draw with. The report's diagram of the programs
// across L (Hierarchy) is written as SVG text in the same font and
// palette: each of its programs and links carries a tooltip (an SVG
// title), which gonum's canvas cannot write.
package figure

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// sans is the font of every text; gonum's default is a serif.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// Font is the figures' font at size points.
func Font(size vg.Length) font.Font { return font.From(sans, size) }

var (
	chainColors = []color.RGBA{
		{0x00, 0x72, 0xB2, 0xff}, {0xD5, 0x5E, 0x00, 0xff}, {0x00, 0x9E, 0x73, 0xff}, {0xCC, 0x79, 0xA7, 0xff},
		{0xE6, 0x9F, 0x00, 0xff}, {0x56, 0xB4, 0xE9, 0xff}, {0x00, 0x00, 0x00, 0xff},
	}
	burnInShade = color.RGBA{0xe8, 0xe8, 0xe8, 0xff}
	gridGrey    = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
	// MissingGrey fills what has no value, such as the cells of a heat map
	// that no program covers.
	MissingGrey = color.RGBA{0xd9, 0xd9, 0xd9, 0xff}
)

// NewPlot returns a plot with the figures' fonts.
func NewPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.Title.TextStyle.Font = Font(11)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = Font(10)
		a.Tick.Label.Font = Font(9)
	}
	p.Legend.TextStyle.Font = Font(9)
	return p
}

// chainStyle is the line of the i-th chain drawn (from 0): the palette's
// colours, then the same dashed.
func chainStyle(i int) draw.LineStyle {
	s := draw.LineStyle{Color: chainColors[i%len(chainColors)], Width: vg.Points(1.2)}
	if i >= len(chainColors) {
		s.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	}
	return s
}

// Render draws with paint on an SVG canvas of w × h points and returns the
// standalone file.
func Render(w, h vg.Length, paint func(dc draw.Canvas)) ([]byte, error) {
	c := vgsvg.New(w, h)
	paint(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("figure: render SVG: %w", err)
	}
	return fixSVG(b.Bytes()), nil
}

var (
	// vgsvg embeds every image as PNG but labels it image/jpg; browsers
	// sniff it, but a viewer that trusts the label would not.
	jpgLabel = []byte("data:image/jpg;base64,")
	pngLabel = []byte("data:image/png;base64,")
	// vgsvg names the font it measured the text with, Liberation Sans,
	// which few machines have; Arial has the same metrics (Liberation Sans
	// was drawn to match it), so the text keeps its place.
	fontName     = []byte("font-family:Liberation Sans;")
	fontFallback = []byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")
	// An SVG image keeps its aspect ratio unless told otherwise, which
	// would squeeze a heat map of 2 codes × 400 bands into a sliver of its
	// plot area; gonum means it to fill the rectangle it gives.
	imageTag     = []byte("<image ")
	imageStretch = []byte(`<image preserveAspectRatio="none" `)
)

func fixSVG(svg []byte) []byte {
	svg = bytes.ReplaceAll(svg, jpgLabel, pngLabel)
	svg = bytes.ReplaceAll(svg, imageTag, imageStretch)
	return bytes.ReplaceAll(svg, fontName, fontFallback)
}

// addSeries adds a line through xs, ys (with points when marks), broken
// where a value is NaN or infinite, to p.
func addSeries(p *plot.Plot, xs, ys []float64, style draw.LineStyle, marks bool) error {
	var seg plotter.XYs
	flush := func() error {
		if len(seg) == 0 {
			return nil
		}
		l, err := plotter.NewLine(seg)
		if err != nil {
			return err
		}
		l.LineStyle = style
		p.Add(l)
		if marks {
			s, err := plotter.NewScatter(seg)
			if err != nil {
				return err
			}
			s.GlyphStyle = draw.GlyphStyle{Color: style.Color, Radius: vg.Points(2.2), Shape: draw.CircleGlyph{}}
			p.Add(s)
		}
		seg = nil
		return nil
	}
	for i := range xs {
		if finite(ys[i]) {
			seg = append(seg, plotter.XY{X: xs[i], Y: ys[i]})
		} else if err := flush(); err != nil {
			return err
		}
	}
	return flush()
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// addGrid adds light lines at the major ticks, under what is added after
// it.
func addGrid(p *plot.Plot) {
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = gridGrey, gridGrey
	g.Horizontal.Width = vg.Points(0.6)
	g.Vertical.Width = 0 // the L axis needs no lines: its points sit on the ticks
	p.Add(g)
}

// integerTicks marks whole numbers only (L).
type integerTicks struct{}

// Ticks returns ticks at whole numbers from lo to hi, at most about ten.
func (integerTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	step := math.Max(1, math.Ceil((hi-lo)/10))
	for v := math.Ceil(lo); v <= hi; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.Itoa(int(v))})
	}
	return ticks
}

// compactTicks are gonum's default ticks with labels in as few significant
// digits as tell them apart (at least three), and SI suffixes for large
// magnitudes: -1.2e+09 reads worse than -1.2G, and a log-likelihood moving
// in its fifth digit needs five.
type compactTicks struct{}

// Ticks returns gonum's default ticks from lo to hi with compact labels.
func (compactTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for digits := 3; digits <= 12; digits++ {
		seen := map[string]bool{}
		distinct := true
		for _, t := range ticks {
			if t.Label != "" {
				l := Compact(t.Value, digits)
				distinct = distinct && !seen[l]
				seen[l] = true
			}
		}
		if distinct || digits == 12 {
			for i := range ticks {
				if ticks[i].Label != "" {
					ticks[i].Label = Compact(ticks[i].Value, digits)
				}
			}
			break
		}
	}
	return ticks
}

// Compact formats v in at most digits significant digits, with k, M, G
// for thousands, millions, billions.
func Compact(v float64, digits int) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return strconv.FormatFloat(v/1e9, 'g', digits, 64) + "G"
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', digits, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'g', digits, 64) + "k"
	case a >= 1 && v == math.Trunc(v):
		return strconv.Itoa(int(v)) // 1000, not 1e+03
	}
	return strconv.FormatFloat(v, 'g', digits, 64)
}

// drawGrid draws rows of plots with their axes aligned.
func drawGrid(grid [][]*plot.Plot, dc draw.Canvas) {
	t := draw.Tiles{Rows: len(grid), Cols: len(grid[0]), PadX: vg.Points(20), PadY: vg.Points(8),
		PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	canvases := plot.Align(grid, t, dc)
	for i := range grid {
		for j, p := range grid[i] {
			p.Draw(canvases[i][j])
		}
	}
}

// legendEntry is one line of a figure's legend.
type legendEntry struct {
	label string
	style draw.LineStyle
	mark  bool // a point on the line, as on the chains' lines
	bar   bool // an error bar instead of a line
}

func (e *legendEntry) Thumbnail(c *draw.Canvas) {
	m := c.Center()
	if e.bar {
		h, w := (c.Max.Y-c.Min.Y)/2, vg.Points(2.5)
		c.StrokeLine2(e.style, m.X, m.Y-h, m.X, m.Y+h)
		c.StrokeLine2(e.style, m.X-w, m.Y-h, m.X+w, m.Y-h)
		c.StrokeLine2(e.style, m.X-w, m.Y+h, m.X+w, m.Y+h)
		return
	}
	c.StrokeLine2(e.style, c.Min.X, m.Y, c.Max.X, m.Y)
	if e.mark {
		c.DrawGlyph(draw.GlyphStyle{Color: e.style.Color, Radius: vg.Points(2.2), Shape: draw.CircleGlyph{}}, m)
	}
}

// withLegend draws entries in a strip of width w on the right of dc, where
// it covers no data, and returns the rest of dc. Without entries there is
// no strip.
func withLegend(dc draw.Canvas, w vg.Length, entries []legendEntry) draw.Canvas {
	if len(entries) == 0 {
		return dc
	}
	l := plot.NewLegend()
	l.TextStyle.Font = Font(9)
	l.Top, l.Left = true, true
	l.ThumbnailWidth, l.Padding = vg.Points(22), vg.Points(3)
	for i := range entries {
		l.Add(entries[i].label, &entries[i])
	}
	l.Draw(draw.Crop(dc, dc.Max.X-dc.Min.X-w, 0, 0, -vg.Points(24)))
	return draw.Crop(dc, 0, -w, 0, 0)
}

// chainEntries are the legend's lines of the chains, none for one chain.
func chainEntries(chains []int, marks bool) []legendEntry {
	if len(chains) < 2 {
		return nil
	}
	var es []legendEntry
	for i, c := range chains {
		es = append(es, legendEntry{label: "chain " + strconv.Itoa(c), style: chainStyle(i), mark: marks})
	}
	return es
}

// finiteRange returns the smallest and largest finite values of the
// slices; lo > hi when there is none.
func finiteRange(vs ...[]float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		for _, x := range v {
			if finite(x) {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
	}
	return lo, hi
}

// note writes text in the middle of p's data area, for a panel with
// nothing to draw.
func note(p *plot.Plot, text string) error {
	if !(p.X.Max > p.X.Min) {
		p.X.Min, p.X.Max = 0, 1
	}
	if !(p.Y.Max > p.Y.Min) {
		p.Y.Min, p.Y.Max = 0, 1
	}
	l, err := plotter.NewLabels(plotter.XYLabels{
		XYs:    plotter.XYs{{X: (p.X.Min + p.X.Max) / 2, Y: (p.Y.Min + p.Y.Max) / 2}},
		Labels: []string{text},
	})
	if err != nil {
		return err
	}
	l.TextStyle[0].Font = Font(10)
	l.TextStyle[0].Color = color.Gray{Y: 0x77}
	l.TextStyle[0].XAlign, l.TextStyle[0].YAlign = draw.XCenter, draw.YCenter
	p.Add(l)
	return nil
}
