package pipeline

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"scpipe/gibbs"
	"scpipe/internal/rundir"
	"scpipe/internal/stats/codematch"
	"scpipe/shard"
)

// LayerSizes are the code counts of a multi-layer OrMachine from the data
// up; as text "7,4,2".
type LayerSizes []int

// MarshalText writes the sizes separated by commas.
func (ls LayerSizes) MarshalText() ([]byte, error) {
	var b []byte
	for i, L := range ls {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(L), 10)
	}
	return b, nil
}

// UnmarshalText reads sizes separated by commas, each in 1..MaxL; the
// empty text is no layers.
func (ls *LayerSizes) UnmarshalText(text []byte) error {
	s := strings.TrimSpace(string(text))
	if s == "" {
		*ls = nil
		return nil
	}
	var out LayerSizes
	for part := range strings.SplitSeq(s, ",") {
		L, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || L < 1 || L > gibbs.MaxL {
			return fmt.Errorf("%w: layers %q: %q is not a size in 1..%d (example: 7,4,2)", ErrConfig, text, part, gibbs.MaxL)
		}
		out = append(out, L)
	}
	*ls = out
	return nil
}

// String returns the sizes as MarshalText writes them.
func (ls LayerSizes) String() string {
	b, _ := ls.MarshalText()
	return string(b)
}

// LayerPriors are one prior per layer: "uniform", "empirical" or one
// probability each, separated by commas ("0.01,0.05,0.2").
type LayerPriors []gibbs.Prior

// MarshalText writes the priors separated by commas.
func (lp LayerPriors) MarshalText() ([]byte, error) {
	var b []byte
	for i, p := range lp {
		t, err := p.MarshalText()
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, t...)
	}
	return b, nil
}

// UnmarshalText reads the priors; the empty text is none.
func (lp *LayerPriors) UnmarshalText(text []byte) error {
	s := strings.TrimSpace(string(text))
	if s == "" {
		*lp = nil
		return nil
	}
	var out LayerPriors
	for part := range strings.SplitSeq(s, ",") {
		var p gibbs.Prior
		if err := p.UnmarshalText([]byte(part)); err != nil {
			return fmt.Errorf("%w: layer_prior_u %q: %w", ErrConfig, text, err)
		}
		out = append(out, p)
	}
	*lp = out
	return nil
}

// validateLayers checks the settings of a multi-layer fit: the paper's
// symmetric-noise model, one L (the first layer's), one start, no
// housekeeping code, priors that the layers can have.
func (c FitConfig) validateLayers(Ls []int) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: layers = %q: "+format, append([]any{ErrConfig, c.Layers.String()}, a...)...)
	}
	if len(c.Layers) == 0 {
		if len(c.LayerPriorU) > 0 {
			return fmt.Errorf("%w: layer_prior_u is set without layers", ErrConfig)
		}
		return nil
	}
	switch {
	case len(c.Layers) < 2:
		return bad("a multi-layer model needs two layers or more (one layer is --L %d)", c.Layers[0])
	case len(Ls) != 1 || Ls[0] != c.Layers[0]:
		return bad("the run fits L = %d, the first layer's size, only (L = %s: leave --L out or give --L %d)", c.Layers[0], LSizes(Ls), c.Layers[0])
	case !c.Noise.Auto && c.Noise.Noise != gibbs.Symmetric:
		return bad("the multi-layer OrMachine is the paper's symmetric-noise model: use --noise symmetric (noise = %v)", c.Noise)
	case !c.Housekeeping.Auto && c.Housekeeping.On:
		return bad("a housekeeping code is not part of the multi-layer model: use --housekeeping off")
	case c.FixedCodes != "":
		return bad("fixed codes are not part of the multi-layer model: leave out --fixed-codes")
	case c.Starts != 1:
		return bad("multiple starts are not part of the multi-layer model: use --starts 1 (and --chains for several chains)")
	case c.Reseed:
		return bad("re-seeding idle codes is not part of the multi-layer model: use --reseed=false")
	case c.KeepSamples:
		return bad("a multi-layer fit keeps no samples: leave out --keep-samples")
	case c.PriorZ.Prior.Kind == gibbs.Empirical || len(c.PriorZ.Prior.P) > 1:
		return bad("prior_z (the top layer's Z) must be uniform or one probability (%v)", c.PriorZ)
	case len(c.LayerPriorU) > 0 && len(c.LayerPriorU) != len(c.Layers):
		return bad("layer_prior_u has %d priors for %d layers", len(c.LayerPriorU), len(c.Layers))
	}
	for k, p := range c.LayerPriorU {
		if k > 0 && p.Kind == gibbs.Empirical {
			return bad("layer_prior_u: layer %d has the empirical prior, which only the first layer (fixed data) can have", k+1)
		}
		if len(p.P) > 1 {
			return bad("layer_prior_u: layer %d has %d probabilities, want one", k+1, len(p.P))
		}
	}
	return nil
}

