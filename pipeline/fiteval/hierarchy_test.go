package fiteval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/enrich"
	"scpipe/gibbs"
	"scpipe/pipeline"
	"scpipe/pipeline/hierarchy"
	"scpipe/simulate"

	"scpipe/simulate/simtest"
)

// TestEvaluateHierarchyImages fits the digits at L = 3 and 4 and checks
// that evaluate --images draws their programs in two rows with one arrow
// per link of the hierarchy by fixed codes, titled with its posterior
// mean, and draws no hierarchy for one L.
func TestEvaluateHierarchyImages(t *testing.T) {
	t.Parallel()
	shards, _ := simtest.Shards(t, simulate.DefaultDigitsParams())
	cfg := pipeline.DefaultFitConfig()
	cfg.Shards, cfg.Output = shards, filepath.Join(t.TempDir(), "run")
	cfg.L, cfg.Chains, cfg.BurnIn, cfg.Samples, cfg.Holdout, cfg.Threads = pipeline.LSizes{3, 4}, 1, 30, 20, 0, 1
	cfg.Init, cfg.PriorU, cfg.Starts = gibbs.InitRandom, pipeline.PriorSetting{Prior: gibbs.FixedPrior(0.01)}, 1
	if _, err := pipeline.Fit(context.Background(), cfg, pipeline.FitOptions{}); err != nil {
		t.Fatal(err)
	}
	eo := enrich.DefaultOptions()
	eo.Run, eo.Hierarchy, eo.Linker = cfg.Output, enrich.HierarchyFixedCodes, hierarchy.Linker(hierarchy.DefaultOptions())
	want, err := enrich.Analyse(context.Background(), eo)
	if err != nil {
		t.Fatal(err)
	}
	for _, Ls := range [][]int{nil, {4}} {
		o := DefaultOptions()
		o.Run, o.Out, o.Images, o.Ls, o.Workers = cfg.Output, filepath.Join(t.TempDir(), "eval"), true, Ls, 2
		o.Linker = eo.Linker
		o.Truth = filepath.Join(filepath.Dir(shards), simulate.TruthDir)
		if _, err := Evaluate(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		svg, err := os.ReadFile(filepath.Join(o.Out, evalImagesDir, hierarchyImagesFile+".svg"))
		if Ls != nil {
			if !errors.Is(err, os.ErrNotExist) {
				t.Errorf("L = %v: a hierarchy drawn (%v)", Ls, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		s := string(svg)
		if n := strings.Count(s, "<line "); n != len(want.Hierarchy.Edges) || n == 0 {
			t.Errorf("%d arrows, want the %d links", n, len(want.Hierarchy.Edges))
		}
		if got := strings.Count(s, "<image "); got != len(want.Hierarchy.Nodes) || !strings.Contains(s, ">L = 3<") || !strings.Contains(s, ">L = 4<") {
			t.Errorf("%d images for %d programs, or rows unlabelled", got, len(want.Hierarchy.Nodes))
		}
		e := want.Hierarchy.Edges[0]
		if title := fmt.Sprintf("%s is a part of %s: posterior mean %.3g", e.To, e.From, e.Link); !strings.Contains(s, title) {
			t.Errorf("no arrow titled %q", title)
		}
		if _, err := os.Stat(filepath.Join(o.Out, evalImagesDir, hierarchyImagesFile+".png")); err != nil {
			t.Error(err)
		}
	}
}
