package figure

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The hierarchy diagram is drawn as SVG text rather than with gonum:
// gonum's Sankey diagram stacks its stocks without gaps, sizes them by
// their flows rather than by the programs' genes, cannot show a program
// without links and writes its labels inside the bars, and its canvas
// cannot give a bar or ribbon a tooltip (an SVG title).

// HierarchyNode is one program of the hierarchy diagram.
type HierarchyNode struct {
	Name   string // its key, which Parent and the edges name
	L      int    // its column
	Code   int
	Genes  int    // its bar's height
	Event  string // what its label adds after its genes ("split", "new"); "" for nothing
	Parent string // "" for a root: each lineage has a colour of its own
	// Term is the term that labels it, "" for none, and AdjP its adjusted
	// p; without a term, the label is Top, its leading genes.
	Term, AdjP string
	Top        []string
	Title      string // its tooltip
}

// HierarchyEdge is the ribbon of Shared genes from the program From of one
// L to the program To of the next.
type HierarchyEdge struct {
	From, To string
	Shared   int
	Title    string // its tooltip
}

// Geometry of the hierarchy diagram, in SVG user units (pixels).
const (
	hierColumn   = 250  // from one L's column of nodes to the next, at most
	hierMinCol   = 120  // and at least: narrower, the figure scrolls
	hierPageW    = 1230 // the page's width for figures: columns narrow to fit it
	hierLastText = 150  // room for the labels right of the last column
	hierNode     = 12   // width of a node's bar
	hierTop      = 44   // top of the first node
	hierLeft     = 16
	hierGenesPx  = 420 // the tallest column's genes take this many pixels, gaps aside
	hierMinSlot  = 32  // a node and its two lines of label need this much height
	hierGap      = 10  // between the slots of a column
	hierCharPx   = 5.5 // a character of a label, about, at 11 px
)

// lineageColors colour a program like its root: Okabe–Ito without black,
// then Paul Tol's muted colours.
var lineageColors = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442",
	"#332288", "#88CCEE", "#117733", "#999933", "#882255", "#AA4499", "#44AA99", "#DDCC77"}

// Hierarchy draws the programs of every L as bars (columns by L, each
// column's nodes top to bottom in the order given, height by genes) and
// the edges as ribbons (width by shared genes), each program coloured by
// the program of the smallest L it descends from, a parent before its
// children. It reports whether the figure is wider than a page, which
// then scrolls rather than shrinks it.
func Hierarchy(nodes []HierarchyNode, edges []HierarchyEdge) (svg []byte, wide bool) {
	var Ls []int
	byL := map[int][]*HierarchyNode{}
	for i := range nodes {
		n := &nodes[i]
		if len(byL[n.L]) == 0 {
			Ls = append(Ls, n.L)
		}
		byL[n.L] = append(byL[n.L], n)
	}
	slices.Sort(Ls)
	maxGenes := 1
	for _, L := range Ls {
		total := 0
		for _, n := range byL[L] {
			total += n.Genes
		}
		maxGenes = max(maxGenes, total)
	}
	scale := float64(hierGenesPx) / float64(maxGenes)
	// Columns as wide as the page allows, so that L = 2..10 fit a screen,
	// and labels cut to the column.
	col := hierColumn
	if len(Ls) > 1 {
		col = min(hierColumn, max(hierMinCol, (hierPageW-hierLeft-hierNode-hierLastText)/(len(Ls)-1)))
	}
	labelPx := float64(col - hierNode - 10)

	type place struct {
		x, y, h float64
		color   string
		out, in float64 // pixels of the bar's right and left sides taken by ribbons so far
	}
	at := map[string]*place{}
	height := float64(hierTop)
	next := 0
	for c, L := range Ls {
		y := float64(hierTop)
		for _, n := range byL[L] {
			p := &place{x: float64(hierLeft + c*col), y: y, h: max(3, float64(n.Genes)*scale)}
			if parent, ok := at[n.Parent]; ok && n.Parent != "" {
				p.color = parent.color
			} else {
				p.color = lineageColors[next%len(lineageColors)]
				next++
			}
			at[n.Name] = p
			y += max(p.h, hierMinSlot) + hierGap
		}
		height = max(height, y)
	}
	width := hierLeft + (len(Ls)-1)*col + hierNode + hierLastText
	height += 10

	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%.0f" viewBox="0 0 %d %.0f" font-family="'Liberation Sans',Arial,Helvetica,sans-serif" font-size="11">`+"\n",
		width, height, width, height)
	b.WriteString("<title>Programs across L</title>\n")
	fmt.Fprintf(&b, `<rect width="%d" height="%.0f" fill="white"/>`+"\n", width, height)
	for c, L := range Ls {
		fmt.Fprintf(&b, `<text x="%d" y="24" font-size="13" font-weight="bold">L = %d</text>`+"\n", hierLeft+c*col, L)
	}

	// Ribbons first, under the bars. Each edge takes its share of both
	// bars' sides, in the order given, squeezed where a bar's links
	// together hold more genes than the bar (children may overlap).
	outTotal, inTotal := map[string]float64{}, map[string]float64{}
	for _, e := range edges {
		outTotal[e.From] += float64(e.Shared) * scale
		inTotal[e.To] += float64(e.Shared) * scale
	}
	for _, e := range edges {
		from, to := at[e.From], at[e.To]
		if from == nil || to == nil {
			continue
		}
		ws := float64(e.Shared) * scale * min(1, from.h/outTotal[e.From])
		wt := float64(e.Shared) * scale * min(1, to.h/inTotal[e.To])
		x1, x2 := from.x+hierNode, to.x
		ys, yt := from.y+from.out, to.y+to.in
		from.out += ws
		to.in += wt
		xm := (x1 + x2) / 2
		fmt.Fprintf(&b, `<path d="M%.1f,%.1fC%.1f,%.1f %.1f,%.1f %.1f,%.1fL%.1f,%.1fC%.1f,%.1f %.1f,%.1f %.1f,%.1fZ" fill="%s" fill-opacity="0.35">`,
			x1, ys, xm, ys, xm, yt, x2, yt, x2, yt+wt, xm, yt+wt, xm, ys+ws, x1, ys+ws, from.color)
		fmt.Fprintf(&b, "<title>%s</title></path>\n", xmlText(e.Title))
	}

	for _, L := range Ls {
		for _, n := range byL[L] {
			p := at[n.Name]
			what := fmt.Sprintf("code %d · %d genes", n.Code, n.Genes)
			if col < 200 {
				what = fmt.Sprintf("%d · %d genes", n.Code, n.Genes)
			}
			if n.Event != "" {
				what += " · " + n.Event
			}
			what = clipText(what, int(labelPx/hierCharPx))
			fmt.Fprintf(&b, `<g><title>%s</title>`, xmlText(n.Title))
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%d" height="%.1f" fill="%s"/>`, p.x, p.y, hierNode, p.h, p.color)
			tx := p.x + hierNode + 5
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" paint-order="stroke" stroke="white" stroke-width="3" stroke-linejoin="round">%s</text>`,
				tx, p.y+10, xmlText(what))
			if second := secondLabel(*n, labelPx); second != "" {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#444" font-style="italic" paint-order="stroke" stroke="white" stroke-width="3" stroke-linejoin="round">%s</text>`,
					tx, p.y+23, xmlText(second))
			}
			b.WriteString("</g>\n")
		}
	}
	b.WriteString("</svg>\n")
	return b.Bytes(), width > hierPageW
}

