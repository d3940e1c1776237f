package rundir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConsensusTablesStamped checks that the tables of an L's consensus
// (RUN/Lnn/consensus and its chains) record their run, L and folder like
// a chain's: one copied from another run, or from a chain's folder, is
// refused with ErrOtherRun, saying where it came from; one written before
// consensus tables were stamped (no keys) is still read.
func TestConsensusTablesStamped(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	newRun := func(name, id string) string {
		run := filepath.Join(root, name)
		ident := ShardsIdentity{Path: "shards", Fingerprint: strings.Repeat("0123456789abcdef", 4), Cells: 1, Genes: 2, Run: id}
		for _, d := range []string{FitDir(run, 2, 1), ConsensusChainDir(run, 2, 3)} {
			if err := os.MkdirAll(d, 0o777); err != nil {
				t.Fatal(err)
			}
		}
		if err := WriteShardsIdentity(filepath.Join(run, ShardsFile), ident); err != nil {
			t.Fatal(err)
		}
		return run
	}
	codes := Codes{GeneIDs: []string{"g1", "g2"}, GeneNames: []string{"A", "B"}, L: 2, Mean: []float64{1, 0, 0, 1}}
	write := func(dir string) {
		t.Helper()
		if err := WriteCodes(filepath.Join(dir, CodesFile), codes); err != nil {
			t.Fatal(err)
		}
	}
	// move copies dir's table and its checksums into to, as a user
	// copying a fit folder would.
	move := func(dir, to string) {
		t.Helper()
		for _, name := range []string{CodesFile, checksumsFile} {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(to, name), data, 0o666); err != nil {
				t.Fatal(err)
			}
		}
	}
	type runs struct{ a, b string }
	for i, tc := range []struct {
		name  string
		place func(r runs) string // writes the table, returns the folder it is read from
		want  string              // "" for a table that is read
	}{
		{"its own consensus", func(r runs) string { write(ConsensusDir(r.a, 2)); return ConsensusDir(r.a, 2) }, ""},
		{"its own consensus chain", func(r runs) string { write(ConsensusChainDir(r.a, 2, 3)); return ConsensusChainDir(r.a, 2, 3) }, ""},
		{"another run's consensus", func(r runs) string {
			write(ConsensusDir(r.a, 2))
			move(ConsensusDir(r.a, 2), ConsensusDir(r.b, 2))
			return ConsensusDir(r.b, 2)
		}, "records run run-a"},
		{"a chain's table in the consensus", func(r runs) string {
			write(FitDir(r.a, 2, 1))
			move(FitDir(r.a, 2, 1), ConsensusDir(r.a, 2))
			return ConsensusDir(r.a, 2)
		}, "written by the fit of L = 2, chain 1, and lies in the folder of the consensus of L = 2"},
		{"the consensus's table in a chain", func(r runs) string {
			write(ConsensusDir(r.a, 2))
			move(ConsensusDir(r.a, 2), FitDir(r.a, 2, 1))
			return FitDir(r.a, 2, 1)
		}, "written by the consensus of L = 2, and lies in the folder of the fit of L = 2, chain 1"},
		{"a consensus written before the stamps", func(r runs) string {
			outside := t.TempDir() // outside any run: no keys
			write(outside)
			move(outside, ConsensusDir(r.b, 2))
			return ConsensusDir(r.b, 2)
		}, ""},
	} {
		r := runs{newRun(fmt.Sprint(i, "a"), "run-a"), newRun(fmt.Sprint(i, "b"), "run-b")}
		_, err := ReadCodes(filepath.Join(tc.place(r), CodesFile))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (!errors.Is(err, ErrOtherRun) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want ErrOtherRun saying %q", tc.name, err, tc.want)
		}
	}
}
