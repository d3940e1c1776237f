package main

import (
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"scpipe/shard"
	"scpipe/simulate"
)

// The flags that belong to some kinds of simulation only.
var (
	flipFlags       = []string{"flip-on", "flip-off", "flip"}
	orMachineFlags  = append([]string{"code-density", "usage-density"}, flipFlags...)
	singleCellFlags = []string{"depth-sigma", "baseline-median", "baseline-sigma", "housekeeping-fraction", "housekeeping-median",
		"housekeeping-sigma", "lift-median", "lift-sigma", "program-size-min", "program-size-max", "programs-per-cell-min", "programs-per-cell-max",
		"samples", "sample-depth-sigma", "sample-background-sigma", "sample-programs", "sample-program-fraction"}
	digitsFlags = append([]string{"scale"}, flipFlags...)
	// kindFlags lists the flags of each kind, in the order of the kinds.
	kindFlags = [...][]string{simulate.OrMachine: orMachineFlags, simulate.SingleCell: singleCellFlags, simulate.Digits: digitsFlags}
	// The digits kind's pixels come from --scale, its L is the seven
	// segments, and it has no activity programs.
	notDigitsFlags = []string{"genes", "L", "activity-programs", "activity-fraction"}
)

func simulateCommand() *cli.Command {
	d, sc, dg := simulate.DefaultParams(), simulate.DefaultSingleCell(), simulate.DefaultDigitsParams()
	return &cli.Command{
		Name:  "simulate",
		Usage: "draw planted data from the OrMachine or a single-cell-like generative model",
		Description: `Draws L gene programs (random gene sets) and their usage by cells, forms the
Boolean product and adds noise, then writes a 10x v3 MTX folder, or shards
directly (--shards) for data too large for text. The planted truth goes to
OUT/truth/ (programs.tsv, usage.tsv, truth.json with every parameter).

--kind ormachine (the default) is the paper's model: dropout (--flip-off) and
background (--flip-on) at fixed rates. --kind singlecell is what real data
do: each cell has a depth (lognormal size factor s, median 1), each gene a
baseline rate μ (lognormal; a few housekeeping genes high), each program gene
a lift ν, and an entry's UMI count is Poisson(s·(μ + ν·covered)), so dropout
falls with depth and background rises with it; its truth adds
gene_rates.tsv and cell_depth.tsv. --kind digits draws the calculator
digits of the paper's Fig. calc: image n shows the digit n mod 10 as the lit
segments of a seven-segment display on a 10 × 17 pixel grid (--scale s: each
grid cell s × s pixels; s = 10 with 100 images is the paper's
high-resolution set, N·D = 1.7e6), with --flip noise and --missing pixels
(shards); its truth is the seven segments as codes (L = 7), its genes are
pixels named r<row>c<col> and its cells digit<d>-<n>. Output is the same
for any -j.

--activity-programs N adds N programs beyond the L identity programs (the
ormachine and singlecell kinds), as cNMF's simulation has beside its cell
types: each cell, whatever identity programs it uses, switches each one on
with probability --activity-fraction (an interferon or stress response).
They are programs L+1 … L+N of the truth; without them the output is what
it was before they existed.

--samples S (singlecell) splits the cells into S samples of equal size,
each with its own depth factor (σ --sample-depth-sigma of its log) and
background factor (every gene's baseline rate; σ --sample-background-sigma):
the batch effects of a study's libraries. --sample-programs K adds K
programs present in one sample only (program k in sample k mod S), used by
--sample-program-fraction of its cells: the biology case, which a report's
per-sample view should tell from a batch effect. The MTX output is then
one folder per sample (OUT/sample1, …) and OUT/samples.tsv for
scpipe ingest --samples; shards (--shards) record the samples themselves.
The truth's barcodes are BARCODE-sampleK, as ingest names them.

   scpipe simulate -o sim                               # the demo's default
   scpipe simulate -o sim --cells 1000 --genes 1000 --L 5 --code-density 0.3 \
       --usage-density 0.3 --flip 0.05                   # the paper's symmetric noise
   scpipe simulate -o sc --kind singlecell               # PBMC-like sparsity and depth
   scpipe simulate -o ifn --kind singlecell --programs-per-cell-max 1 \
       --activity-programs 1 --activity-fraction 0.3     # cell types and a response across them
   scpipe simulate -o donors --kind singlecell --samples 3 --sample-programs 1
   scpipe ingest --samples donors/samples.tsv -o donors.shards
   scpipe simulate -o big --shards --cells 1300000 --genes 11000 --L 2
   scpipe simulate -o calc --kind digits                 # the ten digits, noise-free
   scpipe simulate -o calc50 --kind digits --cells 50 --missing 0.7 --shards
   scpipe simulate -o calc-hires --kind digits --cells 100 --scale 10 --flip 0.05`,
		Flags: append(commonFlags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Required: true, Usage: "output folder"},
			&cli.StringFlag{Name: "kind", Value: simulate.OrMachine.String(), Usage: "generative model: ormachine, singlecell or digits"},
			&cli.IntFlag{Name: "cells", Value: d.Cells, Usage: fmt.Sprintf("number of cells (digits: images, default %d)", dg.Cells)},
			&cli.IntFlag{Name: "genes", Value: d.Genes, Usage: "number of genes"},
			&cli.IntFlag{Name: "L", Value: d.L, Usage: "number of planted programs"},
			&cli.IntFlag{Name: "scale", Value: dg.Digits.Scale, Usage: "digits: pixels per side of a cell of the 10 × 17 grid"},
			&cli.Float64Flag{Name: "code-density", Value: d.CodeDensity, Usage: "ormachine: fraction of genes in each program"},
			&cli.Float64Flag{Name: "usage-density", Value: d.UsageDensity, Usage: "ormachine: fraction of cells using each program"},
			&cli.Float64Flag{Name: "flip-on", Value: d.FlipOn, Usage: "probability that a noise-free 0 is observed as 1 (ormachine; the digits kind: 0 unless given)"},
			&cli.Float64Flag{Name: "flip-off", Value: d.FlipOff, Usage: "probability that a noise-free 1 is observed as 0, dropout (ormachine; the digits kind: 0 unless given)"},
			&cli.Float64Flag{Name: "flip", Usage: "ormachine, digits: symmetric flip noise: sets both --flip-on and --flip-off"},
			&cli.Float64Flag{Name: "depth-sigma", Value: sc.DepthSigma, Usage: "singlecell: σ of the log size factor of cells"},
			&cli.Float64Flag{Name: "baseline-median", Value: sc.BaselineMedian, Usage: "singlecell: median baseline rate μ of ordinary genes"},
			&cli.Float64Flag{Name: "baseline-sigma", Value: sc.BaselineSigma, Usage: "singlecell: σ of log μ of ordinary genes"},
			&cli.Float64Flag{Name: "housekeeping-fraction", Value: sc.HousekeepingFraction, Usage: "singlecell: fraction of genes that are housekeeping"},
			&cli.Float64Flag{Name: "housekeeping-median", Value: sc.HousekeepingMedian, Usage: "singlecell: median baseline rate μ of housekeeping genes"},
			&cli.Float64Flag{Name: "housekeeping-sigma", Value: sc.HousekeepingSigma, Usage: "singlecell: σ of log μ of housekeeping genes"},
			&cli.Float64Flag{Name: "lift-median", Value: sc.LiftMedian, Usage: "singlecell: median program lift ν"},
			&cli.Float64Flag{Name: "lift-sigma", Value: sc.LiftSigma, Usage: "singlecell: σ of log ν"},
			&cli.Float64Flag{Name: "program-size-min", Value: sc.ProgramSizeMin, Usage: "singlecell: fraction of genes in the smallest program"},
			&cli.Float64Flag{Name: "program-size-max", Value: sc.ProgramSizeMax, Usage: "singlecell: fraction of genes in the largest program"},
			&cli.IntFlag{Name: "programs-per-cell-min", Value: sc.ProgramsPerCellMin, Usage: "singlecell: fewest programs a cell uses"},
			&cli.IntFlag{Name: "programs-per-cell-max", Value: sc.ProgramsPerCellMax, Usage: "singlecell: most programs a cell uses"},
			&cli.Float64Flag{Name: "missing", Usage: "fraction of entries unobserved (shards only)"},
			&cli.IntFlag{Name: "activity-programs", Usage: "ormachine, singlecell: programs beyond the L identity programs that cells of every identity use, as an interferon or stress response (programs L+1 … of the truth)"},
			&cli.Float64Flag{Name: "activity-fraction", Value: 0.3, Usage: "ormachine, singlecell: fraction of cells using each activity program, drawn whatever the cell's identity programs"},
			&cli.IntFlag{Name: "samples", Usage: "singlecell: split the cells into this many samples, each with its own depth and background"},
			&cli.Float64Flag{Name: "sample-depth-sigma", Value: simulate.DefaultSampleParams(2).DepthSigma, Usage: "singlecell, --samples: σ of the log depth factor of a sample"},
			&cli.Float64Flag{Name: "sample-background-sigma", Value: simulate.DefaultSampleParams(2).BackgroundSigma, Usage: "singlecell, --samples: σ of the log background factor of a sample"},
			&cli.IntFlag{Name: "sample-programs", Usage: "singlecell, --samples: programs present in one sample only (the biology case)"},
			&cli.Float64Flag{Name: "sample-program-fraction", Value: simulate.DefaultSampleParams(2).ProgramFraction, Usage: "singlecell, --samples: fraction of its sample's cells using a sample program"},
			&cli.Uint64Flag{Name: "seed", Value: d.Seed, Usage: "random seed"},
			&cli.BoolFlag{Name: "shards", Usage: "write shards (OUT/shards) instead of an MTX folder"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing output folder"},
		),
		Action: func(c *cli.Context) error {
			env, err := newEnv(c)
			if err != nil {
				return err
			}
			p, err := simulateParams(c)
			if err != nil {
				return err
			}
			out := c.String("output")
			// Before the truth is drawn, which takes memory in
			// proportion to the sizes.
			if err := simulate.CheckRoom(out, p, c.Bool("shards"), nil); err != nil {
				return err
			}
			t, err := simulate.New(c.Context, p)
			if err != nil {
				return err
			}
			t.Workers, t.Log = env.threads, env.log
			if c.Bool("shards") {
				err = simulate.WriteShards(c.Context, out, t, shard.CreateOptions{Force: c.Bool("force"), Cached: env.cached})
			} else {
				err = simulate.WriteMTX(c.Context, out, t, c.Bool("force"))
			}
			if err == nil {
				env.log.Info("simulated", "output", out, "kind", p.Kind, "cells", p.Cells, "genes", p.Genes, "L", p.L, "activity_programs", p.ActivityPrograms, "samples", p.Samples.Samples, "sample_programs", p.Samples.Programs)
			}
			return err
		},
	}
}

