package enrich

import (
	"cmp"
	"math"
	"math/bits"
	"slices"

	"scpipe/internal/stats/codematch"
)

// flowMin is the least fraction of a program's genes that must lie in a
// program of the neighbouring L for the two to be linked: the finer
// program is mostly a part of the coarser one, or the coarser one mostly
// flows into the finer one. Half, so that a program is linked to at most
// one program of the other L on its own side of the fraction unless the
// programs there overlap.
const flowMin = 0.5

// Event says how a program relates to those of the previous L of the run.
type Event string

// The events of the hierarchy.
const (
	// EventRoot: a program of the smallest L.
	EventRoot Event = "root"
	// EventSplit: the program lies mostly inside its parent, and so does
	// at least one other program of its L.
	EventSplit Event = "split"
	// EventMerge: two or more programs of the previous L lie mostly inside
	// the program.
	EventMerge Event = "merge"
	// EventNew: the program is linked to no program of the previous L.
	EventNew Event = "new"
	// EventContinues: linked to the previous L, but neither split nor
	// merged (a program that carries on, grows or shrinks).
	EventContinues Event = "continues"
)

// Node is one program in the hierarchy across L.
type Node struct {
	L, Code int
	Order   int // position among the programs of its L in the hierarchy's order
	Genes   int
	// Parent is, under HierarchyOverlap, the program of the previous L
	// holding the largest fraction of this program's genes
	// (codematch.Parents), when they are linked, and under
	// HierarchyFixedCodes the linked program with the most probable link;
	// Containment is the fraction of this program's genes in it and
	// Jaccard their Jaccard index. Parent is "" without a link.
	Parent               string
	Containment, Jaccard float64
	// Link is the posterior mean of the link to Parent under
	// HierarchyFixedCodes; NaN under HierarchyOverlap, or without a parent.
	Link              float64
	Parents, Children []string // every linked program of the previous and next L
	Event             Event

	set codematch.Set // the program's genes
}

// Name is the node's program name.
func (n *Node) Name() string { return programName(n.L, n.Code) }

// Edge links a program of one L to one of the next L of the run.
type Edge struct {
	From, To string // program names, From at the smaller L
	Shared   int    // genes in both
	// ToInFrom is the fraction of To's genes that are in From (1 when To
	// is a part of From), FromInTo the fraction of From's genes in To.
	ToInFrom, FromInTo, Jaccard float64
	// Link is the posterior mean of z (To is a part of From) in the
	// OrMachine of HierarchyFixedCodes; NaN under HierarchyOverlap.
	Link float64
}

// Hierarchy links the programs of neighbouring L of a run (the L enriched,
// which need not be consecutive integers).
type Hierarchy struct {
	Method HierarchyMethod // how the programs were linked
	Nodes  []Node          // by L, then Order
	Edges  []Edge          // by the order of From, then of To
	// GeneOrder lists every gene in some program, so that the genes of each
	// program of the smallest L come together, within them those of each
	// program of the next L, and so on: the order that shows the
	// hierarchy in a genes × codes heat map.
	GeneOrder []int
}

// BuildHierarchy links the programs of levels, which must be sorted by L,
// by their overlap (HierarchyOverlap).
func BuildHierarchy(levels []*Level, D int) *Hierarchy {
	h, _ := buildHierarchy(levels, D, func(coarse, fine []*Node) ([]Edge, error) { return link(coarse, fine), nil })
	h.Method = HierarchyOverlap
	return h
}

// linkFunc links the programs of two neighbouring L: it returns the edges
// and sets the fine programs' parents and events and the coarse ones'
// children.
type linkFunc func(coarse, fine []*Node) ([]Edge, error)

// buildHierarchy links the programs of levels, sorted by L, with linkL.
func buildHierarchy(levels []*Level, D int, linkL linkFunc) (*Hierarchy, error) {
	h := &Hierarchy{}
	var all, prev []*Node
	order := make([][]int, len(levels)) // order[i][code-1]: position of the program, -1 if none
	for i, lv := range levels {
		var nodes []*Node
		for _, p := range lv.Programs {
			if p.Status == StatusProgram {
				nodes = append(nodes, &Node{L: p.L, Code: p.Code, Genes: len(p.Genes),
					Containment: math.NaN(), Jaccard: math.NaN(), Link: math.NaN(), set: p.set(D)})
			}
		}
		if i == 0 {
			for _, n := range nodes {
				n.Event = EventRoot
			}
		} else {
			edges, err := linkL(prev, nodes)
			if err != nil {
				return nil, err
			}
			h.Edges = append(h.Edges, edges...)
		}
		sortLevel(nodes, prev)
		order[i] = make([]int, lv.L)
		for k := range order[i] {
			order[i][k] = -1
		}
		for j, n := range nodes {
			n.Order = j
			order[i][n.Code-1] = j
		}
		all = append(all, nodes...)
		prev = nodes
	}
	for _, n := range all { // copied once the next L has set their children
		h.Nodes = append(h.Nodes, *n)
	}
	pos := make(map[string]int, len(h.Nodes))
	for i, n := range h.Nodes {
		pos[n.Name()] = i
	}
	slices.SortStableFunc(h.Edges, func(a, b Edge) int {
		return cmp.Or(cmp.Compare(pos[a.From], pos[b.From]), cmp.Compare(pos[a.To], pos[b.To]))
	})
	h.GeneOrder = geneOrder(levels, order, D)
	return h, nil
}

