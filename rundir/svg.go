package rundir

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// SelectionPoint is one (L, chain) fit's held-out scores, one point of each
// line in selection.svg. NaN scores (no held-out entries) are left out of
// the lines.
type SelectionPoint struct {
	L, Chain        int
	HeldoutAccuracy float64
	HeldoutLogPred  float64
}

// Geometry of selection.svg, in SVG user units (pixels).
const (
	svgWidth, svgHeight = 980, 375
	panelLeft           = 80  // left edge of the first plot area
	panelWidth          = 320 // width of each plot area
	panelGap            = 110 // from the right edge of one plot area to the left of the next
	plotTop, plotBottom = 50, 320
	legendLeft          = panelLeft + 2*panelWidth + panelGap + 30
)

// chainColors is the Okabe–Ito palette, readable by colour-blind readers;
// after it is used up the lines repeat it dashed.
var chainColors = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"}

// WriteSelectionSVG writes selection.svg to path, atomically: two panels,
// held-out accuracy and held-out log predictive against L, one line per
// chain, with a legend. The SVG is plain text made here, with no fonts or
// scripts beyond the generic sans-serif family.
func WriteSelectionSVG(path string, points []SelectionPoint) error {
	var b bytes.Buffer
	renderSelection(&b, points)
	return WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(b.Bytes())
		return err
	})
}

func renderSelection(b *bytes.Buffer, points []SelectionPoint) {
	pts := slices.Clone(points)
	slices.SortFunc(pts, func(a, b SelectionPoint) int {
		if a.Chain != b.Chain {
			return a.Chain - b.Chain
		}
		return a.L - b.L
	})
	var chains []int
	for _, p := range pts {
		if len(chains) == 0 || chains[len(chains)-1] != p.Chain {
			chains = append(chains, p.Chain)
		}
	}

	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n",
		svgWidth, svgHeight, svgWidth, svgHeight)
	b.WriteString("<title>scpipe model selection: held-out scores against L</title>\n")
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="white"/>`+"\n", svgWidth, svgHeight)

	xs := axisL(pts)
	panels := []struct {
		title, ylabel string
		value         func(SelectionPoint) float64
	}{
		{"Held-out accuracy", "fraction of held-out entries correct", func(p SelectionPoint) float64 { return p.HeldoutAccuracy }},
		{"Held-out log predictive", "mean log p(held-out entry)", func(p SelectionPoint) float64 { return p.HeldoutLogPred }},
	}
	for i, pn := range panels {
		left := float64(panelLeft + i*(panelWidth+panelGap))
		var vals []float64
		for _, p := range pts {
			if v := pn.value(p); !math.IsNaN(v) && !math.IsInf(v, 0) {
				vals = append(vals, v)
			}
		}
		ys := axisValues(vals)
		renderPanel(b, left, pn.title, pn.ylabel, xs, ys, pts, chains, pn.value)
	}

	fmt.Fprintf(b, `<text x="%d" y="%d" font-weight="bold">chain</text>`+"\n", legendLeft, plotTop+4)
	for i, c := range chains {
		y := plotTop + 24 + 20*i
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" %s/>`+"\n", legendLeft, y, legendLeft+26, y, lineStyle(i))
		fmt.Fprintf(b, `<circle cx="%d" cy="%d" r="3" fill="%s"/>`+"\n", legendLeft+13, y, chainColors[i%len(chainColors)])
		fmt.Fprintf(b, `<text x="%d" y="%d" dominant-baseline="middle">%d</text>`+"\n", legendLeft+34, y, c)
	}
	b.WriteString("</svg>\n")
}

// axis maps data values to one pixel direction and carries its ticks.
type axis struct {
	lo, hi   float64 // data range shown
	ticks    []float64
	decimals int // digits after the point in tick labels
}

// frac returns where v lies in [lo, hi], from 0 to 1.
func (a axis) frac(v float64) float64 { return (v - a.lo) / (a.hi - a.lo) }

func (a axis) label(v float64) string {
	if math.Abs(v) < 0.5*math.Pow10(-a.decimals) {
		v = 0 // no "-0.0" from rounding noise
	}
	return strconv.FormatFloat(v, 'f', a.decimals, 64)
}

