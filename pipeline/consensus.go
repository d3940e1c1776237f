package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"scpipe/gibbs"
	"scpipe/internal/rundir"
	"scpipe/internal/stats/codematch"
)

// The consensus stage (FitConfig.ConsensusChains) runs once the summary
// has recommended an L, there only: where the L's chains settle in
// different modes, their programs are no result to hand a user, so it runs
// chains more, from seeds derived as the L's own chains' are (chains
// Chains+1 … ConsensusChains, in RUN/Lnn/consensus/chainK), clusters the
// programs of all of them (codematch.Consensus), keeps those most chains
// found, and fits the run again with the kept programs as fixed codes (its
// L the number kept, its seed chainSeed(seed, kept, 0), a stream no
// chain's fit draws from), so that every cell's usage of them is inferred
// under one posterior: RUN/Lnn/consensus holds that fit's tables and
// programs.tsv, each program's frequency among the chains, written last.
// Every fit of the stage is a fit like the others (checkpointed, resumed,
// skipped when complete), and the consensus depends on the chains' tables
// alone, so a resumed run builds the same one. The summary then counts
// the L as converged where the consensus reproduces (codematch.Reproduces).

// consensusChains returns the chains of the consensus of a run of cfg,
// or 0 when it builds none: none is asked for, or the run fits layers
// (whose programs are those of several codes at once).
func consensusChains(cfg FitConfig) int {
	if cfg.ConsensusChains == 0 || len(cfg.Layers) > 0 {
		return 0
	}
	return max(cfg.ConsensusChains, cfg.Chains)
}

// consensus builds the consensus of L (see above) in the run's folder,
// unless the run builds none or it is complete.
func (r *openedRun) consensus(ctx context.Context, L int) error {
	K := consensusChains(r.cfg)
	if K == 0 || L == 0 {
		return nil
	}
	run, log := r.cfg.Output, r.o.Log
	dir := rundir.ConsensusDir(run, L)
	if _, err := os.Stat(filepath.Join(dir, rundir.ConsensusFile)); err == nil {
		log.Info("consensus already complete", "L", L, "path", dir)
		return nil
	}
	if err := mkdir(dir); err != nil {
		return err
	}
	start := time.Now()
	r.o.run = nil // the run's progress counts the (L, chain) fits alone
	for chain := r.cfg.Chains + 1; chain <= K; chain++ {
		log.Info("consensus: a further chain", "L", L, "chain", chain, "of", K)
		j := r.chainJob(L, chain)
		j.dir = rundir.ConsensusChainDir(run, L, chain)
		if _, err := r.fitJob(ctx, j); err != nil {
			return err
		}
	}
	chains := make([][]codematch.Set, K)
	for c := range K {
		fit := rundir.FitDir(run, L, c+1)
		if c >= r.cfg.Chains {
			fit = rundir.ConsensusChainDir(run, L, c+1)
		}
		sets, err := programSets(fit, L)
		if err != nil {
			return err
		}
		chains[c] = sets
	}
	clusters := codematch.Consensus(chains)
	rows := make([]rundir.ConsensusProgram, len(clusters))
	var fixed []gibbs.FixedCode
	for i, cl := range clusters {
		rows[i] = rundir.ConsensusProgram{Program: i + 1, Kept: cl.Kept, Found: cl.Found, Chains: K,
			Frequency: cl.Frequency, Repeat: cl.Repeat, ExpectedJaccard: cl.ExpectedJaccard, Agreement: cl.Agreement,
			Genes: cl.Genes.Len(), Codes: make([]int, K)}
		for c, k := range cl.Codes {
			rows[i].Codes[c] = k + 1 // -1, none, becomes 0
		}
		if cl.Kept {
			f := gibbs.FixedCode{Code: len(fixed)}
			for g := range r.src.Manifest().Genes {
				if cl.Genes.Has(g) {
					f.Genes = append(f.Genes, g)
				}
			}
			fixed = append(fixed, f)
		}
	}
	log.Info("consensus", "L", L, "chains", K, "programs", len(clusters), "kept", len(fixed),
		"reproduces", codematch.Reproduces(clusters))
	if len(fixed) > 0 {
		// The kept programs' usage, inferred with their codes held.
		if _, err := r.fitJob(ctx, fitJob{dir: dir, L: len(fixed), chain: 0, fixed: fixed, codes: L}); err != nil {
			return err
		}
	}
	if err := rundir.WriteConsensus(filepath.Join(dir, rundir.ConsensusFile), rows); err != nil {
		return err
	}
	log.Info("consensus written", "L", L, "output", dir, "seconds", time.Since(start).Seconds())
	return nil
}

// programSets reads the program gene sets (codematch.ProgramSets) of the
// finished fit of L in dir.
func programSets(dir string, L int) ([]codematch.Set, error) {
	codes, err := rundir.ReadCodes(filepath.Join(dir, rundir.CodesFile))
	if err != nil {
		return nil, err
	}
	cells, err := rundir.ReadCellMeans(filepath.Join(dir, rundir.CellsFile))
	if err != nil {
		return nil, err
	}
	if codes.L != L || cells.L != L {
		return nil, fmt.Errorf("fit: %s: %d and %d codes in a fit of L = %d", dir, codes.L, cells.L, L)
	}
	return codematch.ProgramSets(codes.Mean, cells.Mean, codes.Housekeeping, L), nil
}
