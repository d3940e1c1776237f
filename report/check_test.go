package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io"
	"strings"

	"golang.org/x/net/html"
)

// voidElements have no end tag in HTML.
var voidElements = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true,
	"img": true, "input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true}

// forbiddenElements run code or load something from elsewhere.
var forbiddenElements = map[string]bool{"script": true, "link": true, "iframe": true, "object": true, "embed": true,
	"base": true, "frame": true, "frameset": true, "applet": true, "audio": true, "video": true, "source": true, "foreignobject": true}

// urlAttributes are the attributes whose value a browser fetches or follows.
var urlAttributes = map[string]bool{"src": true, "href": true, "xlink:href": true, "action": true, "formaction": true,
	"poster": true, "srcset": true, "data": true, "background": true, "longdesc": true, "cite": true, "manifest": true}

// checkPage checks that page is one well-formed, self-contained HTML
// document: every element closed in order (a strict reading that
// x/net/html's forgiving parser would not give), no element that runs a
// script or loads a resource, no event handler, every URL attribute a
// fragment (#…) or data: URI, and no address in any attribute or style
// sheet. It returns the ids of the <figure> elements that hold an <svg>
// with something drawn in it.
func checkPage(page []byte) (figures []string, err error) {
	z := html.NewTokenizer(bytes.NewReader(page))
	var stack []string
	figure, svgDrawn := "", false
	doctype := false
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if z.Err() != io.EOF {
				return nil, z.Err()
			}
			if len(stack) > 0 {
				return nil, fmt.Errorf("unclosed elements at the end: %v", stack)
			}
			if !doctype {
				return nil, errors.New("no <!DOCTYPE html>")
			}
			return figures, nil
		case html.DoctypeToken:
			doctype = strings.EqualFold(string(z.Text()), "html")
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			tag := string(name)
			if forbiddenElements[tag] {
				return nil, fmt.Errorf("element <%s>", tag)
			}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				if err := checkAttr(tag, string(k), string(v)); err != nil {
					return nil, err
				}
				if tag == "figure" && string(k) == "id" {
					figure, svgDrawn = string(v), false
				}
			}
			if figure != "" && slicesContains(stack, "svg") && (tag == "path" || tag == "image" || tag == "rect" || tag == "text") {
				svgDrawn = true
			}
			if tt == html.StartTagToken && !voidElements[tag] {
				stack = append(stack, tag)
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			tag := string(name)
			if len(stack) == 0 || stack[len(stack)-1] != tag {
				return nil, fmt.Errorf("</%s> closes %v", tag, stack)
			}
			stack = stack[:len(stack)-1]
			if tag == "figure" {
				if svgDrawn {
					figures = append(figures, figure)
				}
				figure = ""
			}
		case html.TextToken:
			if len(stack) > 0 && stack[len(stack)-1] == "style" {
				css := strings.ToLower(string(z.Text()))
				if strings.Contains(css, "@import") || strings.Contains(css, "url(") || hasAddress(css) {
					return nil, fmt.Errorf("style sheet loads something: %.80q", css)
				}
			}
		}
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func checkAttr(tag, k, v string) error {
	lv := strings.ToLower(strings.TrimSpace(v))
	switch {
	case strings.HasPrefix(k, "on"):
		return fmt.Errorf("<%s %s=…>: an event handler", tag, k)
	case urlAttributes[k] && !strings.HasPrefix(lv, "#") && !strings.HasPrefix(lv, "data:"):
		return fmt.Errorf("<%s %s=%.60q>: refers to something outside the page", tag, k, v)
	case strings.HasPrefix(lv, "data:"):
		return nil // base64 may hold "//"
	case hasAddress(lv), strings.Contains(lv, "url(") && !strings.Contains(lv, "url(#"):
		return fmt.Errorf("<%s %s=%.60q>: names an address", tag, k, v)
	case tag == "meta" && k == "http-equiv":
		return fmt.Errorf("<meta http-equiv=%q>", v)
	}
	return nil
}

// hasAddress reports whether s names a network or file address.
func hasAddress(s string) bool {
	return strings.Contains(s, "http:") || strings.Contains(s, "https:") || strings.Contains(s, "//") ||
		strings.Contains(s, "file:") || strings.Contains(s, "ftp:")
}

// checkSVGFile checks that a standalone figure is well-formed XML whose
// root is <svg> in the SVG namespace.
func checkSVGFile(data []byte) error {
	d := xml.NewDecoder(bytes.NewReader(data))
	root := ""
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Space + " " + se.Name.Local
		}
	}
	if root != "http://www.w3.org/2000/svg svg" {
		return fmt.Errorf("root element %q, want svg in the SVG namespace", root)
	}
	return nil
}

// checkNotBlank fails on a screenshot of a blank page: one whose pixels are
// nearly all one colour. A rendered report is mostly white, so it asks that
// at least 1% of the pixels differ from the most common colour and that
// some are dark (text) and some coloured (figures).
func checkNotBlank(img image.Image) error {
	b := img.Bounds()
	if b.Empty() {
		return errors.New("empty image")
	}
	counts := map[color.RGBA]int{}
	dark, colored := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			c := color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), 0xff}
			counts[c]++
			if int(c.R)+int(c.G)+int(c.B) < 150 {
				dark++
			}
			if max(c.R, c.G, c.B)-min(c.R, c.G, c.B) > 60 {
				colored++
			}
		}
	}
	top := 0
	for _, n := range counts {
		top = max(top, n)
	}
	total := b.Dx() * b.Dy()
	switch {
	case total-top < total/100:
		return fmt.Errorf("%.2f%% of the pixels are one colour: a blank page", 100*float64(top)/float64(total))
	case dark < total/1000:
		return fmt.Errorf("%d dark pixels: no text", dark)
	case colored < total/1000:
		return fmt.Errorf("%d coloured pixels: no figure", colored)
	}
	return nil
}
