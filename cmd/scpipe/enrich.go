package main

import (
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"scpipe/enrich"
	"scpipe/pipeline"
	"scpipe/pipeline/hierarchy"
)

func enrichCommand() *cli.Command {
	d := enrich.DefaultOptions()
	return &cli.Command{
		Name:      "enrich",
		Usage:     "gene programs of a run for Enrichr, offline enrichment, consensus across chains, the hierarchy across L",
		ArgsUsage: "RUN",
		Description: `Reads the finished fits of a run directory and writes, per L and code, the
gene program (genes whose posterior mean of u is at least --threshold, among
codes some cell uses: posterior mean of z at least --threshold), its genes
unique to it, its consensus over chains (codes matched to chain 1's; genes in
at least half of the chains) and stability, and the hierarchy of programs
across L (--hierarchy: as the paper infers it, by an OrMachine whose data are
the programs of one L and whose fixed codes are those of the next, which says
which programs of the next L make up each one; or by overlap). Each program
also gets its top --top genes by score (how specific a gene is to the
program's cells: the correlation of its detection with the program's use,
written by fit), and its gene set at a false discovery rate: the largest set
whose expected share of genes not in the program, under the posterior, is at
most --fdr. With --gmt, every program (all genes, unique genes, top genes
and the FDR set) is tested
against each library: one-sided hypergeometric p-value, Benjamini-Hochberg
adjusted per program and library, odds ratio and combined score as gseapy's
offline enrich computes them. Symbols match case-insensitively.

   DIR/index.tsv                  per (L, code): status, n_genes, n_unique, n_cells, stability, files
   DIR/chains.tsv                 per (L, code, chain): the matched code, Jaccard, sizes
   DIR/programs.gmt               every program of every L (L06_code3), for Enrichr or gseapy
   DIR/programs_unique.gmt        the unique genes of every program
   DIR/programs_top.gmt           the top genes of every program, by score
   DIR/programs_fdr.gmt           every program's gene set at the false discovery rate
   DIR/genes/L06_code3.txt        one symbol per line (.unique.txt: unique genes; .tsv: posterior means;
                                  .top.txt, .top.tsv: top genes and scores; .fdr.txt: the FDR set)
   DIR/enrichment/LIBRARY.tsv     Term, Overlap, P-value, Adjusted P-value, Odds Ratio, Combined Score, Genes
   DIR/hierarchy.tsv, .json       programs across L: order, parents, children, split/merge/new
   DIR/enrich.log                 settings, and how the libraries and background matched

   scpipe enrich run -o run-enrich --gmt GO_Biological_Process_2022_human.gmt.gz
   scpipe enrich run -o run-enrich --L 2..6 --gmt markers.gmt --gmt KEGG_2021_Human.gmt
   scpipe enrich run -o run-enrich --hierarchy overlap
   scpipe enrich brain-run -o brain-enrich --organism mouse --background expressed.txt --gmt lib.gmt`,
		Flags: append(commonFlags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Required: true, Usage: "output folder"},
			&cli.StringFlag{Name: "L", Usage: `latent sizes: "5", "2..10" or "2,4,8" (default: every L with a finished fit)`},
			&cli.Float64Flag{Name: "threshold", Value: d.Threshold, Usage: "posterior mean at or above which a gene is in a code and a cell uses it, in [0, 1]"},
			&cli.IntFlag{Name: "top", Value: d.Top, Usage: "genes in a program's top list, by score"},
			&cli.Float64Flag{Name: "fdr", Value: d.FDR, Usage: "expected false discovery proportion of a program's gene set (Bayesian FDR), in (0, 1)"},
			&cli.StringSliceFlag{Name: "gmt", Usage: "gene-set library (GMT, may be gzip'd); repeat for several"},
			&cli.StringFlag{Name: "background", Value: d.Background, Usage: `"kept" (the run's genes) or a file of gene symbols, one per line`},
			&cli.StringFlag{Name: "organism", Value: d.Organism, Usage: "auto, human or mouse (mouse symbols are matched case-insensitively, an approximation of orthology)"},
			&cli.StringFlag{Name: "hierarchy", Value: string(hierarchy.Default), Usage: "how programs of neighbouring L are linked: fixed-codes (the paper's OrMachine with the larger L's programs as fixed codes) or overlap (at least half of one's genes in the other)"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing output folder"},
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
			o := enrich.DefaultOptions()
			o.Run, o.Out, o.Force, o.Log = run, c.String("output"), c.Bool("force"), env.log
			o.Threshold, o.Libraries = c.Float64("threshold"), c.StringSlice("gmt")
			o.Top, o.FDR = c.Int("top"), c.Float64("fdr")
			o.Background, o.Organism = c.String("background"), c.String("organism")
			if o.Hierarchy, err = enrich.ParseHierarchyMethod(c.String("hierarchy")); err != nil {
				return fmt.Errorf("enrich: --hierarchy: %w", err)
			}
			o.Linker = hierarchy.Linker(hierarchy.DefaultOptions())
			if c.IsSet("L") {
				if o.Ls, err = pipeline.ParseLSpec(c.String("L")); err != nil {
					return err
				}
			}
			rep, err := enrich.Run(c.Context, o)
			if err != nil {
				return err
			}
			env.log.Info("enrich complete", "output", rep.Out, "index", filepath.Join(rep.Out, enrich.IndexFile))
			return nil
		},
	}
}
