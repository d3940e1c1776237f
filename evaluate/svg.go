package evaluate

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
)

// Geometry of the figures, in SVG user units (pixels): a square plot of
// [0, 1]² with the legend to its right.
const (
	plotLeft, plotTop = 70, 50
	plotSize          = 400
	legendLeft        = plotLeft + plotSize + 30
	figWidth          = legendLeft + 290
	figHeight         = plotTop + plotSize + 60
)

// palette is the Okabe–Ito palette, readable by colour-blind readers; after
// it is used up the lines repeat it dashed.
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"}

func style(i int) string {
	s := fmt.Sprintf(`stroke="%s" stroke-width="2"`, palette[i%len(palette)])
	if i >= len(palette) {
		s += ` stroke-dasharray="6 3"`
	}
	return s
}

func px(v float64) float64 { return plotLeft + v*plotSize }
func py(v float64) float64 { return plotTop + (1-v)*plotSize }

// frame draws the title, the unit square with ticks every 0.2, the axis
// labels and the dashed diagonal.
func frame(b *bufio.Writer, title, xlabel, ylabel string) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n",
		figWidth, figHeight, figWidth, figHeight)
	fmt.Fprintf(b, "<title>%s</title>\n", escape(title))
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="white"/>`+"\n", figWidth, figHeight)
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" font-size="14" font-weight="bold">%s</text>`+"\n", plotLeft+plotSize/2, plotTop-18, escape(title))
	for i := 0; i <= 5; i++ {
		v := float64(i) / 5
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e5e5e5"/>`+"\n", px(v), plotTop, px(v), plotTop+plotSize)
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e5e5"/>`+"\n", plotLeft, py(v), plotLeft+plotSize, py(v))
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%.1f</text>`+"\n", px(v), plotTop+plotSize+18, v)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%.1f</text>`+"\n", plotLeft-8, py(v), v)
	}
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999" stroke-dasharray="4 4"/>`+"\n", px(0), py(0), px(1), py(1))
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>`+"\n", plotLeft, plotTop, plotSize, plotSize)
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", plotLeft+plotSize/2, plotTop+plotSize+40, escape(xlabel))
	cy := plotTop + plotSize/2
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" transform="rotate(-90 %d %d)">%s</text>`+"\n", plotLeft-45, cy, plotLeft-45, cy, escape(ylabel))
}

func legend(b *bufio.Writer, i int, text string) {
	y := plotTop + 10 + 20*i
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" %s/>`+"\n", legendLeft, y, legendLeft+26, y, style(i))
	fmt.Fprintf(b, `<text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n", legendLeft+34, y, escape(text))
}

// polyline draws the points (in data units), leaving out points less than
// half a pixel from the last one drawn: an ROC curve of 65 536 bins keeps
// its shape in a few hundred points.
func polyline(b *bufio.Writer, i int, xs, ys []float64) {
	b.WriteString(`<polyline fill="none" ` + style(i) + ` points="`)
	lx, ly := math.Inf(1), math.Inf(1)
	for j := range xs {
		x, y := px(xs[j]), py(ys[j])
		if j != 0 && j != len(xs)-1 && math.Hypot(x-lx, y-ly) < 0.5 {
			continue
		}
		if j > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(b, "%.1f,%.1f", x, y)
		lx, ly = x, y
	}
	b.WriteString("\"/>\n")
}

// WriteROCSVG draws the ROC curve of every series, its AUC in the legend.
func WriteROCSVG(w io.Writer, title string, ss []Series) error {
	b := bufio.NewWriter(w)
	frame(b, title, "false-positive rate", "true-positive rate")
	drawn := 0
	for _, s := range ss {
		roc := s.Tally.ROC()
		if roc == nil {
			continue
		}
		xs, ys := make([]float64, len(roc)), make([]float64, len(roc))
		for j, p := range roc {
			xs[j], ys[j] = p.FPR, p.TPR
		}
		polyline(b, drawn, xs, ys)
		legend(b, drawn, fmt.Sprintf("%s (AUC %.3f)", s.Name, s.Tally.Scores().AUC))
		drawn++
	}
	if drawn == 0 {
		noData(b)
	}
	b.WriteString("</svg>\n")
	return b.Flush()
}

// WriteCalibrationSVG draws the calibration curve of every series: observed
// frequency against mean predicted probability per bin, with the bins' 95%
// Wilson intervals; a calibrated predictor follows the diagonal.
func WriteCalibrationSVG(w io.Writer, title string, ss []Series) error {
	b := bufio.NewWriter(w)
	frame(b, title, "predicted probability (mean in bin)", "observed frequency")
	drawn := 0
	for _, s := range ss {
		var xs, ys []float64
		for _, c := range s.Tally.Calibration() {
			if c.N == 0 {
				continue
			}
			xs, ys = append(xs, c.MeanPredicted), append(ys, c.Observed)
			fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>`+"\n",
				px(c.MeanPredicted), py(c.ObservedLow), px(c.MeanPredicted), py(c.ObservedHigh), palette[drawn%len(palette)])
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", px(c.MeanPredicted), py(c.Observed), palette[drawn%len(palette)])
		}
		if len(xs) == 0 {
			continue
		}
		polyline(b, drawn, xs, ys)
		legend(b, drawn, s.Name)
		drawn++
	}
	if drawn == 0 {
		noData(b)
	}
	b.WriteString("</svg>\n")
	return b.Flush()
}

func noData(b *bufio.Writer) {
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" fill="#777">no predictions of both outcomes</text>`+"\n", plotLeft+plotSize/2, plotTop+plotSize/2)
}

func escape(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