// simulateParams reads the flags of the chosen kind, refusing a flag that
// belongs to the other kind.
func simulateParams(c *cli.Context) (simulate.Params, error) {
	kind, err := simulate.ParseKind(c.String("kind"))
	if err != nil {
		return simulate.Params{}, fmt.Errorf("--kind: %w", err)
	}
	p := simulate.Params{
		Kind:  kind,
		Cells: c.Int("cells"), Genes: c.Int("genes"), L: c.Int("L"),
		Missing: c.Float64("missing"), Seed: c.Uint64("seed"),
	}
	foreign := func(name string) bool {
		if slices.Contains(notDigitsFlags, name) {
			return kind == simulate.Digits
		}
		return !slices.Contains(kindFlags[kind], name)
	}
	for _, name := range slices.Concat(slices.Concat(kindFlags[:]...), notDigitsFlags) {
		if c.IsSet(name) && foreign(name) {
			return p, fmt.Errorf("--%s does not apply to --kind %s", name, kind)
		}
	}
	if p.ActivityPrograms = c.Int("activity-programs"); p.ActivityPrograms > 0 {
		p.ActivityFraction = c.Float64("activity-fraction")
	} else if c.IsSet("activity-fraction") {
		return p, fmt.Errorf("--activity-fraction needs --activity-programs")
	}
	switch kind {
	case simulate.SingleCell:
		p.SingleCell = simulate.SingleCellParams{
			DepthSigma:     c.Float64("depth-sigma"),
			BaselineMedian: c.Float64("baseline-median"), BaselineSigma: c.Float64("baseline-sigma"),
			HousekeepingFraction: c.Float64("housekeeping-fraction"),
			HousekeepingMedian:   c.Float64("housekeeping-median"), HousekeepingSigma: c.Float64("housekeeping-sigma"),
			LiftMedian: c.Float64("lift-median"), LiftSigma: c.Float64("lift-sigma"),
			ProgramSizeMin: c.Float64("program-size-min"), ProgramSizeMax: c.Float64("program-size-max"),
			ProgramsPerCellMin: c.Int("programs-per-cell-min"), ProgramsPerCellMax: c.Int("programs-per-cell-max"),
		}
		if S := c.Int("samples"); S > 0 {
			p.Samples = simulate.SampleParams{Samples: S, DepthSigma: c.Float64("sample-depth-sigma"), BackgroundSigma: c.Float64("sample-background-sigma"),
				Programs: c.Int("sample-programs"), ProgramFraction: c.Float64("sample-program-fraction")}
		} else {
			for _, f := range []string{"sample-depth-sigma", "sample-background-sigma", "sample-programs", "sample-program-fraction"} {
				if c.IsSet(f) {
					return p, fmt.Errorf("--%s needs --samples", f)
				}
			}
		}
		return p, nil
	case simulate.Digits:
		dg := simulate.DefaultDigitsParams()
		p.Digits.Scale = c.Int("scale")
		p.Genes, p.L = simulate.DigitsGenes(p.Digits.Scale), dg.L
		if !c.IsSet("cells") {
			p.Cells = dg.Cells
		}
		// Noise-free unless asked: the paper's Fig. calc.
		if c.IsSet("flip-on") {
			p.FlipOn = c.Float64("flip-on")
		}
		if c.IsSet("flip-off") {
			p.FlipOff = c.Float64("flip-off")
		}
	default:
		p.CodeDensity, p.UsageDensity = c.Float64("code-density"), c.Float64("usage-density")
		p.FlipOn, p.FlipOff = c.Float64("flip-on"), c.Float64("flip-off")
	}
	if c.IsSet("flip") {
		p.FlipOn, p.FlipOff = c.Float64("flip"), c.Float64("flip")
	}
	return p, nil
}
