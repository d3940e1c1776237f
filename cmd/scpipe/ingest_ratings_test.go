package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/shard"
)

// TestIngestRatingsFlags runs ingest --format ratings from the command line:
// --threshold reaches the manifest, and a flag of count matrices is refused
// by name.
func TestIngestRatingsFlags(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ratings.dat")
	if err := os.WriteFile(data, []byte("1::10::5::1\n1::20::2::2\n2::10::4::3\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "shards")
	if err := run(t, "ingest", "--format", "ratings", data, "-o", out, "--threshold", "3.5", "--quiet"); err != nil {
		t.Fatal(err)
	}
	s, err := shard.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := s.Manifest()
	if m.Source.Format != "ratings-dat" || m.Filters.Threshold != 3.5 || m.Ratings.ThresholdFrom != "given" || m.Ratings.Count != 3 || m.Ones != 2 {
		t.Errorf("manifest: source %+v, threshold %v, ratings %+v, ones %d", m.Source, m.Filters.Threshold, m.Ratings, m.Ones)
	}
	for _, args := range [][]string{
		{"ingest", "--format", "ratings", data, "-o", filepath.Join(dir, "x"), "--min-cell-frac", "0.1"},
		{"ingest", "--format", "stars", data, "-o", filepath.Join(dir, "y")},
	} {
		err := run(t, args...)
		if err == nil || !strings.Contains(err.Error(), "--") {
			t.Errorf("scpipe %s: %v", strings.Join(args, " "), err)
		}
	}
}
