package runsummary

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scpipe/internal/rundir"
)

func TestConvergedByConsensus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		converged  string
		rhat       float64
		reproduces bool
		want       string
	}{
		{"chains agree", "yes", 1.02, false, "yes"},
		{"chains differ, consensus reproduces", "no", 1.02, true, "yes"},
		{"chains differ, consensus does not reproduce", "no", 1.02, false, "no"},
		{"consensus reproduces, chains still drift", "no", 1.2, true, "no"},
		{"consensus reproduces, no R-hat", "no", math.NaN(), true, "no"},
		{"one chain and a reproducing consensus", "", 1.02, true, "yes"},
		{"one chain, no consensus", "", 1.02, false, ""},
	} {
		if got := ConvergedByConsensus(tc.converged, tc.rhat, tc.reproduces); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestConsensusReproduces reads a run's consensus tables as the summary
// does: none is no consensus, a damaged one an error naming it.
func TestConsensusReproduces(t *testing.T) {
	t.Parallel()
	run := t.TempDir()
	settled := []rundir.ConsensusProgram{
		{Program: 1, Kept: true, Found: 5, Chains: 5, Frequency: 1, Repeat: 1, ExpectedJaccard: 0.97, Agreement: 0.95, Genes: 40, Codes: []int{1, 2, 1, 3, 1}},
		{Program: 2, Kept: false, Found: 1, Chains: 5, Frequency: 0.2, Repeat: 0.942, ExpectedJaccard: 1, Agreement: 1, Genes: 3, Codes: []int{0, 0, 4, 0, 0}},
	}
	halfway := append([]rundir.ConsensusProgram{}, settled...)
	halfway[1].Found, halfway[1].Frequency, halfway[1].Repeat, halfway[1].Codes = 2, 0.4, 0.683, []int{0, 3, 4, 0, 0}
	for L, rows := range map[int][]rundir.ConsensusProgram{4: settled, 5: halfway} {
		if err := os.MkdirAll(rundir.ConsensusDir(run, L), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := rundir.WriteConsensus(filepath.Join(rundir.ConsensusDir(run, L), rundir.ConsensusFile), rows); err != nil {
			t.Fatal(err)
		}
	}
	for L, want := range map[int]bool{3: false, 4: true, 5: false} {
		if got, err := consensusReproduces(run, L); err != nil || got != want {
			t.Errorf("L = %d: reproduces %v (%v), want %v", L, got, err, want)
		}
	}
	bad := filepath.Join(rundir.ConsensusDir(run, 4), rundir.ConsensusFile)
	if err := os.WriteFile(bad, []byte("program\tkept\n1\tyes\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := consensusReproduces(run, 4); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a damaged table: %v, want an error naming %s", err, bad)
	}
}
