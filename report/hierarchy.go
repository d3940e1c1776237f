package report

import (
	"fmt"
	"math"
	"strings"

	"scpipe/enrich"
	"scpipe/internal/figure"
)

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

// hierarchyFigure draws the hierarchy h (figure.Hierarchy), each program
// described by info.
func hierarchyFigure(h *enrich.Hierarchy, info map[string]hierNodeInfo) *pageFigure {
	nodes := make([]figure.HierarchyNode, len(h.Nodes))
	for i, n := range h.Nodes {
		in := info[n.Name()]
		event := string(n.Event)
		if n.Event == enrich.EventRoot || n.Event == enrich.EventContinues {
			event = ""
		}
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
		nodes[i] = figure.HierarchyNode{Name: n.Name(), L: n.L, Code: n.Code, Genes: n.Genes, Event: event, Parent: n.Parent,
			Term: in.Term, AdjP: in.AdjP, Top: in.Top, Title: title}
	}
	edges := make([]figure.HierarchyEdge, len(h.Edges))
	for i, e := range h.Edges {
		title := fmt.Sprintf("%s → %s: %d genes shared (%s of %s, %s of %s)",
			e.From, e.To, e.Shared, percent(e.ToInFrom), e.To, percent(e.FromInTo), e.From)
		if !math.IsNaN(e.Link) {
			title += fmt.Sprintf("; posterior mean of the link %.2f", e.Link)
		}
		edges[i] = figure.HierarchyEdge{From: e.From, To: e.To, Shared: e.Shared, Title: title}
	}
	svg, wide := figure.Hierarchy(nodes, edges)
	return &pageFigure{ID: "hierarchy", Title: "Programs across L", SVG: svg, Wide: wide}
}
