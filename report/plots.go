package report

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The look shared by every plot: a sans-serif font (gonum's default is a
// serif), the Okabe–Ito palette for chains (as in the run's selection.svg),
// readable by colour-blind readers.
var (
	sansFont    = font.Font{Typeface: "Liberation", Variant: "Sans"}
	chainColors = []color.RGBA{
		{0x00, 0x72, 0xB2, 0xff}, {0xD5, 0x5E, 0x00, 0xff}, {0x00, 0x9E, 0x73, 0xff}, {0xCC, 0x79, 0xA7, 0xff},
		{0xE6, 0x9F, 0x00, 0xff}, {0x56, 0xB4, 0xE9, 0xff}, {0x00, 0x00, 0x00, 0xff},
	}
	burnInShade = color.RGBA{0xe8, 0xe8, 0xe8, 0xff}
	missingGrey = color.RGBA{0xd9, 0xd9, 0xd9, 0xff}
)

// newPlot returns a plot with the report's fonts.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.Title.TextStyle.Font = font.From(sansFont, 11)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sansFont, 10)
		a.Tick.Label.Font = font.From(sansFont, 9)
	}
	p.Legend.TextStyle.Font = font.From(sansFont, 9)
	return p
}

// chainStyle is the line of the i-th chain drawn: the palette's colours,
// then the same dashed.
func chainStyle(i int) draw.LineStyle {
	s := draw.LineStyle{Color: chainColors[i%len(chainColors)], Width: vg.Points(1.2)}
	if i >= len(chainColors) {
		s.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	}
	return s
}

// addSeries adds a line through xs, ys (with points when marks), broken
// where a value is NaN or infinite, to p.
func addSeries(p *plot.Plot, xs, ys []float64, style draw.LineStyle, marks bool) (plot.Thumbnailer, error) {
	var seg plotter.XYs
	var thumb plot.Thumbnailer
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
		thumb = l
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
		if math.IsNaN(ys[i]) || math.IsInf(ys[i], 0) {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		seg = append(seg, plotter.XY{X: xs[i], Y: ys[i]})
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if thumb == nil { // nothing to draw; the legend still names the chain
		l := &plotter.Line{LineStyle: style}
		thumb = l
	}
	return thumb, nil
}

// integerTicks marks whole numbers only (L).
type integerTicks struct{}

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

func (compactTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for digits := 3; digits <= 12; digits++ {
		seen := map[string]bool{}
		distinct := true
		for _, t := range ticks {
			if t.Label != "" {
				l := compact(t.Value, digits)
				distinct = distinct && !seen[l]
				seen[l] = true
			}
		}
		if distinct || digits == 12 {
			for i := range ticks {
				if ticks[i].Label != "" {
					ticks[i].Label = compact(ticks[i].Value, digits)
				}
			}
			break
		}
	}
	return ticks
}

// compact formats v in at most digits significant digits, with k, M, G for
// thousands, millions, billions.
func compact(v float64, digits int) string {
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

// shadeBurnIn adds a grey band over sweeps 1..burnIn, drawn under what is
// added after it. It spans ys' range.
func shadeBurnIn(p *plot.Plot, burnIn int, lo, hi float64) error {
	if burnIn <= 0 || !(hi >= lo) {
		return nil
	}
	if hi == lo {
		lo, hi = lo-0.5, hi+0.5
	}
	poly, err := plotter.NewPolygon(plotter.XYs{{X: 0.5, Y: lo}, {X: float64(burnIn) + 0.5, Y: lo},
		{X: float64(burnIn) + 0.5, Y: hi}, {X: 0.5, Y: hi}})
	if err != nil {
		return err
	}
	poly.Color, poly.LineStyle.Width = burnInShade, 0
	p.Add(poly)
	return nil
}

// finiteRange returns the smallest and largest finite values of the
// slices; lo > hi when there is none.
func finiteRange(vs ...[]float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		for _, x := range v {
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
	}
	return lo, hi
}

// percent formats a fraction as a percentage.
func percent(f float64) string {
	switch {
	case f == 0:
		return "0%"
	case f < 0.001:
		return "<0.1%"
	case f < 0.1:
		return fmt.Sprintf("%.1f%%", 100*f)
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}
