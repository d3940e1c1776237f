package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// figure is one figure of the report: drawn once as a standalone SVG file
// and inlined in the page.
type figure struct {
	ID      string // the element id in the page and the file's name without .svg
	Title   string
	Caption string
	SVG     []byte // standalone SVG 1.1
	Wide    bool   // wider than the page: scrolls rather than shrinks
}

// Class is the figure's class in the page: wide figures scroll, and the
// heat maps of an L share a row.
func (f *figure) Class() string {
	switch {
	case f.Wide:
		return "wide"
	case strings.HasSuffix(f.ID, "_genes"):
		return "genes"
	case strings.HasSuffix(f.ID, "_cells"):
		return "cells"
	}
	return ""
}

// File is the figure's file name.
func (f *figure) File() string { return f.ID + ".svg" }

// renderSVG draws with paint on an SVG canvas of w × h points and returns
// the standalone file.
func renderSVG(w, h vg.Length, paint func(dc draw.Canvas)) ([]byte, error) {
	c := vgsvg.New(w, h)
	paint(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("report: render SVG: %w", err)
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

var (
	xmlHeader = regexp.MustCompile(`^(?s)\s*(<\?xml[^>]*\?>\s*)?(<!--.*?-->\s*)*`)
	xmlnsAttr = regexp.MustCompile(`\s+xmlns(:xlink)?="[^"]*"`)
)

// inline turns a standalone SVG file into an element for the page: in HTML
// the parser puts <svg> in the SVG namespace itself, so the XML
// declaration and the namespace declarations go (the page then names no
// address at all), and xlink:href becomes SVG 2's plain href.
func inline(svg []byte) []byte {
	svg = xmlHeader.ReplaceAll(svg, nil)
	if i := bytes.Index(svg, []byte(">")); i >= 0 {
		tag := xmlnsAttr.ReplaceAll(svg[:i], nil)
		svg = append(tag, svg[i:]...)
	}
	return bytes.ReplaceAll(svg, []byte("xlink:href="), []byte("href="))
}
