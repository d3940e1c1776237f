// Package codematch compares the codes (gene programs) of different fits:
// chains of the same L, whose codes come out in arbitrary order (label
// switching), and fits of neighbouring L, whose codes split and merge.
//
// A code is compared by its MAP gene set: the genes whose posterior mean
// u exceeds 1/2 (MAPSets), held as a bitset. Two codes agree by the Jaccard
// index of their sets, |A∩B| / |A∪B|. Jaccard rather than the raw
// intersection, because the intersection rewards a large code for
// overlapping everything; and sets rather than a correlation of posterior
// means, because the sets are what users read and send to enrichment tools,
// and a correlation over ten thousand genes is dominated by the many genes
// that are off in both codes.
//
// Match pairs the codes of one fit with those of another one-to-one so that
// the total Jaccard agreement is largest, by the Hungarian algorithm
// (hungarian, an O(n²m) Kuhn–Munkres with potentials that also takes
// rectangular costs). ChainAgreement summarises a set of chains by the
// mean matched agreement of each with the first. Parents links each code of
// a finer fit (larger L) to the code of a coarser fit that contains most of
// its genes: the edges of the hierarchy of codes across L.
//
// StablePrograms names the programs every chain of one L found (matched to
// the first chain's at Jaccard ≥ StableJaccard), apart from those only
// some chains found; ProgramSets reads a fit's codes as the gene sets of
// its programs, as scpipe enrich lists them.
//
// RankRHat is the rank-normalised split-R̂ of Vehtari et al. (2021) of a
// scalar trace of several chains, such as their log-likelihood: whether
// the chains sample one distribution. WithinRHat ranks each chain on its
// own: whether each has settled. Both count draws equal to Precision as
// ties, so that chains held at one value converge and chains held at
// different values do not.
//
//	a := codematch.MAPSets(codesChain1.Mean, L)
//	b := codematch.MAPSets(codesChain2.Mean, L)
//	m := codematch.Match(a, b) // m.To[k]: code of chain 1 matched to code k of chain 2
//	fmt.Println(m.Mean())      // 1 when both chains found the same gene sets
package codematch
