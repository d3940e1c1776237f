// Package pipeline wires scpipe's stages together for the commands: it opens
// shards, runs the sampler and writes run directories (the fits, their
// summary and the hierarchy of programs by fixed codes), with their default
// configuration, so that cmd/scpipe only parses flags.
package pipeline
