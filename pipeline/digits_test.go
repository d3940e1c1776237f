package pipeline

import (
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"scpipe/gibbs"
	"scpipe/internal/rundir"
	"scpipe/internal/stats/codematch"
	"scpipe/pipeline/fiteval"
	"scpipe/simulate"

	"scpipe/simulate/simtest"
)

// TestDigitsRecoverSegments fits the paper's single-layer model (symmetric
// noise, L = 7, random start, p(u) = 0.01 as in the paper's digits
// experiment) to the ten noise-free calculator digits and checks that the
// posterior's best chain recovers the seven segments exactly.
//
// The best chain, because single chains get stuck: besides the segments,
// the noise-free digits have exact factorisations into seven overlapping
// codes (such as b∪c, c∪f, a∪b, a∪d, g and e split in two: 88 pixels
// where the segments have 60), which the sampler, at the λ ≈ 8 of data
// reconstructed without error, does not leave. All of them explain the
// data equally well; the sparsity prior prefers the segments, the only
// exact factorisation with 60 pixels. So the chain chosen is the one of
// highest log-likelihood and, among equals, of highest prior: the fewest
// pixels in its codes.
func TestDigitsRecoverSegments(t *testing.T) {
	p := simulate.DefaultDigitsParams()
	shards, truth := simtest.Shards(t, p)
	cfg := DefaultFitConfig()
	cfg.Shards, cfg.Output = shards, filepath.Join(t.TempDir(), "run")
	cfg.L, cfg.Chains, cfg.BurnIn, cfg.Samples, cfg.Holdout, cfg.Threads = LSizes{7}, 8, 100, 50, 0, 2
	cfg.Init = gibbs.InitRandom // the model: auto, symmetric noise and no housekeeping code for simulated binary data
	cfg.PriorU, cfg.PriorZ = givenPrior(gibbs.FixedPrior(0.01)), givenPrior(gibbs.Prior{})
	cfg.Starts, cfg.StartSweeps = 16, 50
	rep, err := Fit(context.Background(), cfg, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var best []codematch.Set
	bestLL, bestPixels, bestChain := 0.0, 0, 0
	for _, r := range rep.Summary {
		codes, err := rundir.ReadCodes(filepath.Join(rundir.FitDir(cfg.Output, 7, r.Chain), rundir.CodesFile))
		if err != nil {
			t.Fatal(err)
		}
		sets := codematch.MAPSets(codes.Mean, 7)
		pixels := 0
		for _, s := range sets {
			pixels += s.Len()
		}
		if best == nil || r.LogLik > bestLL || r.LogLik == bestLL && pixels < bestPixels {
			best, bestLL, bestPixels, bestChain = sets, r.LogLik, pixels, r.Chain
		}
	}
	for l := range simulate.DigitsL {
		segment := codematch.NewSet(p.Genes)
		for _, g := range truth.ProgramGenes(l) {
			segment.Add(g)
		}
		match := 0.0
		for _, s := range best {
			match = max(match, codematch.Jaccard(segment, s))
		}
		if match != 1 {
			t.Errorf("segment %s (%d pixels): best code overlaps with Jaccard %.2f", simulate.SegmentName(l), segment.Len(), match)
		}
	}
	if bestPixels != 60 {
		t.Errorf("the best chain's codes hold %d pixels, the segments 60", bestPixels)
	}

	// The best chain reconstructs every pixel of the digits, and its
	// codes and reconstructions are drawn as images (fiteval's "images"
	// folder): the digits' fit is made here, so its evaluation is tested
	// here too.
	o := fiteval.DefaultOptions()
	o.Run, o.Out, o.Truth, o.Images = cfg.Output, filepath.Join(t.TempDir(), "eval"), filepath.Join(filepath.Dir(shards), simulate.TruthDir), true
	o.Workers = 2
	ev, err := fiteval.Evaluate(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range ev.Rows {
		if r.Chain == bestChain && (r.Target != fiteval.TargetTruth || r.N != 10*170 || r.Accuracy != 1) {
			t.Errorf("best chain against the truth: %+v", r)
		}
	}
	f, err := os.Open(filepath.Join(o.Out, "images", fmt.Sprintf("L07_chain%d.png", bestChain)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// Eleven rows (codes, then ten digits) of images 17 × 8 screen pixels high.
	if h := img.Bounds().Dy(); h < 11*17*8 {
		t.Errorf("figure %v: too small for 11 rows of digits", img.Bounds())
	}
}
