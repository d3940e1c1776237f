package enrich

import (
	"fmt"
	"math"
	"math/bits"
	"path/filepath"
	"slices"

	"scpipe/internal/rundir"
	"scpipe/internal/stats/codematch"
)

// Status says whether a code is a gene program.
type Status string

// The statuses of a code.
const (
	// StatusProgram: some cell uses the code and it has genes.
	StatusProgram Status = "program"
	// StatusUnused: no cell uses the code. Its genes' posterior means stay
	// at the prior, so its MAP set is no program.
	StatusUnused Status = "unused"
	// StatusEmpty: cells use the code but no gene reaches the threshold.
	StatusEmpty Status = "empty"
)

// Program is one code of one L: its consensus over the chains of the run.
// With one chain the consensus is the chain's code itself.
type Program struct {
	L, Code int // the code's number in the first chain's fit (its code_<Code> columns)
	Status  Status
	// Genes is the consensus gene set: the genes in the matched code of at
	// least half of the chains. Mean and Support run parallel to it: the
	// posterior mean of u averaged over the chains, and the fraction of
	// chains whose code holds the gene.
	Genes         []int
	Mean, Support []float64
	Unique        []int // the genes of Genes in no other program of this L
	// Cells counts the cells that use the code in at least half of the
	// chains; CellFrac is their fraction of all cells.
	Cells    int
	CellFrac float64
	// Stability is the mean Jaccard index between the first chain's gene
	// set and those of the codes matched to it in the other chains; NaN
	// with one chain, and for a code that is no program.
	Stability float64
	// Frequency is, for a program of an L's consensus of chains (Level's
	// Consensus), the fraction of the consensus's chains that found it;
	// NaN otherwise. Its Stability is then the mean Jaccard index between
	// its gene set and those of the codes of the chains that found it.
	Frequency float64
	Chains    []ChainCode // the code in each chain, the first chain first
	// Top is the program's leading genes by score (Options.Top of them;
	// rankGenes), any gene of the run, the housekeeping code's included:
	// the list to read and to test, as cNMF users read a program's top
	// genes by its gene_spectra_score.
	Top []Ranked
	// FDRGenes is the largest set of genes whose expected false discovery
	// proportion is at most Options.FDR (fdrSet), in Top's order, and
	// FDRRate that proportion.
	FDRGenes []int
	FDRRate  float64
}

// Name is the program's name in the outputs: L06_code3.
func (p *Program) Name() string { return programName(p.L, p.Code) }

// Stable reports whether every chain found the program: its code in each
// other chain has a Jaccard index of at least codematch.StableJaccard with
// the first chain's. At the default threshold these are the programs
// summary.tsv names in stable_codes (codematch.StablePrograms on the same
// sets). False with one chain, where stability is not measured.
func (p *Program) Stable() bool {
	if p.Status == StatusProgram && p.Frequency > 0.5 {
		return true // a program of a consensus, found by most of its chains
	}
	if p.Status != StatusProgram || len(p.Chains) < 2 {
		return false
	}
	for _, c := range p.Chains[1:] {
		if !(c.Jaccard >= codematch.StableJaccard) {
			return false
		}
	}
	return true
}

func programName(L, code int) string { return fmt.Sprintf("L%02d_code%d", L, code) }

// ChainCode is the code of one chain matched to a program.
type ChainCode struct {
	Chain, Code int
	Jaccard     float64 // with the first chain's code (1 for the first chain)
	// Genes is the size of the chain's MAP set (posterior mean of u at or
	// above the threshold; not the genes of the housekeeping code), Unique the genes of that set in no other code
	// of the chain, Cells the cells whose posterior mean of z is at or
	// above the threshold. A code no cell uses has no genes.
	Genes, Unique, Cells int
}

// Level is every program of one L.
type Level struct {
	L        int
	Chains   []int // the finished chains, ascending; {0} for a consensus
	Cells    int
	Programs []Program // by code number
	// Consensus is the number of chains of the L's consensus
	// (RUN/Lnn/consensus, chain 0), whose fit stands for the L's chains
	// where it exists; 0 without one.
	Consensus int
}

// setConsensus gives the programs of a level read from the consensus fit
// f (chain 0) their frequencies and agreement from its programs.tsv: the
// kept programs, first in the table, are the fit's first codes.
func (lv *Level) setConsensus(f rundir.Fit) error {
	rows, err := rundir.ReadConsensus(filepath.Join(f.Dir, rundir.ConsensusFile))
	if err != nil {
		return fmt.Errorf("enrich: %w", err)
	}
	for i := range lv.Programs {
		lv.Programs[i].Frequency = math.NaN()
	}
	for k, r := range rows {
		if !r.Kept {
			break
		}
		if k >= len(lv.Programs) {
			return fmt.Errorf("enrich: %s: %d kept programs for a fit of L = %d", filepath.Join(f.Dir, rundir.ConsensusFile), k+1, lv.L)
		}
		p := &lv.Programs[k]
		lv.Consensus = r.Chains
		p.Frequency = r.Frequency
		if p.Status == StatusProgram {
			p.Stability = r.Agreement
		}
	}
	return nil
}

