// Package simulate draws binary single-cell-like data from the OrMachine's
// generative model with a planted truth.
//
// L gene programs are drawn as random gene sets U (each gene joins a program
// with probability CodeDensity) and every cell uses each program with
// probability UsageDensity (Z). The noise-free expression of cell n is the
// Boolean product x_n = OR_l (z_nl AND u_l). Noise is asymmetric, as in real
// single-cell data: a noise-free 1 is lost with probability FlipOff (dropout)
// and a noise-free 0 appears with probability FlipOn (background). Symmetric
// flip noise, as in the paper's simulations, is FlipOn = FlipOff.
//
// Every cell row is drawn from its own random stream keyed by (Seed, cell), so
// a dataset is the same whatever the order or parallelism of generation, and
// rows can be generated on demand without holding the matrix in memory: that
// is what lets [WriteShards] produce a 1.3-million-cell dataset in bounded
// memory. Flips are placed by geometric skipping, so a row costs O(D/64 +
// flips) rather than O(D) random draws.
//
//	t := simulate.New(simulate.DefaultParams())
//	err := simulate.WriteMTX(ctx, "sim", t, false)    // 10x v3 folder + truth
//	err = simulate.WriteShards(ctx, "shards", t, shard.CreateOptions{})
package simulate
