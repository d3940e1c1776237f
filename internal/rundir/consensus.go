package rundir

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"scpipe/internal/infile"
)

// The consensus of an L (scpipe fit's consensus stage, config key
// consensus_chains) lives in RUN/Lnn/consensus: the chains run there
// besides the L's own (ConsensusChainDir, fits like any other), the
// programs that all its chains found (ConsensusFile), and a fit whose
// codes are the kept programs held fixed (codes.parquet, cells.parquet,
// trace.parquet as in a chain's folder, code k being the k-th kept
// program of ConsensusFile). Readers that list fits (Fits) do not see it.
const (
	ConsensusDirName = "consensus"
	// ConsensusFile (RUN/Lnn/consensus/programs.tsv) lists the programs of
	// the consensus, one row each, kept first: it is written last, so that
	// its presence means the consensus is complete.
	ConsensusFile = "programs.tsv"
)

// ConsensusDir returns the folder of the consensus of L: RUN/L05/consensus.
func ConsensusDir(run string, L int) string {
	return filepath.Join(filepath.Dir(FitDir(run, L, 1)), ConsensusDirName)
}

// ConsensusChainDir returns the folder of a chain that the consensus of L
// runs besides the L's own: RUN/L05/consensus/chain3.
func ConsensusChainDir(run string, L, chain int) string {
	return filepath.Join(ConsensusDir(run, L), "chain"+strconv.Itoa(chain))
}

// ConsensusProgram is one row of programs.tsv: a program of the consensus
// of the chains of one L (codematch.Cluster).
type ConsensusProgram struct {
	Program int  // 1-based; the kept ones are code_1 … code_K of the consensus fit
	Kept    bool // found by more than half of the chains
	// Found counts the chains that found it, of Chains; Frequency is their
	// ratio.
	Found, Chains int
	Frequency     float64
	// Repeat is the probability that as many chains again repeat the
	// decision to keep or drop it; ExpectedJaccard the expected Jaccard
	// index of its gene set with the one they would give it; Agreement the
	// mean Jaccard index of its chains' codes with its gene set.
	Repeat, ExpectedJaccard, Agreement float64
	Genes                              int // the size of its consensus gene set
	// Codes[c] is the 1-based code of chain c+1 in the program, 0 where
	// that chain did not find it.
	Codes []int
}

// maxConsensusChains bounds a consensus's chains as scpipe fit's
// configuration bounds them (pipeline.MaxChains), so that a damaged
// table cannot ask for a huge row.
const maxConsensusChains = 1000

var consensusHeader = []string{"program", "kept", "found", "chains", "frequency", "repeat",
	"expected_jaccard", "agreement", "genes", "chain_codes"}

// WriteConsensus writes programs.tsv atomically, its SHA-256 recorded
// beside the consensus fit's tables (WriteChecksummed): a header, then
// one row per program; chain_codes lists chain:code pairs of the chains
// that found it ("1:3,2:1,4:2").
func WriteConsensus(path string, rows []ConsensusProgram) error {
	return WriteChecksummed(path, func(w io.Writer) error {
		var b []byte
		b = append(b, strings.Join(consensusHeader, "\t")...)
		b = append(b, '\n')
		for _, r := range rows {
			kept := "no"
			if r.Kept {
				kept = "yes"
			}
			b = strconv.AppendInt(b, int64(r.Program), 10)
			b = append(b, '\t')
			b = append(b, kept...)
			for _, n := range []int{r.Found, r.Chains} {
				b = append(b, '\t')
				b = strconv.AppendInt(b, int64(n), 10)
			}
			for _, v := range []float64{r.Frequency, r.Repeat, r.ExpectedJaccard, r.Agreement} {
				b = append(b, '\t')
				b = appendFloat(b, v)
			}
			b = append(b, '\t')
			b = strconv.AppendInt(b, int64(r.Genes), 10)
			b = append(b, '\t')
			var pairs []string
			for c, k := range r.Codes {
				if k > 0 {
					pairs = append(pairs, fmt.Sprintf("%d:%d", c+1, k))
				}
			}
			b = append(b, strings.Join(pairs, ",")...)
			b = append(b, '\n')
		}
		_, err := w.Write(b)
		return err
	})
}

