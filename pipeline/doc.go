// Package pipeline wires scpipe's stages together for the commands: it opens
// shards, runs the sampler and writes run directories (fit, its summary and
// the hierarchy of programs by fixed codes), and holds scpipe info, with
// their default configuration, so that cmd/scpipe only parses flags.
package pipeline
