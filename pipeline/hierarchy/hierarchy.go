package hierarchy

import (
	"context"
	"fmt"
	"slices"

	"scpipe/enrich"
	"scpipe/gibbs"
)

// Default is the hierarchy of scpipe enrich, report, evaluate and demo: the
// paper's. Measured on the demo's planted programs, on pbmc3k-600 fitted
// at L = 2..8 and on the digits at L = 3..7 (enrich/README.md), it keeps
// the links of overlap matching that rebuild a program and drops the
// others: where large programs overlap (pbmc3k-600) overlap links every
// program to nearly every program of the next L and calls each a merge.
// Package enrich, which cannot run the sampler, defaults to overlap.
const Default = enrich.HierarchyFixedCodes

// Options configure the sampler of the links (Linker).
type Options struct {
	// Seed keys the sampler's draws: the links are a function of the sets
	// and the seed.
	Seed uint64
	// BurnIn sweeps, then Samples sweeps whose states are averaged.
	BurnIn, Samples int
	// Starts chains run StartSweeps sweeps each; the most likely goes on.
	Starts, StartSweeps int
	// Workers is the number of goroutines per sweep (0: GOMAXPROCS); the
	// links do not depend on it.
	Workers int
}

// DefaultOptions returns the sampler of the hierarchy: the
// paper's model (symmetric noise, one λ set to its maximum-likelihood value
// after every sweep, a uniform prior on the links, a random start) with
// 100 sweeps of burn-in and 400 samples (a sweep over ten programs of
// 2,600 genes takes about 0.2 ms) and 8 starts of 10 sweeps, seed 1,
// one worker (more would only add synchronisation to so small a sweep).
func DefaultOptions() Options {
	return Options{Seed: 1, BurnIn: 100, Samples: 400, Starts: 8, StartSweeps: 10, Workers: 1}
}

// Linker returns inferLinks with o as the enrich.Linker of
// enrich.HierarchyFixedCodes.
func Linker(o Options) enrich.Linker {
	return func(ctx context.Context, coarse, fine [][]int, D int) ([][]float64, error) {
		l, err := inferLinks(ctx, coarse, fine, D, o)
		if err != nil {
			return nil, err
		}
		return l.Mean, nil
	}
}

// links are the inferred links between two fits' codes.
type links struct {
	// Mean[i][j] is the posterior mean of z_ij: code j of the larger fit
	// is a part of code i of the smaller.
	Mean [][]float64
	// Lambda is the dispersion λ after the last sweep, and Genes the genes
	// the data held: those in some code of either fit (a gene in none is
	// explained by any links, and would only inflate λ).
	Lambda float64
	Genes  int
}

// inferLinks infers which of the fine gene sets (the codes of the
// larger fit) make up each coarse one (the codes of the smaller) with the
// OrMachine of the fine sets as fixed codes and the coarse sets as data.
// Sets are gene indices in 0 … D−1; there must be at least one of each, at
// most gibbs.MaxL fine ones, and every fine set must have a gene.
func inferLinks(ctx context.Context, coarse, fine [][]int, D int, o Options) (*links, error) {
	switch {
	case len(coarse) == 0 || len(fine) == 0:
		return nil, fmt.Errorf("hierarchy: %d coarse and %d fine codes: want at least one of each", len(coarse), len(fine))
	case len(fine) > gibbs.MaxL:
		return nil, fmt.Errorf("hierarchy: %d fine codes, more than the sampler's %d", len(fine), gibbs.MaxL)
	}
	col, genes, err := columns(coarse, fine, D)
	if err != nil {
		return nil, err
	}
	x := gibbs.NewMatrix(len(coarse), len(genes))
	for i, s := range coarse {
		for _, g := range s {
			x.Set(i, col[g], true)
		}
	}
	data, err := gibbs.NewData(x, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("hierarchy: %w", err)
	}
	cfg := gibbs.DefaultConfig()
	cfg.L, cfg.Seed, cfg.Workers = len(fine), o.Seed, o.Workers
	cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.StartSweeps = o.BurnIn, o.Samples, o.Starts, o.StartSweeps
	for j, s := range fine {
		if len(s) == 0 {
			return nil, fmt.Errorf("hierarchy: fine code %d has no gene", j+1)
		}
		f := gibbs.FixedCode{Code: j, Genes: make([]int, len(s))}
		for k, g := range s {
			f.Genes[k] = col[g]
		}
		cfg.FixedCodes = append(cfg.FixedCodes, f)
	}
	s, err := gibbs.NewSampler(ctx, data, cfg)
	if err != nil {
		return nil, fmt.Errorf("hierarchy: %w", err)
	}
	if err := s.Run(ctx, nil); err != nil {
		return nil, fmt.Errorf("hierarchy: %w", err)
	}
	res, err := s.Result()
	if err != nil {
		return nil, fmt.Errorf("hierarchy: %w", err)
	}
	l := &links{Mean: make([][]float64, len(coarse)), Lambda: res.Lambda, Genes: len(genes)}
	for i := range coarse {
		l.Mean[i] = slices.Clone(res.ZMean[i*res.L : (i+1)*res.L])
	}
	return l, nil
}

// columns numbers the genes in some set, ascending: col[g] is
// gene g's column (−1 for none) and genes lists them.
func columns(coarse, fine [][]int, D int) (col, genes []int, err error) {
	in := make([]bool, D)
	for _, sets := range [][][]int{coarse, fine} {
		for _, s := range sets {
			for _, g := range s {
				if g < 0 || g >= D {
					return nil, nil, fmt.Errorf("hierarchy: gene %d outside 0..%d", g, D-1)
				}
				in[g] = true
			}
		}
	}
	col = make([]int, D)
	for g := range col {
		col[g] = -1
		if in[g] {
			col[g] = len(genes)
			genes = append(genes, g)
		}
	}
	return col, genes, nil
}
