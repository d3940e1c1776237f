package report

import (
	"bytes"
	"regexp"
	"strings"
)

// pageFigure is one figure of the report: drawn once as a standalone SVG file
// and inlined in the page.
type pageFigure struct {
	ID      string // the element id in the page and the file's name without .svg
	Title   string
	Caption string
	SVG     []byte // standalone SVG 1.1
	Wide    bool   // wider than the page: scrolls rather than shrinks
}

// Class is the figure's class in the page: wide figures scroll, and the
// heat maps of an L share a row.
func (f *pageFigure) Class() string {
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
func (f *pageFigure) File() string { return f.ID + ".svg" }

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
