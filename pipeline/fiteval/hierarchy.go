package fiteval

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"

	"scpipe/enrich"
	"scpipe/internal/figure/imagegrid"
	"scpipe/internal/rundir"
)

// hierarchyImagesFile is the base name under evalImagesDir of the
// hierarchy of image codes that scpipe evaluate --images draws for a run of
// two or more L (.png and .svg).
const hierarchyImagesFile = "hierarchy"

// hierarchyImages adds to figures, for fits of two or more L, the programs
// of every L drawn as images, one row per L in the hierarchy's order, with
// an arrow from each program to each of the next L that the hierarchy by
// fixed codes (o.Linker; by overlap without one) makes a part of it (the
// paper's Fig. calc_hier). The programs are scpipe enrich's: consensus
// over chains, genes at posterior mean ½ or more, each drawn with its
// posterior mean.
func hierarchyImages(ctx context.Context, o Options, fits []rundir.Fit, figures map[string]func(io.Writer) error) error {
	var Ls []int
	for _, f := range fits {
		if !slices.Contains(Ls, f.L) {
			Ls = append(Ls, f.L)
		}
	}
	if len(Ls) < 2 {
		return nil
	}
	eo := enrich.DefaultOptions()
	eo.Run, eo.Ls, eo.Log = o.Run, Ls, o.Log
	eo.Hierarchy, eo.Linker = enrich.HierarchyOverlap, o.Linker
	if o.Linker != nil {
		eo.Hierarchy = enrich.HierarchyFixedCodes
	}
	rep, err := enrich.Analyse(ctx, eo)
	if err != nil {
		return fmt.Errorf("evaluate: --images: %w", err)
	}
	fig, err := hierarchyFigure(rep)
	if err != nil {
		return fmt.Errorf("evaluate: --images: %s: %w", o.Run, err)
	}
	base := filepath.Join(evalImagesDir, hierarchyImagesFile)
	figures[base+".png"], figures[base+".svg"] = fig.WritePNG, fig.WriteSVG
	return nil
}

// hierarchyFigure draws rep's programs and hierarchy.
func hierarchyFigure(rep *enrich.Report) (*imagegrid.Figure, error) {
	lay, err := imagegrid.Layout(rep.Genes.Names)
	if err != nil {
		return nil, err
	}
	programs := map[string]*enrich.Program{}
	for _, lv := range rep.Levels {
		for i := range lv.Programs {
			programs[lv.Programs[i].Name()] = &lv.Programs[i]
		}
	}
	fig := &imagegrid.Figure{Title: fmt.Sprintf("Programs across L and the links between them (%s)", rep.Hierarchy.Method),
		Scale: max(1, figureHeight/lay.Height)}
	at := map[string][2]int{} // program → [row, panel]
	for _, n := range rep.Hierarchy.Nodes {
		if len(fig.Rows) == 0 || fig.Rows[len(fig.Rows)-1].Label != levelLabel(n.L) {
			fig.Rows = append(fig.Rows, imagegrid.Row{Label: levelLabel(n.L)})
		}
		row := &fig.Rows[len(fig.Rows)-1]
		p := programs[n.Name()]
		mean := make([]float64, rep.Genes.Len())
		for i, g := range p.Genes {
			mean[g] = p.Mean[i]
		}
		at[n.Name()] = [2]int{len(fig.Rows) - 1, len(row.Panels)}
		row.Panels = append(row.Panels, lay.Panel(fmt.Sprintf("code %d", n.Code), func(g int) float64 { return mean[g] }))
	}
	for _, e := range rep.Hierarchy.Edges {
		strength, title := 1.0, fmt.Sprintf("%s → %s: %d genes shared", e.From, e.To, e.Shared)
		if !math.IsNaN(e.Link) {
			strength, title = e.Link, fmt.Sprintf("%s is a part of %s: posterior mean %.3g", e.To, e.From, e.Link)
		}
		fig.Links = append(fig.Links, imagegrid.Link{From: at[e.From], To: at[e.To], Strength: strength, Title: title})
	}
	return fig, nil
}

func levelLabel(L int) string { return fmt.Sprintf("L = %d", L) }
