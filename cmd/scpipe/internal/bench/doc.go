// Package bench measures how fast the OrMachine's sampler sweeps
// memory-mapped shards, and how that compares with the floor set by
// memory bandwidth: the work behind `scpipe bench`.
//
// # Inputs
//
// Datasets are generated, never downloaded: planted single-cell-like data
// (plantedParams: ten programs of 3% of the genes, 20% dropout, background
// ones, usage solved so that the expected fraction of ones is the paper's 7%)
// written by simulate.WriteShards in bounded memory. Each dataset is cached in
// a folder of Options.Work named by its size, density, seed and the planted
// model's version, so repeated runs skip the minutes of generating the 3.6 GB
// of the paper's 1.3M × 11k cells × genes. Sizes are shapes or entry counts
// laid out at the paper's 11,000 genes (ParseSizes, shapeFor).
//
// # Measurements
//
// For every size and latent size L, Run builds a gibbs.Sampler over the
// shards as a fit does (data-seeded codes, one start, Options.Workers
// workers, the fit's default prior (auto: uniform under dropout noise) unless Options.Prior says
// otherwise), runs Options.Warmup untimed sweeps so that the chain leaves its
// starting point (a collapsed state sweeps faster than a real fit), and then
// records:
//
//   - seconds per sweep over Options.Sweeps timed sample-phase sweeps
//     (median and range) and entries per second, total and per core;
//   - the stream-once time: a parallel popcount over every word of X and Xᵀ
//     (Stream), the least any sweep over the same bytes can cost, timed in
//     the same run with a warm page cache, and the ratio sweep/stream; the
//     same pass in the sampler's row order (RowOrder) shows what the access
//     pattern alone costs;
//   - memory: the peak anonymous resident memory (RssAnon, polled from
//     /proc/self/status every 10 ms and at the end of every sweep) next to
//     the sampler's O((cells + genes)·L) state (StateBytes), and VmHWM, which
//     also counts the mapped shards' page cache;
//   - conditions: CPU utilisation over the timed sweeps (CPU time / wall
//     time / workers) and the load average, which reveal other processes
//     sharing the cores.
//
// An optional CPU profile covers the measurements only, labelled by phase
// (setup, warmup, stream, timed), size and L, so that
// `go tool pprof -tagfocus phase=timed` shows the timed sweeps alone.
//
// # The whole analysis
//
// RunE2E times what a user runs rather than the sweeps alone: a CellRanger v2
// HDF5 file of a given size (ingest.GenerateTenXV2, cached in the work
// folder), scpipe ingest with its defaults, and scpipe fit with a given
// configuration (configs/mouse-brain-1.3m.toml: L = 2..10, two chains, 125
// sweeps), reporting the total and its phases from pipeline.FitTimings, so
// that the time not spent sweeping shows.
//
// # Use
//
//	o := bench.DefaultOptions()
//	o.Sizes, _ = bench.ParseSizes("1e8,1e9,1.4e10")
//	rep, err := bench.Run(ctx, o)
//	if err != nil { … }
//	rep.WriteTable(os.Stdout)
//
// Benchmarks measure; tests only check that the measurements are
// consistent. Timings are never asserted.
package bench
