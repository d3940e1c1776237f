package rundir

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// SelectionPoint is one (L, chain) fit's held-out scores with their
// standard errors, and how its chain agrees with chain 1 of its L: one
// point of each line in selection.svg (SummaryRow documents the fields).
// NaN values are left out of the lines; NaN standard errors draw no bar.
type SelectionPoint struct {
	L, Chain                                   int
	HeldoutAccuracy, HeldoutLogPred            float64
	HeldoutAccuracySE, HeldoutLogPredSE        float64
	LogPredGap, LogPredGapSE, LogPredTolerance float64
	Agreement                                  float64
	Programs, StablePrograms                   int
}

// SelectionFigure is what selection.svg shows.
type SelectionFigure struct {
	Points []SelectionPoint
	// Recommended is the L the run recommends, marked in every panel (0:
	// none).
	Recommended int
	// MinAgreement is the agreement that convergence asks of the chains,
	// drawn as a line in the stability panel (0: none).
	MinAgreement float64
}

// Geometry of selection.svg, in SVG user units (pixels): four panels in
// two rows.
const (
	svgWidth, svgHeight = 1030, 780
	panelWidth          = 340
	panelHeight         = 260
	colLeft0, colLeft1  = 90, 90 + panelWidth + 120 // left edges of the plot areas
	rowTop0, rowTop1    = 50, 50 + panelHeight + 95 // top edges
	legendLeft          = colLeft1 + panelWidth + 30
	dodge               = 4 // horizontal offset between the error bars of neighbouring chains
)

// chainColors is the Okabe–Ito palette, readable by colour-blind readers;
// after it is used up the lines repeat it dashed.
var chainColors = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"}

// WriteSelectionSVG writes selection.svg to path, atomically: four panels
// against L, one line per chain, the recommended L marked in each — the
// held-out log predictive and the held-out accuracy with error bars of one
// standard error over cells; the recommendation's numbers (each L's gap to
// the best L's held-out log predictive with its paired standard error,
// and the tolerance the rule allows it); and the stability of the chains
// (each chain's agreement with chain 1, and the number of programs every
// chain found) — with a legend. The SVG is plain text made here, with no
// fonts or scripts beyond the generic sans-serif family.
func WriteSelectionSVG(path string, fig SelectionFigure) error {
	var b bytes.Buffer
	renderSelection(&b, fig)
	return WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(b.Bytes())
		return err
	})
}

// selectionPanel is one panel of selection.svg.
type selectionPanel struct {
	left, top     float64
	title, ylabel string
	value, se     func(SelectionPoint) float64
	// firstOnly draws chain 1's line alone (a value of the L, not of the
	// chain); skipFirst leaves chain 1 out (its agreement with itself).
	firstOnly, skipFirst bool
	empty                string // what the panel says when it has nothing to draw
	// extra draws more into the panel once its axes are known.
	extra func(b *bytes.Buffer, px, py func(float64) float64)
}

