package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"scpipe/export"
)

func exportCommand() *cli.Command {
	d := export.DefaultOptions()
	return &cli.Command{
		Name:      "export",
		Usage:     "a run's results for scanpy (AnnData .h5ad) and for Seurat and cNMF users (cNMF's tables)",
		ArgsUsage: "RUN",
		Description: `Writes the fit at the recommended L (summary.tsv; --L for another) as an
AnnData file that anndata and scanpy read:

   X                     the binary cells × genes matrix the run was fitted to (CSR, from its shards; --no-x: none)
   obs                   barcodes; scpipe_1 … scpipe_L: each cell's usage of each program (posterior mean of z)
   var                   unique gene symbols; gene_ids, gene_symbols
   obsm["X_scpipe"]      cells × L usage
   varm["scpipe_mean"]   genes × L posterior mean of u (and varm["scpipe_score"] where codes.parquet has scores)
   uns["scpipe"]         the run's configuration, L, per program its MAP and top genes (--enrich: its best terms)

--into FILE writes a copy of your own AnnData file with obsm, varm and
uns["scpipe"] added and everything else kept (cells matched by barcode).
--cnmf DIR writes cNMF's tables of every L into DIR/scpipe/ (usages,
gene_spectra_score, spectra, top_genes). Format: export/README.md.

   scpipe export run -o run.h5ad
   scpipe export run -o run.h5ad --L 6 --enrich run-enrich
   scpipe export run -o pbmc-programs.h5ad --into pbmc.h5ad   # your file, programs added
   scpipe export run --cnmf run-cnmf

   python3 -c "import anndata; a = anndata.read_h5ad('run.h5ad'); print(a.obsm['X_scpipe'].shape)"`,
		Flags: append(commonFlags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "the AnnData `FILE` (.h5ad) to write"},
			&cli.IntFlag{Name: "L", Usage: "the L exported to the .h5ad (default: the run's recommended L, or its only one); with --cnmf, that L alone"},
			&cli.IntFlag{Name: "chain", Usage: "the chain exported", DefaultText: "the L's consensus of chains where the run has one (RUN/Lnn/consensus), else 1"},
			&cli.IntFlag{Name: "top", Value: d.TopN, Usage: "top genes listed per program"},
			&cli.StringFlag{Name: "into", Usage: "write a copy of your own AnnData `FILE` with obsm, varm and uns/scpipe added and everything else kept (its cells must be the run's, matched by barcode; FILE is never modified)"},
			&cli.StringFlag{Name: "enrich", Usage: "an output `DIR` of scpipe enrich of the run: its best terms per program go to uns"},
			&cli.StringFlag{Name: "cnmf", Usage: "write cNMF's tables of every L into `DIR`/scpipe/"},
			&cli.BoolFlag{Name: "no-x", Usage: "leave X out of the .h5ad (by default X is the binary cells × genes matrix the run was fitted to, read from its shards)"},
			&cli.StringFlag{Name: "shards", Usage: "the run's shard `DIR`, where they are no longer where shards.json says"},
			&cli.BoolFlag{Name: "force", Usage: "replace existing outputs"},
		),
		Action: func(c *cli.Context) error {
			run, err := oneArg(c, "run directory")
			if err != nil {
				return err
			}
			env, err := newEnv(c)
			if err != nil {
				return err
			}
			for _, f := range []string{"top", "chain"} {
				// 0 means the default to the library, not to a user who typed it.
				if c.IsSet(f) && c.Int(f) < 1 {
					return fmt.Errorf("export: --%s %d: want at least 1", f, c.Int(f))
				}
			}
			if c.String("output") == "" && c.String("cnmf") == "" {
				return errors.New("export: nothing to write: give -o FILE.h5ad, --cnmf DIR or both")
			}
			o := export.DefaultOptions()
			o.Run, o.Out, o.Force, o.Threads, o.Log = run, c.String("output"), c.Bool("force"), env.threads, env.log
			o.L, o.Chain, o.TopN, o.Enrich = c.Int("L"), c.Int("chain"), c.Int("top"), c.String("enrich")
			o.NoX, o.Shards, o.Into = c.Bool("no-x"), c.String("shards"), c.String("into")
			if err := export.CheckOutputs(o, c.String("cnmf")); err != nil {
				return err
			}
			if o.Out != "" {
				rep, err := export.Export(c.Context, o)
				if err != nil {
					return err
				}
				env.log.Info("next: in Python, anndata.read_h5ad(\""+rep.Out+"\"); obsm[\"X_scpipe\"] holds each cell's program usage", "L", rep.L)
			}
			if dir := c.String("cnmf"); dir != "" {
				if _, err := export.WriteCNMF(c.Context, o, dir); err != nil {
					return err
				}
			}
			return nil
		},
	}
}