// chainFit is one fit read from the run, reduced to sets.
type chainFit struct {
	chain int
	mean  []float64       // genes × L posterior means of u
	score []float64       // genes × L scores (codes.parquet's score_k); nil in runs without them
	hk    []bool          // the genes of the housekeeping code; nil without one
	genes []codematch.Set // MAP gene set of each code; empty for unused codes
	cells []codematch.Set // cells using each code
	nCell int
}

// readChain reads one fit, shows its tables to visit (when not nil) and
// thresholds them. The gene axis must be genes.
func readChain(f rundir.Fit, genes Genes, threshold float64, visit func(rundir.Fit, *rundir.Codes, *rundir.Cells) error) (*chainFit, error) {
	codesPath := filepath.Join(f.Dir, rundir.CodesFile)
	codes, err := rundir.ReadCodes(codesPath)
	if err != nil {
		return nil, err
	}
	if codes.L != f.L {
		return nil, fmt.Errorf("enrich: %s: %d codes in a fit of L = %d", codesPath, codes.L, f.L)
	}
	if !slices.Equal(codes.GeneIDs, genes.IDs) {
		return nil, fmt.Errorf("enrich: %s: its genes differ from those of the run's other fits", codesPath)
	}
	cellsPath := filepath.Join(f.Dir, rundir.CellsFile)
	cells, err := rundir.ReadCellMeans(cellsPath) // the barcodes are not needed
	if err != nil {
		return nil, err
	}
	if cells.L != f.L {
		return nil, fmt.Errorf("enrich: %s: %d codes in a fit of L = %d", cellsPath, cells.L, f.L)
	}
	if visit != nil {
		if err := visit(f, &codes, &cells); err != nil {
			return nil, err
		}
	}
	L, N, D := f.L, cells.Len(), genes.Len()
	c := &chainFit{chain: f.Chain, mean: codes.Mean, score: codes.Score, nCell: N,
		genes: make([]codematch.Set, L), cells: make([]codematch.Set, L)}
	if codes.Housekeeping != nil {
		c.hk = make([]bool, D)
		for g := range D {
			c.hk[g] = housekeeping(codes, g, threshold)
		}
	}
	for k := range L {
		c.genes[k], c.cells[k] = codematch.NewSet(D), codematch.NewSet(N)
	}
	for n := range N {
		for k, z := range cells.Mean[n*L : (n+1)*L] {
			if z >= threshold {
				c.cells[k].Add(n)
			}
		}
	}
	for k := range L {
		if c.cells[k].Len() == 0 {
			continue // no cell: the code's genes say nothing
		}
		for g := range D {
			if codes.Mean[g*L+k] >= threshold && !housekeeping(codes, g, threshold) {
				c.genes[k].Add(g)
			}
		}
	}
	return c, nil
}

// housekeeping tells whether gene g belongs to the fit's housekeeping
// code (posterior mean at or above the threshold). Such a gene belongs to
// no program: the housekeeping code covers every one of its entries, so
// no other code's bit for it changes the likelihood, and its posterior
// mean there is the prior's (½ under the uniform prior, where a ≥ ½ set
// would take every housekeeping gene into every code).
func housekeeping(codes rundir.Codes, g int, threshold float64) bool {
	return codes.Housekeeping != nil && codes.Housekeeping[g] >= threshold
}

// uniqueOf returns, for each set, its elements in no other set.
func uniqueOf(sets []codematch.Set) []codematch.Set {
	out := make([]codematch.Set, len(sets))
	for k, s := range sets {
		u := slices.Clone(s)
		for j, o := range sets {
			if j != k {
				for w := range u {
					u[w] &^= o[w]
				}
			}
		}
		out[k] = u
	}
	return out
}