func renderSelection(b *bytes.Buffer, fig SelectionFigure) {
	pts := slices.Clone(fig.Points)
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
	first := func(p SelectionPoint) bool { return len(chains) > 0 && p.Chain == chains[0] }

	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n",
		svgWidth, svgHeight, svgWidth, svgHeight)
	b.WriteString("<title>scpipe model selection: held-out scores and stability of the chains against L</title>\n")
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="white"/>`+"\n", svgWidth, svgHeight)

	xs := axisL(pts)
	nan := func(SelectionPoint) float64 { return math.NaN() }
	panels := []selectionPanel{
		{left: colLeft0, top: rowTop0, title: "Held-out log predictive", ylabel: "mean log p(held-out entry)",
			value: func(p SelectionPoint) float64 { return p.HeldoutLogPred },
			se:    func(p SelectionPoint) float64 { return p.HeldoutLogPredSE }, empty: "no held-out entries"},
		{left: colLeft1, top: rowTop0, title: "Gap to the best L", ylabel: "log predictive below the best L's",
			value: func(p SelectionPoint) float64 { return p.LogPredGap },
			se:    func(p SelectionPoint) float64 { return p.LogPredGapSE }, firstOnly: true, empty: "no held-out entries",
			extra: func(b *bytes.Buffer, px, py func(float64) float64) { renderTolerance(b, px, py, pts, first) }},
		{left: colLeft0, top: rowTop1, title: "Held-out accuracy", ylabel: "fraction of held-out entries correct",
			value: func(p SelectionPoint) float64 { return p.HeldoutAccuracy },
			se:    func(p SelectionPoint) float64 { return p.HeldoutAccuracySE }, empty: "no held-out entries"},
		{left: colLeft1, top: rowTop1, title: "Stability across chains", ylabel: "agreement with chain 1",
			value: func(p SelectionPoint) float64 { return p.Agreement }, se: nan, skipFirst: true, empty: "one chain: not measured",
			extra: func(b *bytes.Buffer, px, py func(float64) float64) {
				renderStability(b, px, py, pts, first, fig.MinAgreement, rowTop1)
			}},
	}
	for _, pn := range panels {
		var vals []float64
		for _, p := range pts {
			v, se := pn.value(p), pn.se(p)
			if pn.skipFirst && first(p) || pn.firstOnly && !first(p) || math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			vals = append(vals, v)
			if !math.IsNaN(se) && !math.IsInf(se, 0) {
				vals = append(vals, v-se, v+se)
			}
			if pn.firstOnly && !math.IsNaN(p.LogPredTolerance) && !math.IsInf(p.LogPredTolerance, 0) {
				vals = append(vals, p.LogPredTolerance)
			}
		}
		if pn.skipFirst && len(vals) > 0 {
			vals = append(vals, 0, 1) // agreement is a fraction: show all of it
		}
		renderPanel(b, pn, xs, axisValues(vals), pts, chains, fig.Recommended, len(vals) > 0)
	}

	fmt.Fprintf(b, `<text x="%d" y="%d" font-weight="bold">chain</text>`+"\n", legendLeft, rowTop0+4)
	for i, c := range chains {
		y := rowTop0 + 24 + 20*i
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" %s/>`+"\n", legendLeft, y, legendLeft+26, y, lineStyle(i))
		fmt.Fprintf(b, `<circle cx="%d" cy="%d" r="3" fill="%s"/>`+"\n", legendLeft+13, y, chainColors[i%len(chainColors)])
		fmt.Fprintf(b, `<text x="%d" y="%d" dominant-baseline="middle">%d</text>`+"\n", legendLeft+34, y, c)
	}
	notes := []string{
		"Bars: ±1 standard error over cells. Gap to the best L: from each L's chain of highest training log-likelihood, its standard error paired over cells;",
		"grey: the tolerance the recommendation allows each L (its standard error, or 5% of the gain across L if larger).",
		"Stability: the numbers are the programs every chain found (matched at Jaccard ≥ 0.5) / the programs of chain 1; dotted: the agreement convergence asks for.",
	}
	if fig.Recommended > 0 {
		notes = append(notes, fmt.Sprintf("Dashed: the recommended L = %d, the smallest whose gap to the best L is within its tolerance.", fig.Recommended))
	}
	for i, note := range notes {
		fmt.Fprintf(b, `<text x="%d" y="%d" fill="#444">%s</text>`+"\n", 20, rowTop1+panelHeight+62+16*i, escape(note))
	}
	b.WriteString("</svg>\n")
}

// renderTolerance draws, in the gap panel, the tolerance of each L as a
// grey line through it, and the zero line: an L whose gap lies under the
// grey line is within the rule's tolerance of the best.
func renderTolerance(b *bytes.Buffer, px, py func(float64) float64, pts []SelectionPoint, first func(SelectionPoint) bool) {
	var seg []string
	for _, p := range pts {
		if first(p) && !math.IsNaN(p.LogPredTolerance) && !math.IsInf(p.LogPredTolerance, 0) {
			seg = append(seg, fmt.Sprintf("%.1f,%.1f", px(float64(p.L)), py(p.LogPredTolerance)))
		}
	}
	if len(seg) > 1 {
		fmt.Fprintf(b, `<polyline fill="none" stroke="#999" stroke-width="3" stroke-opacity="0.6" points="%s"/>`+"\n", strings.Join(seg, " "))
	}
}

