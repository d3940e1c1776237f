package pipeline

import (
	"context"
	"encoding/binary"

	"scpipe/gibbs"
)

// useThreshold is the posterior mean of z at which a cell counts as using a
// code, for the genes' scores: the MAP cells, as codes.parquet's readers
// take them.
const useThreshold = 0.5

// codeUses returns the cells using each of the first L of the result's
// codes (a housekeeping code, the sampler's last, is used by every cell and
// has no score): L bit sets of ⌈N/64⌉ words.
func codeUses(res *gibbs.Result, L int) [][]uint64 {
	uses := make([][]uint64, L)
	for k := range uses {
		uses[k] = make([]uint64, (res.N+63)/64)
	}
	for n := range res.N {
		for k, z := range res.ZMean[n*res.L : n*res.L+L] {
			if z >= useThreshold {
				uses[k][n/64] |= 1 << (n % 64)
			}
		}
	}
	return uses
}

// geneScores returns the genes × L scores of the tables t (Phi), in the
// sampler's order of codes.
func geneScores(t *gibbs.Detection) []float64 {
	score := make([]float64, t.Genes*t.L)
	for g := range t.Genes {
		for k := range t.L {
			score[g*t.L+k] = t.Phi(g, k)
		}
	}
	return score
}

// fitScores scores every gene for each of the result's first L codes
// against the data it was fitted to (the entries the fit saw).
func fitScores(data gibbs.Data, res *gibbs.Result, L, workers int) ([]float64, error) {
	t, err := data.Detection(codeUses(res, L), 0, res.N, workers)
	if err != nil {
		return nil, err
	}
	return geneScores(t), nil
}

// partScores is fitScores for a fit spread over the ranks: rank 0 holds
// the gathered result (res, nil elsewhere) and sends the codes' cells to
// every rank, each counts its own cells, and the sums of the counts,
// integers, give rank 0 the scores fitScores gives.
func (c *ranks) partScores(ctx context.Context, data gibbs.Data, res *gibbs.Result, L, workers int) ([]float64, error) {
	// A rank stopped in the fit's last sweep still finishes the fit with
	// the others, and a collective that returned at once in one rank
	// would leave the rest waiting for it.
	ctx = context.WithoutCancel(ctx)
	comm := c.comm
	N := data.XT.Cols()
	words := (N + 63) / 64
	flat := make([]byte, 8*L*words)
	if res != nil {
		for k, u := range codeUses(res, L) {
			for i, w := range u {
				binary.LittleEndian.PutUint64(flat[8*(k*words+i):], w)
			}
		}
	}
	if err := comm.Broadcast(ctx, 0, flat); err != nil {
		return nil, err
	}
	uses := make([][]uint64, L)
	for k := range uses {
		uses[k] = make([]uint64, words)
		for i := range uses[k] {
			uses[k][i] = binary.LittleEndian.Uint64(flat[8*(k*words+i):])
		}
	}
	t, err := data.Detection(uses, c.lo, c.hi, workers)
	if err := agree(ctx, c, err); err != nil { // a rank that fails alone would leave the others in the sums
		return nil, err
	}
	for _, v := range [][]int64{t.Both, t.Used, t.Ones, t.Obs} {
		if err := comm.SumInt64(ctx, v); err != nil {
			return nil, err
		}
	}
	if res == nil {
		return nil, nil
	}
	return geneScores(t), nil
}