// consensus builds the programs of one L from its chains, the first chain
// the reference whose codes the others are matched to (Hungarian matching
// of the MAP gene sets, codematch.Match), each program with its top genes
// and its gene set at the false discovery rate of so.
func consensus(L int, chains []*chainFit, genes Genes, so setOptions) *Level {
	ref := chains[0]
	lv := &Level{L: L, Cells: ref.nCell, Programs: make([]Program, L)}
	// match[c][k]: the code of chain c matched to code k of the reference.
	match := make([][]int, len(chains))
	jac := make([][]float64, len(chains))
	for c, ch := range chains {
		lv.Chains = append(lv.Chains, ch.chain)
		match[c], jac[c] = make([]int, L), make([]float64, L)
		m := codematch.Match(ref.genes, ch.genes)
		for k, to := range m.To {
			match[c][to], jac[c][to] = k, m.Agreement[k]
		}
	}
	C := len(chains)
	unique := make([][]codematch.Set, C)
	for c, ch := range chains {
		unique[c] = uniqueOf(ch.genes)
	}
	for k := range L {
		p := &lv.Programs[k]
		p.L, p.Code, p.Stability, p.Frequency = L, k+1, math.NaN(), math.NaN()
		for c, ch := range chains {
			code := match[c][k]
			p.Chains = append(p.Chains, ChainCode{Chain: ch.chain, Code: code + 1, Jaccard: jac[c][k],
				Genes: ch.genes[code].Len(), Unique: unique[c][code].Len(), Cells: ch.cells[code].Len()})
		}
		if C > 1 {
			s := 0.0
			for c := 1; c < C; c++ {
				s += jac[c][k]
			}
			p.Stability = s / float64(C-1)
		}
		voters := make([]codematch.Set, C)
		for c, ch := range chains {
			voters[c] = ch.cells[match[c][k]]
		}
		p.Cells = countVotes(voters)
		p.CellFrac = float64(p.Cells) / float64(max(ref.nCell, 1))
		for g := range genes.Len() {
			votes, sum := 0, 0.0
			for c, ch := range chains {
				code := match[c][k]
				sum += ch.mean[g*L+code]
				if ch.genes[code].Has(g) {
					votes++
				}
			}
			if 2*votes >= C && votes > 0 {
				p.Genes = append(p.Genes, g)
				p.Mean = append(p.Mean, sum/float64(C))
				p.Support = append(p.Support, float64(votes)/float64(C))
			}
		}
		switch {
		case p.Cells == 0:
			p.Status, p.Genes, p.Mean, p.Support = StatusUnused, nil, nil, nil
		case len(p.Genes) == 0:
			p.Status = StatusEmpty
		default:
			p.Status = StatusProgram
		}
		if p.Status != StatusProgram {
			p.Stability = math.NaN() // empty sets agree trivially; that is no stability
			continue
		}
		ranks := RankGenes(consensusColumn(chains, match, k, func(c *chainFit) []float64 { return c.score }),
			consensusColumn(chains, match, k, func(c *chainFit) []float64 { return c.mean }),
			consensusHousekeeping(chains), genes.Symbols)
		p.FDRGenes, p.FDRRate = fdrSet(ranks, so.fdr)
		p.Top = ranks[:min(so.top, len(ranks))]
	}
	lv.setUnique(genes.Len())
	return lv
}

// setOptions say how large a program's top list is and at which false
// discovery rate its gene set is taken.
type setOptions struct {
	top int
	fdr float64
}

// consensusColumn averages, gene by gene, the column of each chain's
// matrix (col) matched to code k of the reference; nil when a chain has no
// such matrix.
func consensusColumn(chains []*chainFit, match [][]int, k int, col func(*chainFit) []float64) []float64 {
	L := len(match[0])
	var out []float64
	for c, ch := range chains {
		m := col(ch)
		if m == nil {
			return nil
		}
		if out == nil {
			out = make([]float64, len(m)/L)
		}
		for g := range out {
			out[g] += m[g*L+match[c][k]]
		}
	}
	for g := range out {
		out[g] /= float64(len(chains))
	}
	return out
}

// consensusHousekeeping returns the genes of the housekeeping code in at
// least half of the chains; nil without one.
func consensusHousekeeping(chains []*chainFit) []bool {
	if chains[0].hk == nil {
		return nil
	}
	votes := make([]int, len(chains[0].hk))
	for _, ch := range chains {
		for g, in := range ch.hk {
			if in {
				votes[g]++
			}
		}
	}
	hk := make([]bool, len(votes))
	for g, v := range votes {
		hk[g] = 2*v >= len(chains) && v > 0
	}
	return hk
}

// countVotes counts the elements in at least half of the sets (and in at
// least one), a word of 64 elements at a time: only the elements of some
// but not every set are counted one by one, and with one or two sets none
// is.
func countVotes(sets []codematch.Set) int {
	C := len(sets)
	count := 0
	for w := range sets[0] {
		var some, every uint64 = 0, ^uint64(0)
		for _, s := range sets {
			some |= s[w]
			every &= s[w]
		}
		if C <= 2 { // one of two sets is half of them
			count += bits.OnesCount64(some)
			continue
		}
		count += bits.OnesCount64(every)
		for rest := some &^ every; rest != 0; rest &= rest - 1 {
			bit := rest & -rest
			votes := 0
			for _, s := range sets {
				if s[w]&bit != 0 {
					votes++
				}
			}
			if 2*votes >= C {
				count++
			}
		}
	}
	return count
}

// setUnique fills each program's unique genes: those in no other program
// of the level.
func (lv *Level) setUnique(D int) {
	count := make([]int, D)
	for _, p := range lv.Programs {
		for _, g := range p.Genes {
			count[g]++
		}
	}
	for i := range lv.Programs {
		p := &lv.Programs[i]
		p.Unique = nil
		for _, g := range p.Genes {
			if count[g] == 1 {
				p.Unique = append(p.Unique, g)
			}
		}
	}
}

// set returns the program's genes as a set over D genes.
func (p *Program) set(D int) codematch.Set {
	s := codematch.NewSet(D)
	for _, g := range p.Genes {
		s.Add(g)
	}
	return s
}
