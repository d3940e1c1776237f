// Package enrich turns a finished run of scpipe fit into biology: the gene
// program of each code, its genes unique to it, its consensus across chains
// and stability, the hierarchy of programs across L, and offline gene-set
// enrichment against GMT libraries (HPC nodes have no internet, so no
// Enrichr server). It reads the run only through package rundir and never
// imports the sampler.
//
// Run does it all and writes an output folder (README.md in this folder
// specifies its files):
//
//	o := enrich.DefaultOptions()
//	o.Run, o.Out = "run", "run-enrich"
//	o.Libraries = []string{"GO_Biological_Process_2022_human.gmt.gz"}
//	rep, err := enrich.Run(ctx, o)
//
// Its parts are usable alone. ReadGMTFile parses a GMT library in the
// dialects Enrichr and MSigDB write. A Universe is the background of the
// tests (symbols compared case-insensitively); Universe.Restrict drops a
// library's genes outside it, and Collection.Test tests a query against
// every set: the one-sided hypergeometric p-value (LogHypergeomSF, summed in
// log space so that p-values far below 1e-300 stay exact), the
// Benjamini–Hochberg adjustment (AdjustBH, also in logs), and gseapy's odds
// ratio and combined score (OddsRatio, CombinedScore).
//
// A code's consensus across chains matches every chain's codes to the first
// chain's (codematch.Match) and keeps the genes and cells of at least half
// of the matched codes; BuildHierarchy links the programs of neighbouring L
// where one mostly lies in the other and names the splits, merges and new
// programs, and BuildHierarchyFixedCodes links them as the OrMachine paper
// does, by the posterior of an OrMachine whose data are the programs of one
// L and whose fixed codes are those of the next, run by a Linker the caller
// supplies (hierarchy.Linker), since this package never imports
// the sampler.
package enrich