// axisL is the L axis: integer ticks at multiples of a round step, half a
// step of margin on each side so that no point sits on the frame.
func axisL(pts []SelectionPoint) axis {
	if len(pts) == 0 {
		return axis{lo: 0.5, hi: 1.5}
	}
	lo, hi := pts[0].L, pts[0].L
	for _, p := range pts {
		lo, hi = min(lo, p.L), max(hi, p.L)
	}
	step := max(1, int(niceStep(float64(hi-lo), 10)))
	a := axis{lo: float64(lo) - 0.5, hi: float64(hi) + 0.5}
	for t := (lo + step - 1) / step * step; t <= hi; t += step {
		a.ticks = append(a.ticks, float64(t))
	}
	return a
}

// axisValues is a value axis over vals with about five round ticks that
// enclose the data, and a margin of 4% of the tick span beyond the outer
// ticks so that extreme points do not sit on the frame. With no values it
// has no ticks.
func axisValues(vals []float64) axis {
	if len(vals) == 0 {
		return axis{lo: 0, hi: 1}
	}
	lo, hi := slices.Min(vals), slices.Max(vals)
	if hi-lo < 1e-12*max(1, math.Abs(lo)) {
		pad := max(0.05*math.Abs(lo), 0.01)
		lo, hi = lo-pad, hi+pad
	}
	step := niceStep(hi-lo, 5)
	first, last := math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	var a axis
	for i := 0; ; i++ {
		t := first + float64(i)*step
		if t > last+step/2 {
			break
		}
		a.ticks = append(a.ticks, t)
	}
	margin := 0.04 * (last - first)
	a.lo, a.hi = first-margin, last+margin
	a.decimals = max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	return a
}

// niceStep returns a step of 1, 2 or 5 times a power of ten that cuts span
// into at most about n intervals.
func niceStep(span float64, n int) float64 {
	if span <= 0 {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw*(1-1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

func lineStyle(i int) string {
	s := fmt.Sprintf(`stroke="%s" stroke-width="2"`, chainColors[i%len(chainColors)])
	if i >= len(chainColors) {
		s += ` stroke-dasharray="6 3"`
	}
	return s
}

func renderPanel(b *bytes.Buffer, left float64, title, ylabel string, xs, ys axis, pts []SelectionPoint, chains []int, value func(SelectionPoint) float64) {
	right := left + panelWidth
	px := func(v float64) float64 { return left + xs.frac(v)*panelWidth }
	py := func(v float64) float64 { return plotBottom - ys.frac(v)*(plotBottom-plotTop) }

	fmt.Fprintf(b, "<g>\n")
	fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle" font-size="14" font-weight="bold">%s</text>`+"\n", left+panelWidth/2, plotTop-18, escape(title))
	for _, t := range ys.ticks {
		y := py(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/>`+"\n", left, y, right, y)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", left-5, y, left, y)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", left-8, y, ys.label(t))
	}
	for _, t := range xs.ticks {
		x := px(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black"/>`+"\n", x, plotBottom, x, plotBottom+5)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x, plotBottom+19, xs.label(t))
	}
	fmt.Fprintf(b, `<rect x="%.1f" y="%d" width="%d" height="%d" fill="none" stroke="black"/>`+"\n", left, plotTop, panelWidth, plotBottom-plotTop)
	fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">L (number of codes)</text>`+"\n", left+panelWidth/2, plotBottom+40)
	cy := float64(plotTop+plotBottom) / 2
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" transform="rotate(-90 %.1f %.1f)">%s</text>`+"\n", left-62, cy, left-62, cy, escape(ylabel))

	drawn := false
	for i, c := range chains {
		var seg [][2]float64
		flush := func() {
			if len(seg) > 1 {
				b.WriteString(`<polyline fill="none" ` + lineStyle(i) + ` points="`)
				for j, q := range seg {
					if j > 0 {
						b.WriteByte(' ')
					}
					fmt.Fprintf(b, "%.1f,%.1f", q[0], q[1])
				}
				b.WriteString("\"/>\n")
			}
			for _, q := range seg {
				fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", q[0], q[1], chainColors[i%len(chainColors)])
			}
			seg = seg[:0]
		}
		for _, p := range pts {
			if p.Chain != c {
				continue
			}
			v := value(p)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				flush() // a gap in the line where a fit has no score
				continue
			}
			seg = append(seg, [2]float64{px(float64(p.L)), py(v)})
			drawn = true
		}
		flush()
	}
	if !drawn {
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#777">no held-out entries</text>`+"\n", left+panelWidth/2, cy)
	}
	b.WriteString("</g>\n")
}

func escape(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
