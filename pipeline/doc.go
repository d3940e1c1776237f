// Package pipeline wires scpipe's stages together for the commands: it opens
// shards, runs the sampler and writes run directories (the fits, then their
// summary by package runsummary), with their default configuration, so that
// cmd/scpipe only parses flags.
package pipeline