// secondLabel is a node's second line, at most px pixels wide: its term,
// and its adjusted p where the column has room for both (the title
// always holds both); without a term, the leading genes that fit whole.
func secondLabel(n HierarchyNode, px float64) string {
	if n.Term == "" {
		line := ""
		for _, g := range n.Top {
			next := g
			if line != "" {
				next = line + " " + g
			}
			if textWidth(next) > px {
				break
			}
			line = next
		}
		return line
	}
	chars := int(px / hierCharPx)
	term := termID.ReplaceAllString(n.Term, "")
	if with := term + " · " + n.AdjP; utf8.RuneCountInString(with) <= chars {
		return with
	}
	return clipText(term, chars)
}

// textWidth estimates the width in pixels of s in the diagram's italic
// 11 px sans-serif: gene symbols are mostly capitals and digits, far
// wider than the average character that hierCharPx stands for.
func textWidth(s string) float64 {
	w := 0.0
	for _, r := range s {
		switch {
		case unicode.IsUpper(r) || unicode.IsDigit(r):
			w += 7.4
		case r == ' ':
			w += 3.1
		default:
			w += 6 // lower case, italic
		}
	}
	return w
}

// termID is the identifier Enrichr's and MSigDB's GO libraries end a
// term's name with, " (GO:0002181)": the label leaves it to the title.
var termID = regexp.MustCompile(`\s*\([A-Za-z]+:[0-9]+\)$`)

// clipText shortens s to at most n characters, ending in an ellipsis.
func clipText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// xmlText escapes s for an SVG's text and titles: markup escaped, and
// every character XML 1.0 does not allow (C0 controls but tab and line
// breaks, U+FFFE, U+FFFF, invalid UTF-8) replaced by U+FFFD. A control
// character in a gene symbol or a library's term once made the figure
// ill-formed XML, which expat refused and browsers showed as an error.
func xmlText(s string) string {
	return html.EscapeString(strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r < 0xfffe && (r < 0xd800 || r > 0xdfff) || r > 0xffff && r <= 0x10ffff {
			return r
		}
		return utf8.RuneError
	}, strings.ToValidUTF8(s, "\uFFFD")))
}
