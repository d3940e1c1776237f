package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestConsensusRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, ConsensusFile)
	rows := []ConsensusProgram{
		{Program: 1, Kept: true, Found: 3, Chains: 3, Frequency: 1, Repeat: 1, ExpectedJaccard: 0.975, Agreement: 0.96, Genes: 41, Codes: []int{1, 3, 2}},
		{Program: 2, Kept: false, Found: 1, Chains: 3, Frequency: 1.0 / 3, Repeat: 0.7407407407407407, ExpectedJaccard: 1, Agreement: 1, Genes: 2, Codes: []int{0, 0, 5}},
	}
	if err := WriteConsensus(path, rows); err != nil {
		t.Fatal(err)
	}
	got, err := ReadConsensus(path)
	if err != nil || !reflect.DeepEqual(got, rows) {
		t.Fatalf("read back %+v (%v), want %+v", got, err, rows)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "\t1:1,2:3,3:2\n") {
		t.Errorf("chain_codes not as chain:code pairs:\n%s", b)
	}
	// A changed byte is refused by the checksum.
	b[len(b)-3] ^= 0x01
	if err := os.WriteFile(path, b, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadConsensus(path); err == nil || !strings.Contains(err.Error(), path) || !errors.Is(err, errDamaged) {
		t.Errorf("a changed byte: %v, want errDamaged naming %s", err, path)
	}
	// Tables of no recorded checksum (as an older run's) are parsed alone.
	dir = t.TempDir()
	for _, tc := range []struct{ name, text, want string }{
		{"empty", "", "is empty"},
		{"another table", "L\tchain\n", "line 1: not a consensus table"},
		{"short row", strings.Join(consensusHeader, "\t") + "\n1\tyes\n", "line 2: 2 fields"},
		{"found by more than all", strings.Join(consensusHeader, "\t") + "\n1\tyes\t4\t3\t1\t1\t1\t1\t5\t1:1\n", "line 2: found by 4 of 3"},
		{"a chain past the last", strings.Join(consensusHeader, "\t") + "\n1\tyes\t3\t3\t1\t1\t1\t1\t5\t4:1\n", "line 2: chain_codes"},
		{"kept neither yes nor no", strings.Join(consensusHeader, "\t") + "\n1\tmaybe\t3\t3\t1\t1\t1\t1\t5\t1:1\n", "line 2: kept"},
	} {
		p := filepath.Join(dir, tc.name+".tsv")
		if err := os.WriteFile(p, []byte(tc.text), 0o666); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadConsensus(p); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %s and saying %q", tc.name, err, p, tc.want)
		}
	}
}