// renderStability adds to the stability panel the agreement that
// convergence asks for (a dotted line) and, above each L, the number of
// stable programs of the programs chain 1 found.
func renderStability(b *bytes.Buffer, px, py func(float64) float64, pts []SelectionPoint, first func(SelectionPoint) bool, minAgreement float64, top float64) {
	if minAgreement > 0 {
		y := py(minAgreement)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#777" stroke-dasharray="2 3"/>`+"\n", px(math.Inf(-1)), y, px(math.Inf(1)), y)
	}
	for _, p := range pts {
		if !first(p) || p.StablePrograms < 0 || p.Programs < 0 {
			continue
		}
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="10" fill="#444">%d/%d</text>`+"\n",
			px(float64(p.L)), top-4, p.StablePrograms, p.Programs)
	}
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

func renderPanel(b *bytes.Buffer, pn selectionPanel, xs, ys axis, pts []SelectionPoint, chains []int, recommended int, data bool) {
	left, top, bottom := pn.left, pn.top, pn.top+panelHeight
	right := left + panelWidth
	// px clamps to the plot area, so that ±Inf give its edges.
	px := func(v float64) float64 { return left + min(max(xs.frac(v), 0), 1)*panelWidth }
	py := func(v float64) float64 { return bottom - ys.frac(v)*panelHeight }

	fmt.Fprintf(b, "<g>\n")
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="14" font-weight="bold">%s</text>`+"\n", left+panelWidth/2, top-22, escape(pn.title))
	for _, t := range ys.ticks {
		y := py(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/>`+"\n", left, y, right, y)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", left-5, y, left, y)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", left-8, y, ys.label(t))
	}
	for _, t := range xs.ticks {
		x := px(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", x, bottom, x, bottom+5)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x, bottom+19, xs.label(t))
	}
	if recommended > 0 {
		x := px(float64(recommended))
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333" stroke-width="1.5" stroke-dasharray="6 4"/>`+"\n", x, top, x, bottom)
	}
	if data && pn.extra != nil {
		pn.extra(b, px, py)
	}
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%d" height="%d" fill="none" stroke="black"/>`+"\n", left, top, panelWidth, panelHeight)
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">L (number of codes)</text>`+"\n", left+panelWidth/2, bottom+40)
	cy := top + panelHeight/2
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" transform="rotate(-90 %.1f %.1f)">%s</text>`+"\n", left-62, cy, left-62, cy, escape(pn.ylabel))

	drawn := false
	for i, c := range chains {
		if pn.skipFirst && i == 0 || pn.firstOnly && i > 0 {
			continue
		}
		color := chainColors[i%len(chainColors)]
		style := lineStyle(i)
		off := dodge * (float64(i) - float64(len(chains)-1)/2)
		if pn.firstOnly {
			color, style, off = "#000000", `stroke="#000000" stroke-width="2"`, 0
		}
		var seg [][2]float64
		flush := func() {
			if len(seg) > 1 {
				b.WriteString(`<polyline fill="none" ` + style + ` points="`)
				for j, q := range seg {
					if j > 0 {
						b.WriteByte(' ')
					}
					fmt.Fprintf(b, "%.1f,%.1f", q[0], q[1])
				}
				b.WriteString("\"/>\n")
			}
			for _, q := range seg {
				fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", q[0], q[1], color)
			}
			seg = seg[:0]
		}
		for _, p := range pts {
			if p.Chain != c {
				continue
			}
			v := pn.value(p)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				flush() // a gap in the line where a fit has no score
				continue
			}
			x := px(float64(p.L)) + off
			if se := pn.se(p); se > 0 && !math.IsInf(se, 0) {
				lo, hi := py(v-se), py(v+se)
				fmt.Fprintf(b, `<path d="M%.1f,%.1fV%.1fM%.1f,%.1fH%.1fM%.1f,%.1fH%.1f" stroke="%s" stroke-width="1.2" fill="none"/>`+"\n",
					x, lo, hi, x-2.5, lo, x+2.5, x-2.5, hi, x+2.5, color)
			}
			seg = append(seg, [2]float64{x, py(v)})
			drawn = true
		}
		flush()
	}
	if !drawn {
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#777">%s</text>`+"\n", left+panelWidth/2, cy, escape(pn.empty))
	}
	b.WriteString("</g>\n")
}

func escape(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