// link records the edges between the programs of two neighbouring L and
// sets the fine programs' parents and events and the coarse ones' children.
func link(coarse, fine []*Node) []Edge {
	cs, fs := make([]codematch.Set, len(coarse)), make([]codematch.Set, len(fine))
	for i, c := range coarse {
		cs[i] = c.set
	}
	for j, f := range fine {
		fs[j] = f.set
	}
	var edges []Edge
	best, contained := codematch.Parents(cs, fs)
	sources := make([]int, len(fine))   // coarse programs mostly inside fine[j]
	parts := make([][]int, len(coarse)) // fine programs mostly inside coarse[i]
	for j, f := range fine {
		for i, c := range coarse {
			shared := interCount(c.set, f.set)
			toIn, fromIn := float64(shared)/float64(f.Genes), float64(shared)/float64(c.Genes)
			if shared == 0 || (toIn < flowMin && fromIn < flowMin) {
				continue
			}
			e := Edge{From: c.Name(), To: f.Name(), Shared: shared, ToInFrom: toIn, FromInTo: fromIn,
				Jaccard: float64(shared) / float64(c.Genes+f.Genes-shared), Link: math.NaN()}
			edges = append(edges, e)
			f.Parents = append(f.Parents, e.From)
			c.Children = append(c.Children, e.To)
			if best[j] == i {
				f.Parent, f.Containment, f.Jaccard = e.From, contained[j], e.Jaccard
			}
			if fromIn >= flowMin {
				sources[j]++
			}
			if toIn >= flowMin {
				parts[i] = append(parts[i], j)
			}
		}
	}
	for j, f := range fine {
		switch {
		case len(f.Parents) == 0:
			f.Event = EventNew
		case sources[j] >= 2:
			f.Event = EventMerge
		default:
			f.Event = EventContinues
		}
	}
	for i, js := range parts {
		if len(js) < 2 {
			continue
		}
		for _, j := range js {
			if best[j] == i && fine[j].Event == EventContinues {
				fine[j].Event = EventSplit
			}
		}
	}
	return edges
}

// sortLevel orders the programs of one L after their parents at the
// previous L: each under the earliest of its linked parents (the best
// parent first), the more contained first, new programs last, ties by code.
func sortLevel(nodes, prev []*Node) {
	at := make(map[string]int, len(prev))
	for _, p := range prev {
		at[p.Name()] = p.Order
	}
	key := func(n *Node) int {
		if n.Parent != "" {
			return at[n.Parent]
		}
		k := len(prev)
		for _, p := range n.Parents {
			k = min(k, at[p])
		}
		return k
	}
	slices.SortStableFunc(nodes, func(a, b *Node) int {
		ca, cb := a.Containment, b.Containment
		if math.IsNaN(ca) {
			ca = 0
		}
		if math.IsNaN(cb) {
			cb = 0
		}
		return cmp.Or(cmp.Compare(key(a), key(b)), cmp.Compare(cb, ca), cmp.Compare(a.Code, b.Code))
	})
}

// geneOrder sorts the genes of every program by, for each L from the
// smallest, the earliest position of a program holding the gene; genes in
// no program of an L sort after those in one, and ties go to gene index.
func geneOrder(levels []*Level, order [][]int, D int) []int {
	const none = math.MaxInt32
	key := make([][]int32, D)
	for i, lv := range levels {
		for _, p := range lv.Programs {
			pos := order[i][p.Code-1]
			if pos < 0 {
				continue
			}
			for _, g := range p.Genes {
				if key[g] == nil {
					key[g] = make([]int32, len(levels))
					for j := range key[g] {
						key[g][j] = none
					}
				}
				key[g][i] = min(key[g][i], int32(pos))
			}
		}
	}
	var genes []int
	for g := range D {
		if key[g] != nil {
			genes = append(genes, g)
		}
	}
	slices.SortStableFunc(genes, func(a, b int) int { return slices.Compare(key[a], key[b]) })
	return genes
}

// interCount returns |a∩b|.
func interCount(a, b codematch.Set) int {
	n := 0
	for i := range min(len(a), len(b)) {
		n += bits.OnesCount64(a[i] & b[i])
	}
	return n
}