// layersConfig maps the fit configuration onto the multi-layer sampler's
// for one chain.
func layersConfig(cfg FitConfig, L, chain int) gibbs.LayersConfig {
	c := gibbs.DefaultLayersConfig(cfg.Layers...)
	c.BurnIn, c.Samples, c.Thin = cfg.BurnIn, cfg.Samples, cfg.Thin
	c.Seed = chainSeed(cfg.Seed, L, chain)
	c.Workers = cfg.Threads
	// The top layer's Z has no data of its own to set an empirical prior
	// by: auto stands for the uniform prior there.
	c.PriorZ, c.Init = cfg.PriorZ.Prior, cfg.Init
	c.Layers[0].PriorU = cfg.PriorU.Resolve(gibbs.Symmetric) // the multi-layer model's likelihood
	for k, p := range cfg.LayerPriorU {
		c.Layers[k].PriorU = p
	}
	return c
}

// lambdaText writes each layer's λ.
func lambdaText(lam []float64) string {
	parts := make([]string, len(lam))
	for i, v := range lam {
		parts[i] = strconv.FormatFloat(v, 'f', 3, 64)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// writeLayersFit writes a finished multi-layer fit: the first layer as a
// single-layer fit's tables (codes ordered as writeFit orders them), and
// per layer k its folder layerK with the prototypes (every layer) and, above
// the first, its codes over the layer below's codes, its cells' usage and
// its trace; then layers.tsv. The first layer's trace, which marks the fit
// complete, is written last.
func writeLayersFit(dir string, src *shard.Shard, res *gibbs.LayersResult, score []float64) error {
	m := src.Manifest()
	barcodes, err := src.Barcodes()
	if err != nil {
		return err
	}
	first := res.Layers[0]
	order := codematch.SizeOrder(codematch.UsedMAPSets(first.UMean, first.ZMean, first.L))
	genes := m.GeneIDs
	if len(genes) == 0 {
		genes = numbered("gene", first.D)
	}
	names := m.GeneNames
	if len(names) == 0 {
		names = genes
	}
	if len(barcodes) == 0 {
		barcodes = numbered("cell", first.N)
	}
	// Layer 2's units are the first layer's codes, renamed in its output
	// order: unit i of layer 2 is sampler code order[i].
	var rows []rundir.LayerRow
	for k, r := range res.Layers {
		ld := rundir.LayerDir(dir, k+1)
		if err := mkdir(ld); err != nil {
			return err
		}
		proto := res.Prototypes(k)
		uMean := r.UMean
		if k == 0 {
			proto = permuteCols(proto, r.L, order)
		}
		if k == 1 {
			uMean = permuteRows(uMean, r.L, order)
		}
		if err := rundir.WriteCodes(filepath.Join(ld, rundir.PrototypesFile),
			rundir.Codes{GeneIDs: genes, GeneNames: names, L: r.L, Mean: proto}); err != nil {
			return err
		}
		if k > 0 {
			if err := writeUpperLayer(ld, r, uMean, barcodes); err != nil {
				return err
			}
		}
		last := r.Trace[len(r.Trace)-1]
		rows = append(rows, rundir.LayerRow{Layer: k + 1, L: r.L, Lambda: r.Lambda, SigmaLambda: 1 / (1 + math.Exp(-r.Lambda)),
			Accuracy: last.Accuracy, LogLik: last.LogLik, Samples: r.Samples})
	}
	if err := rundir.WriteLayers(filepath.Join(dir, rundir.LayersFile), rows); err != nil {
		return err
	}
	return writeFit(dir, src, first, score, 0, first.L)
}

// writeUpperLayer writes the codes (over the layer below's codes), usage
// and trace of a layer above the first into its folder ld.
func writeUpperLayer(ld string, r *gibbs.Result, uMean []float64, barcodes []string) error {
	if err := rundir.WriteLayerCodes(filepath.Join(ld, rundir.LayerCodesFile), numbered("code_", r.D), r.L, uMean); err != nil {
		return err
	}
	if err := rundir.WriteCells(filepath.Join(ld, rundir.CellsFile), rundir.Cells{Barcodes: barcodes, L: r.L, Mean: r.ZMean}); err != nil {
		return err
	}
	return rundir.WriteTrace(filepath.Join(ld, rundir.TraceFile), traceRows(r.Trace))
}

// permuteRows returns the rows × L matrix m with row k taken from row
// order[k].
func permuteRows(m []float64, L int, order []int) []float64 {
	out := make([]float64, 0, len(m))
	for _, from := range order {
		out = append(out, m[from*L:from*L+L]...)
	}
	return out
}
