package report

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"scpipe/enrich"
)

// The hierarchy diagram is drawn by hand: gonum's Sankey diagram stacks
// its stocks without gaps, sizes them by their flows rather than by the
// programs' genes, cannot show a program without links, and writes its
// labels inside the bars.

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

// hierarchyLinks says, for the caption, when two programs are joined.
var hierarchyLinks = map[enrich.HierarchyMethod]string{
	enrich.HierarchyOverlap: "where at least half of one's genes lie in the other",
	enrich.HierarchyFixedCodes: "where an OrMachine with the programs of the smaller L as data and those of the larger as fixed codes " +
		"says, with posterior mean at least ½, that the finer program is a part of the coarser",
}

// hierNodeInfo is what the diagram says of one program besides its place.
type hierNodeInfo struct {
	Cells     int
	Stability float64
	// Term is the term that labels it, "" for none; Query says of which
	// genes ("unique" or "all") and AdjP is its adjusted p.
	Term, Query, AdjP string
	// Top holds the symbols of its leading genes by score: the label
	// where no term is given, so that the diagram names biology without
	// an enrichment too.
	Top []string
}

// hierTopGenes is how many of a program's leading genes its node's title
// names; the label shows as many as its column has room for.
const hierTopGenes = 5

// hierarchyFigure draws the programs of every L as bars (columns by L,
// top to bottom in the hierarchy's order, height by genes) and the gene
// sets they share with the next L as ribbons (width by shared genes),
// each program coloured by the program of the smallest L it descends from.
func hierarchyFigure(h *enrich.Hierarchy, info map[string]hierNodeInfo) *pageFigure {
	var Ls []int
	byL := map[int][]*enrich.Node{}
	for i := range h.Nodes {
		n := &h.Nodes[i]
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
	labelMax := int(float64(col-hierNode-10) / hierCharPx)

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
		for _, n := range byL[L] { // nodes of an L come in the hierarchy's order
			p := &place{x: float64(hierLeft + c*col), y: y, h: max(3, float64(n.Genes)*scale)}
			if parent, ok := at[n.Parent]; ok && n.Parent != "" {
				p.color = parent.color
			} else {
				p.color = lineageColors[next%len(lineageColors)]
				next++
			}
			at[n.Name()] = p
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
	// bars' sides, in the order of the other end, squeezed where a bar's
	// links together hold more genes than the bar (children may overlap).
	outTotal, inTotal := map[string]float64{}, map[string]float64{}
	for _, e := range h.Edges {
		outTotal[e.From] += float64(e.Shared) * scale
		inTotal[e.To] += float64(e.Shared) * scale
	}
	edges := slices.Clone(h.Edges) // by the order of From, then of To: the source side stacks in order
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
		title := fmt.Sprintf("%s → %s: %d genes shared (%s of %s, %s of %s)",
			e.From, e.To, e.Shared, percent(e.ToInFrom), e.To, percent(e.FromInTo), e.From)
		if !math.IsNaN(e.Link) {
			title += fmt.Sprintf("; posterior mean of the link %.2f", e.Link)
		}
		fmt.Fprintf(&b, "<title>%s</title></path>\n", esc(title))
	}

	for _, L := range Ls {
		for _, n := range byL[L] {
			p := at[n.Name()]
			in := info[n.Name()]
			what := fmt.Sprintf("code %d · %d genes", n.Code, n.Genes)
			if col < 200 {
				what = fmt.Sprintf("%d · %d genes", n.Code, n.Genes)
			}
			if n.Event != enrich.EventRoot && n.Event != enrich.EventContinues {
				what += " · " + string(n.Event)
			}
			what = clipText(what, labelMax)
			title := fmt.Sprintf("%s: %d genes, %s cells, stability %s, %s", n.Name(), n.Genes, thousands(in.Cells),
				stability(in.Stability), string(n.Event))
			if n.Parent != "" {
				title += " (parent " + n.Parent + ")"
			}
			if len(in.Top) > 0 {
				title += "; top genes " + strings.Join(in.Top, ", ")
			}
			if in.Term != "" {
				title += fmt.Sprintf("; top term of its %s genes: %s (adjusted p %s)", in.Query, in.Term, in.AdjP)
			}
			fmt.Fprintf(&b, `<g><title>%s</title>`, esc(title))
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%d" height="%.1f" fill="%s"/>`, p.x, p.y, hierNode, p.h, p.color)
			tx := p.x + hierNode + 5
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" paint-order="stroke" stroke="white" stroke-width="3" stroke-linejoin="round">%s</text>`,
				tx, p.y+10, esc(what))
			if second := secondLabel(in, float64(col-hierNode-10)); second != "" {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#444" font-style="italic" paint-order="stroke" stroke="white" stroke-width="3" stroke-linejoin="round">%s</text>`,
					tx, p.y+23, esc(second))
			}
			b.WriteString("</g>\n")
		}
	}
	b.WriteString("</svg>\n")
	return &pageFigure{ID: "hierarchy", Title: "Programs across L", SVG: b.Bytes(), Wide: width > hierPageW}
}

// secondLabel is a node's second line, at most px pixels wide: its term,
// and its adjusted p where the column has room for both (the title
// always holds both); without a term, the leading genes that fit whole.
func secondLabel(in hierNodeInfo, px float64) string {
	if in.Term == "" {
		line := ""
		for _, g := range in.Top {
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
	term := termID.ReplaceAllString(in.Term, "")
	if with := term + " · " + in.AdjP; utf8.RuneCountInString(with) <= chars {
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

// esc escapes text for SVG (XML) content and attributes.
func esc(s string) string { return html.EscapeString(s) }

// clipText shortens s to at most n characters, ending in an ellipsis.
func clipText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
