package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"scpipe/ingest"
	"scpipe/internal/progress"
)

func ingestCommand() *cli.Command {
	d := ingest.DefaultOptions()
	return &cli.Command{
		Name:      "ingest",
		Usage:     "turn a 10x HDF5 / MTX / h5ad count matrix, or a ratings file, into binary shards",
		ArgsUsage: "INPUT [INPUT...]",
		Description: `Reads a count matrix, binarises it, drops genes expressed in fewer than
--min-cell-frac of cells (the paper's 1%), and writes bit-packed,
memory-mapped shards (cells as rows) with a manifest.

Binarising: a count is 1 when it is above --threshold (0: any nonzero count,
as the paper) and above what ambient RNA explains: --ambient is the share of
a droplet's molecules taken to be ambient (default 0.05); a count is then 1
when it is above 0.317 (at 0.05) times the gene's average count in a cell of
that size, which every count of 1 is for most genes in most cells, while the
few molecules of insulin or LYZ that every droplet catches are not.
--ambient 0 binarises at --threshold alone. Inputs of 0s and 1s are never
weighed. (ingest/ambient.go says how; the input is read twice more.)

Gene filters, in this order (the manifest records each one's effect):
   1. --feature-type, --genome   keep the features of that type and genome
   2. --exclude-genes PATTERN    drop genes whose name matches PATTERN, a regular
                                 expression (Go RE2 syntax) matched case-insensitively
                                 against the gene symbol, or the gene id where the input
                                 has no symbols; the preset "housekeeping" means
                                 ribosomal proteins and mitochondrially encoded genes,
                                 human or mouse:
                                 ` + ingest.HousekeepingPattern + `
   3. --min-cell-frac, --min-cells   keep genes expressed in enough cells
   4. --select-genes N           keep the N remaining genes of largest binomial
                                 deviance (Townes et al. 2019, scry's
                                 devianceFeatureSelection), on the counts before
                                 binarising, over all input cells; ties go to the
                                 earlier gene; all are kept when fewer than N remain
--min-genes drops cells by the genes they express, counted before any gene filter.

Inputs, detected from content:
   10x HDF5       CellRanger v2 (/<genome>/...) and v3+ (/matrix/...), spaceranger
   10x MTX        folder with matrix.mtx[.gz], genes.tsv or features.tsv[.gz], barcodes.tsv[.gz]
   Matrix Market  bare .mtx[.gz] with optional --genes / --barcodes files
   AnnData        .h5ad: X (CSR, CSC or dense), --layer NAME, raw/X

Several samples (donors, lanes, libraries) go into one set of shards:
   scpipe ingest A.h5 B.h5 C.h5 -o shards     samples named A, B, C (from the paths)
   scpipe ingest --samples samples.tsv -o shards
samples.tsv: a header, then name<TAB>path per sample (paths relative to
the file's folder), plus any further columns, kept as the cells' metadata.
Inputs may be of any format ingest reads; every option applies to each.
A cell's barcode becomes BARCODE-NAME (scanpy's concat(..., index_unique="-")),
its sample is recorded in the shards (and in fits, exports and reports);
the filters are counted over all cells and reported per sample (scpipe
info), and ambient RNA is measured per sample. Genes are matched by id:
samples whose genes differ are refused unless --genes intersect (keep the
genes every sample holds) or --genes union (keep all; a gene a sample
lacks is unobserved in its cells, not 0).

--format ratings reads user-item ratings instead (users as cells, items as
genes), with one of three layouts detected from the first line:
   user<TAB>item<TAB>rating[<TAB>timestamp]     MovieLens 100k u.data
   user::item::rating[::timestamp]              MovieLens 1M, 10M ratings.dat
   CSV with a header userId,movieId,rating,...  MovieLens latest ratings.csv
A rating above --threshold is 1 (default: the global mean rating, as the
paper does); an unrated entry is missing, not 0 (the shards' observed mask).
No gene or cell filter applies.

Examples:
   scpipe ingest filtered_feature_bc_matrix.h5 -o shards
   scpipe ingest 1M_neurons_filtered_gene_bc_matrices_h5.h5 --genome mm10 -o brain
   scpipe ingest filtered_gene_bc_matrices/mm10 -o shards --min-cell-frac 0.05
   scpipe ingest filtered_feature_bc_matrix.h5 -o shards --exclude-genes housekeeping --select-genes 2000
   scpipe ingest adata.h5ad --layer counts -o shards
   scpipe ingest matrix.mtx.gz --genes genes.tsv --barcodes barcodes.tsv -o shards
   scpipe ingest --format ratings ml-100k/u.data -o ml100k
   scpipe ingest donor1.h5 donor2.h5 donor3.h5 --genes intersect -o donors`,
		Flags: append(commonFlags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Required: true, Usage: "shard folder to create"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing output folder"},
			&cli.StringFlag{Name: "format", Value: "auto", Usage: "auto (10x HDF5, MTX or h5ad, detected from content) or ratings"},
			&cli.StringFlag{Name: "genome", Usage: "genome to keep: the genome group of a CellRanger v2 file, or the features' genome (10x v3, h5ad var genome)"},
			&cli.StringFlag{Name: "feature-type", Value: d.FeatureType, Usage: `feature type to keep, from 10x features or h5ad var feature_types ("" keeps all)`},
			&cli.StringFlag{Name: "layer", Usage: "AnnData matrix: X (default), raw, or a name under layers/"},
			&cli.BoolFlag{Name: "transpose", Usage: "the input is stored the other way round (h5ad genes × cells)"},
			&cli.Float64Flag{Name: "threshold", Value: d.Threshold, Usage: "a count above this is 1 (ratings: a rating above this; default the global mean)"},
			&cli.Float64Flag{Name: "ambient", Value: d.Ambient, Usage: "ambient RNA fraction: a count must exceed what this much ambient RNA explains (0: count > --threshold alone)"},
			&cli.Float64Flag{Name: "min-cell-frac", Value: d.MinCellFrac, Usage: "keep genes expressed in at least this fraction of cells"},
			&cli.IntFlag{Name: "min-cells", Value: d.MinCells, Usage: "keep genes expressed in at least this many cells"},
			&cli.IntFlag{Name: "min-genes", Value: d.MinGenes, Usage: "keep cells expressing at least this many genes"},
			&cli.StringFlag{Name: "exclude-genes", Usage: `drop genes whose name matches this regular expression (case-insensitive), or "housekeeping" (ribosomal proteins, MT- genes)`},
			&cli.IntFlag{Name: "select-genes", Usage: "keep the `N` genes of largest binomial deviance among those the other filters keep"},
			&cli.StringFlag{Name: "genes", Usage: "genes/features file of a bare Matrix Market input; of several samples: intersect or union (default: refuse samples whose genes differ)"},
			&cli.StringFlag{Name: "samples", Usage: "samples file: a header, then name<TAB>path[<TAB>more columns] per sample"},
			&cli.StringFlag{Name: "barcodes", Usage: "barcodes file of a bare Matrix Market input"},
		),
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			several := len(args) > 1 || c.IsSet("samples")
			var in string
			var err error
			if !several {
				if in, err = oneArg(c, "input file or folder"); err != nil {
					return err
				}
			}
			env, err := newEnv(c)
			if err != nil {
				return err
			}
			switch c.String("format") {
			case "auto":
			case "ratings":
				if several {
					return fmt.Errorf("--format ratings reads one ratings file; %d inputs given", max(len(args), 2))
				}
				return ingestRatings(c, env, in)
			default:
				return fmt.Errorf("--format %q: want auto or ratings", c.String("format"))
			}
			o := ingest.DefaultOptions()
			o.Input, o.Output, o.Force = in, c.String("output"), c.Bool("force")
			o.Genome, o.FeatureType, o.Layer, o.Transpose = c.String("genome"), c.String("feature-type"), c.String("layer"), c.Bool("transpose")
			o.Threshold, o.Ambient, o.MinCellFrac = c.Float64("threshold"), c.Float64("ambient"), c.Float64("min-cell-frac")
			o.MinCells, o.MinGenes = c.Int("min-cells"), c.Int("min-genes")
			if several {
				if err := ingestSamples(c, &o, args); err != nil {
					return err
				}
			} else {
				o.GenesFile, o.BarcodesFile = c.String("genes"), c.String("barcodes")
				if g := o.GenesFile; g == string(ingest.GenesIntersect) || g == string(ingest.GenesUnion) {
					if _, err := os.Stat(g); err != nil {
						return fmt.Errorf("--genes %s matches the genes of several samples; one input was given", g)
					}
				}
			}
			if c.IsSet("exclude-genes") {
				if o.ExcludeGenes, err = ingest.ParseGenePattern(c.String("exclude-genes")); err != nil {
					return fmt.Errorf("--exclude-genes: %w", err)
				}
			}
			if c.IsSet("select-genes") {
				if o.SelectGenes = c.Int("select-genes"); o.SelectGenes <= 0 {
					return fmt.Errorf("--select-genes %d: want a positive number of genes", o.SelectGenes)
				}
			}
			o.Logger, o.Cached, o.Workers = env.log, env.cached, env.threads
			var meter *progress.Meter
			o.Progress = func(done, total int64) {
				if meter == nil {
					meter = progress.New(os.Stderr, "ingest", total, env.progress)
				}
				meter.Set(done, "")
			}
			r, err := ingest.Run(c.Context, o)
			if err != nil {
				return err
			}
			meter.Done("")
			env.log.Info("ingested", "input", r.Input, "output", r.Output, "format", r.Format,
				"cells", r.CellsOut, "genes", r.GenesOut, "genes_before_filter", r.GenesIn, "ones", r.Ones, "seconds", r.Total.Seconds())
			for _, s := range r.Samples {
				env.log.Info("ingested sample", "sample", s.Name, "input", s.Path, "cells_before", s.CellsBefore, "cells", s.CellsAfter,
					"ones_before", s.OnesBefore, "genes_missing", s.GenesMissing)
			}
			return nil
		},
	}
}

// ingestSamples fills o's samples from the command's inputs, or its
// --samples file, and its --genes join.
func ingestSamples(c *cli.Context, o *ingest.Options, args []string) error {
	var err error
	switch {
	case c.IsSet("samples") && len(args) > 0:
		return fmt.Errorf("--samples %s names the inputs: give no input beside it (%d given)", c.String("samples"), len(args))
	case c.IsSet("samples"):
		o.SamplesFile = c.String("samples")
		if o.SampleColumns, o.Samples, err = ingest.ReadSamplesFile(o.SamplesFile); err != nil {
			return err
		}
	default:
		if o.Samples, err = ingest.SamplesFromPaths(args); err != nil {
			return err
		}
	}
	if c.IsSet("barcodes") {
		return fmt.Errorf("--barcodes names the barcodes of one bare Matrix Market file; with several samples give each as an MTX folder")
	}
	if c.IsSet("genes") {
		if o.GeneJoin, err = ingest.ParseGeneJoin(c.String("genes")); err != nil {
			return fmt.Errorf("--genes of several samples: %w (a genes file names the genes of one bare Matrix Market file)", err)
		}
	}
	return nil
}
