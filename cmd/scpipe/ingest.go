package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"scpipe/ingest"
	"scpipe/progress"
)

func ingestCommand() *cli.Command {
	d := ingest.DefaultOptions()
	return &cli.Command{
		Name:      "ingest",
		Usage:     "turn a 10x HDF5 / MTX / h5ad count matrix, or a ratings file, into binary shards",
		ArgsUsage: "INPUT",
		Description: `Reads a count matrix, binarises it (count > --threshold is 1), drops genes
expressed in fewer than --min-cell-frac of cells (the paper's 1%), and writes
bit-packed, memory-mapped shards (cells as rows) with a manifest.

Inputs, detected from content:
   10x HDF5       CellRanger v2 (/<genome>/...) and v3+ (/matrix/...), spaceranger
   10x MTX        folder with matrix.mtx[.gz], genes.tsv or features.tsv[.gz], barcodes.tsv[.gz]
   Matrix Market  bare .mtx[.gz] with optional --genes / --barcodes files
   AnnData        .h5ad: X (CSR, CSC or dense), --layer NAME, raw/X

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
   scpipe ingest adata.h5ad --layer counts -o shards
   scpipe ingest matrix.mtx.gz --genes genes.tsv --barcodes barcodes.tsv -o shards
   scpipe ingest --format ratings ml-100k/u.data -o ml100k`,
		Flags: append(commonFlags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Required: true, Usage: "shard folder to create"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing output folder"},
			&cli.StringFlag{Name: "format", Value: "auto", Usage: "auto (10x HDF5, MTX or h5ad, detected from content) or ratings"},
			&cli.StringFlag{Name: "genome", Usage: "genome to keep: the genome group of a CellRanger v2 file, or the features' genome (10x v3, h5ad var genome)"},
			&cli.StringFlag{Name: "feature-type", Value: d.FeatureType, Usage: `feature type to keep, from 10x features or h5ad var feature_types ("" keeps all)`},
			&cli.StringFlag{Name: "layer", Usage: "AnnData matrix: X (default), raw, or a name under layers/"},
			&cli.BoolFlag{Name: "transpose", Usage: "the input is stored the other way round (h5ad genes × cells)"},
			&cli.Float64Flag{Name: "threshold", Value: d.Threshold, Usage: "a count above this is 1 (ratings: a rating above this; default the global mean)"},
			&cli.Float64Flag{Name: "min-cell-frac", Value: d.MinCellFrac, Usage: "keep genes expressed in at least this fraction of cells"},
			&cli.IntFlag{Name: "min-cells", Value: d.MinCells, Usage: "keep genes expressed in at least this many cells"},
			&cli.IntFlag{Name: "min-genes", Value: d.MinGenes, Usage: "keep cells expressing at least this many genes"},
			&cli.StringFlag{Name: "genes", Usage: "genes/features file of a bare Matrix Market input"},
			&cli.StringFlag{Name: "barcodes", Usage: "barcodes file of a bare Matrix Market input"},
		),
		Action: func(c *cli.Context) error {
			in, err := oneArg(c, "input file or folder")
			if err != nil {
				return err
			}
			env, err := newEnv(c)
			if err != nil {
				return err
			}
			switch c.String("format") {
			case "auto":
			case "ratings":
				return ingestRatings(c, env, in)
			default:
				return fmt.Errorf("--format %q: want auto or ratings", c.String("format"))
			}
			o := ingest.DefaultOptions()
			o.Input, o.Output, o.Force = in, c.String("output"), c.Bool("force")
			o.Genome, o.FeatureType, o.Layer, o.Transpose = c.String("genome"), c.String("feature-type"), c.String("layer"), c.Bool("transpose")
			o.Threshold, o.MinCellFrac = c.Float64("threshold"), c.Float64("min-cell-frac")
			o.MinCells, o.MinGenes = c.Int("min-cells"), c.Int("min-genes")
			o.GenesFile, o.BarcodesFile = c.String("genes"), c.String("barcodes")
			o.Logger = env.log
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
			return nil
		},
	}
}
