// Package rundir reads and writes the run directory of scpipe fit: the one
// place where the on-disk contract of a run lives, so that the command that
// writes a run (pipeline) and the commands that read it later (enrich,
// resume) cannot drift apart.
//
// A run directory looks like this (README.md in this folder is the full
// specification, written so that a reader in another language needs nothing
// else):
//
//	RUN/config.toml                 resolved configuration
//	RUN/shards.json                 the shards fitted: path, shape, fingerprint
//	RUN/summary.tsv                 one row per (L, chain)
//	RUN/selection.svg               held-out scores with error bars, gap to the best L, stability vs L
//	RUN/L05/chain1/codes.parquet    one row per gene: gene_id, gene_name, code_1 … code_L
//	RUN/L05/chain1/cells.parquet    one row per cell: barcode, code_1 … code_L
//	RUN/L05/chain1/trace.parquet    one row per sweep
//	RUN/L05/chain1/SHA256SUMS       the SHA-256 of each table, verified before it is read
//	RUN/L05/chain1/state.ckpt       checkpoint of the sampler
//	RUN/L05/params.bin              with share_params: the parameters every chain of L = 5 holds
//
// Every file is committed like a database row: written to a temporary file
// in the same folder, synced, closed, renamed over the final name and the
// folder synced (WriteFileAtomic). A reader therefore sees either the old
// file or the new one, never a torn one, even after SIGKILL or power loss.
//
// Parquet tables are written with Apache Arrow's pqarrow in record batches
// of batchRows rows, Snappy-compressed under a REQUIRED schema root, with
// plain column types (UTF-8 strings, float64, int64) that pandas, polars,
// R arrow, DuckDB and hyparquet open directly. Matrices are passed in and out as plain row-major slices:
//
//	err := rundir.WriteCodes(filepath.Join(rundir.FitDir(run, 5, 1), rundir.CodesFile), rundir.Codes{
//		GeneIDs: ids, GeneNames: names, L: 5, Mean: u, // len(u) == len(ids)*5
//	})
//
// The package knows nothing of the sampler: checkpoints carry its state as
// an opaque payload behind a small header and a CRC-32C.
package rundir
