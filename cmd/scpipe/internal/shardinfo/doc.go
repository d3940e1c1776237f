// Package shardinfo is scpipe info: what a shard folder holds (cells,
// genes, ones and density, what the gene filters kept, the source, the
// size on disk), as a table or JSON, after checking every checksum when
// asked. Given a path that is not a shard folder (a count matrix, an MTX
// folder, a run directory), it says what the path looks like and which
// command reads it.
//
//	err := shardinfo.Print(ctx, os.Stdout, "shards", shardinfo.Options{Verify: true, Threads: 8})
package shardinfo
