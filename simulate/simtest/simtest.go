// Package simtest builds the planted data that the tests of several
// packages fit: a simulation written as shards. It is imported by tests
// only.
package simtest

import (
	"context"
	"path/filepath"
	"testing"

	"scpipe/shard"
	"scpipe/simulate"
)

// Shards simulates p and writes it as shards in a folder of t's own; it
// returns the shards' folder (the truth lies beside it, in
// simulate.TruthDir) and the truth.
func Shards(t testing.TB, p simulate.Params) (string, *simulate.Truth) {
	t.Helper()
	tr, err := simulate.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "sim")
	if err := simulate.WriteShards(context.Background(), dir, tr, shard.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, simulate.ShardsDir), tr
}

// Open is Shards, opened; the shards are closed when t ends.
func Open(t testing.TB, p simulate.Params) (*shard.Shard, *simulate.Truth) {
	t.Helper()
	dir, tr := Shards(t, p)
	src, err := shard.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src, tr
}
