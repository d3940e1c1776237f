package figure

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"scpipe/internal/rundir"
)

// SampleShares draws the programs of one fit per sample (the report's
// per-sample view): for each program a group of bars, one per sample in
// the samples' colours, each the share of that sample's cells that use the
// program; a program whose cells are SampleSpecificShare or more one
// sample's is labelled with a star ("sample-specific: biology or a batch
// effect?"). rows are samples.tsv's of one fit.
func SampleShares(rows []rundir.SampleUsage) ([]byte, error) {
	var samples []string
	codes := 0
	seen := map[string]bool{}
	specific := map[int]bool{}
	for _, r := range rows {
		if !seen[r.Sample] {
			seen[r.Sample] = true
			samples = append(samples, r.Sample)
		}
		codes = max(codes, r.Code)
		specific[r.Code] = specific[r.Code] || r.SampleSpecific
	}
	if codes == 0 || len(samples) == 0 {
		return nil, fmt.Errorf("figure: no programs or samples to draw")
	}
	share := make([][]float64, len(samples)) // [sample][code-1]
	index := map[string]int{}
	for s, name := range samples {
		share[s], index[name] = make([]float64, codes), s
	}
	for _, r := range rows {
		if v := r.Share; !math.IsNaN(v) {
			share[index[r.Sample]][r.Code-1] = v
		}
	}
	p := NewPlot("Programs per sample", "program (* sample-specific: biology or a batch effect?)", "share of the sample's cells using it")
	addGrid(p)
	group := vg.Points(math.Max(24, math.Min(60, 520/float64(codes))))
	width := group * 0.85 / vg.Length(len(samples))
	var legend []legendEntry
	for s := range samples {
		b, err := plotter.NewBarChart(plotter.Values(share[s]), width)
		if err != nil {
			return nil, err
		}
		c := sampleColor(s)
		b.Color, b.LineStyle.Width = c, 0
		b.Offset = width * (vg.Length(s) - vg.Length(len(samples)-1)/2)
		p.Add(b)
		legend = append(legend, legendEntry{label: samples[s], style: draw.LineStyle{Color: c, Width: vg.Points(6)}})
	}
	names := make([]string, codes)
	for k := range names {
		names[k] = strconv.Itoa(k + 1)
		if specific[k+1] {
			names[k] += "*"
		}
	}
	p.NominalX(names...)
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Tick.Marker = compactTicks{}
	w := vg.Points(160) + group*vg.Length(codes) + vg.Points(100)
	return Render(w, vg.Points(280), func(dc draw.Canvas) {
		p.Draw(withLegend(dc, vg.Points(100), legend))
	})
}

// sampleColor is the colour of the s-th sample (from 0): the chains'
// palette, then shades of grey.
func sampleColor(s int) color.Color {
	if s < len(chainColors) {
		return chainColors[s]
	}
	return color.Gray{Y: uint8(0x40 + 0x20*(s%6))}
}
