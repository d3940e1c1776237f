// Package simulate draws binary single-cell-like data with a planted truth,
// from one of three generative models (Params.Kind).
//
// Both plant L gene programs U and their usage Z; the noise-free expression
// of cell n is the Boolean product c_n = OR_l (z_nl AND u_l).
//
// The OrMachine kind is the paper's model. Each gene joins a program with
// probability CodeDensity and every cell uses each program with probability
// UsageDensity. A noise-free 1 is lost with probability FlipOff (dropout) and
// a noise-free 0 appears with probability FlipOn (background); symmetric flip
// noise, as in the paper's simulations, is FlipOn = FlipOff. Observed ones
// get counts 1 + Geometric(½) in the MTX only so that the files look like
// UMI counts.
//
// The SingleCell kind adds what real single-cell data do, and what a fixed
// flip rate misses: detection depends on the cell and the gene. Cell n has
// a size factor s_n = exp(σ_s·ξ_n), lognormal with median 1 (its depth);
// gene d a baseline rate μ_d, lognormal around BaselineMedian (median 0.01,
// σ 1 by default) or, for a few housekeeping genes, around
// HousekeepingMedian (2% of genes, median 3); and every gene a program lift
// ν_d, lognormal around LiftMedian (0.7, σ 0.5). The UMI count of an entry is
// Poisson(s_n·(μ_d + ν_d·c_nd)), so
//
//	P(x_nd = 1) = 1 − exp(−s_n·(μ_d + ν_d·c_nd)):
//
// dropout of a program gene falls with the cell's depth and the gene's lift,
// and background rises with depth and baseline. Programs have distinct sizes
// (ProgramSizeMax down to ProgramSizeMin of the genes, geometrically) and
// avoid the housekeeping genes; each cell uses ProgramsPerCellMin to
// ProgramsPerCellMax programs (1–3). The defaults (DefaultSingleCell) give
// about 6% ones at the demo's size, program genes detected in about a third
// of the shallowest quarter of the cells using them and 70% of the deepest,
// and housekeeping genes detected in more than 80% of all cells, as in
// binarised 10x PBMC and brain data. The MTX holds the model's Poisson
// counts, and the truth adds each gene's rates and each cell's size factor.
//
// Params.ActivityPrograms adds programs beyond the L identity programs to
// the OrMachine and SingleCell kinds, as cNMF's simulation has activity
// programs beside its cell types: each cell, whatever identity programs it
// uses, uses each one with probability ActivityFraction (an interferon or
// stress response shared by cells of every type). With the single-cell
// kind's ProgramsPerCellMax = 1 the identity programs are cell types. They
// are drawn after everything else, so a simulation without them is the
// one drawn before they existed.
//
// The Digits kind is the paper's calculator digits (Fig. calc): image n
// shows the digit n mod 10 as the lit segments of a seven-segment display on
// a 10 × 17 pixel grid, each grid cell Scale × Scale pixels (Scale 10 with
// 100 images is the paper's high-resolution set, N·D = 1.7e6). The seven
// segments are disjoint pixel sets, the planted codes (L = 7), and each
// image uses its digit's segments; flip noise and missing pixels are the
// OrMachine kind's. Genes are pixels named "r<row>c<col>", cells
// "digit<d>-<n+1>", so that images can be drawn again from any fit.
//
// Every cell row is drawn from its own random stream keyed by (Seed, cell), so
// a dataset is the same whatever the order or parallelism of generation
// (Truth.Workers), and rows can be generated on demand without holding the
// matrix in memory: that is what lets [WriteShards] produce a
// 1.3-million-cell dataset in bounded memory. A row costs O(D/64 + ones)
// rather than O(D) random draws: OrMachine flips are placed by geometric
// skipping, and single-cell background by geometric skipping at the largest
// rate of a group of genes whose baselines lie within a factor of two,
// thinned to each gene's own rate.
//
//	t, err := simulate.New(ctx, simulate.DefaultParams())             // or DefaultSingleCellParams(), DefaultDigitsParams()
//	err = simulate.WriteMTX(ctx, "sim", t, false)                      // 10x v3 folder + truth
//	err = simulate.WriteShards(ctx, "shards", t, shard.CreateOptions{}) // shards + truth
package simulate
