// Package pipeline wires scpipe's stages together for the commands: it opens
// shards, runs the sampler and writes run directories, and holds the
// command-level operations (info, simulate, ingest, fit, evaluate) with their
// default configuration, so that cmd/scpipe only parses flags.
package pipeline