// ReadConsensus reads a programs.tsv file, checked against its folder's
// checksums (ReadChecksummed).
func ReadConsensus(path string) ([]ConsensusProgram, error) {
	data, err := ReadChecksummed(path)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	var rows []ConsensusProgram
	line := 0
	for sc.Scan() {
		line++
		fields := strings.Split(sc.Text(), "\t")
		if line == 1 {
			if strings.Join(fields, "\t") != strings.Join(consensusHeader, "\t") {
				return nil, fmt.Errorf("rundir: %s line 1: not a consensus table (want the header %s)", path, strings.Join(consensusHeader, " "))
			}
			continue
		}
		r, err := parseConsensusRow(fields)
		if err != nil {
			return nil, fmt.Errorf("rundir: %s line %d: %w", path, line, err)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("rundir: %s: %w", path, err)
	}
	if line == 0 {
		return nil, fmt.Errorf("rundir: %s is empty: not a consensus table", path)
	}
	return rows, nil
}

func parseConsensusRow(fields []string) (ConsensusProgram, error) {
	var r ConsensusProgram
	if len(fields) != len(consensusHeader) {
		return r, fmt.Errorf("%d fields, want %d", len(fields), len(consensusHeader))
	}
	ints := []*int{&r.Program, &r.Found, &r.Chains, &r.Genes}
	for i, k := range []int{0, 2, 3, 8} {
		n, err := strconv.Atoi(fields[k])
		if err != nil || n < 0 {
			return r, fmt.Errorf("%s %q is not a count", consensusHeader[k], fields[k])
		}
		*ints[i] = n
	}
	kept, err := yesNo(fields[1], false)
	if err != nil {
		return r, fmt.Errorf("kept: %w", err)
	}
	r.Kept = kept == "yes"
	for i, p := range []*float64{&r.Frequency, &r.Repeat, &r.ExpectedJaccard, &r.Agreement} {
		if *p, err = parseFloat(fields[4+i]); err != nil {
			return r, fmt.Errorf("%s %q is not a number", consensusHeader[4+i], fields[4+i])
		}
	}
	if r.Chains < 1 || r.Chains > maxConsensusChains || r.Found > r.Chains {
		return r, fmt.Errorf("found by %d of %d chains", r.Found, r.Chains)
	}
	r.Codes = make([]int, r.Chains)
	if fields[9] != "" {
		for _, pair := range strings.Split(fields[9], ",") {
			cs, ks, ok := strings.Cut(pair, ":")
			c, err1 := strconv.Atoi(cs)
			k, err2 := strconv.Atoi(ks)
			if !ok || err1 != nil || err2 != nil || c < 1 || c > r.Chains || k < 1 {
				return r, fmt.Errorf("chain_codes %q: want chain:code pairs, chains 1..%d", fields[9], r.Chains)
			}
			r.Codes[c-1] = k
		}
	}
	return r, nil
}

// ConsensusFit returns the consensus of L in run as a fit, numbered chain
// 0, and whether it is complete: its programs.tsv written (last) and, as
// for any fit, its tables. A consensus that kept no program has no fit.
func ConsensusFit(run string, L int) (Fit, bool, error) {
	dir := ConsensusDir(run, L)
	f := Fit{L: L, Chain: 0, Dir: dir}
	done := true
	for _, x := range []struct {
		name string
		has  *bool
	}{{CodesFile, &f.Codes}, {CellsFile, &f.Cells}, {TraceFile, &f.Trace}, {CheckpointFile, &f.Checkpoint}, {ConsensusFile, &done}} {
		err := infile.Check(filepath.Join(dir, x.name))
		*x.has = err == nil
		if err != nil && !os.IsNotExist(err) {
			return f, false, fmt.Errorf("rundir: consensus of L = %d: %w", L, err)
		}
	}
	return f, done && f.Complete(), nil
}
