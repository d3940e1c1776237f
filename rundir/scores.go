package rundir

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
)

// ScorePrefix begins the names of the per-code score columns of
// codes.parquet, score_1 … score_L: a number per gene and code by which a
// program's genes are ranked (higher first). Tables without them are
// ranked by the posterior mean.
const ScorePrefix = "score_"

// trailingScores counts the fields named ScorePrefix… that end the first
// n fields of s.
func trailingScores(s *arrow.Schema, n int) int {
	k := 0
	for i := n - 1; i >= 2 && strings.HasPrefix(s.Field(i).Name, ScorePrefix); i-- {
		k++
	}
	return k
}

// ReadScores reads the columns score_1 … score_L of a codes.parquet file
// as a genes × L row-major matrix, wherever they stand in the table. It
// returns nil and L = 0 when the table has no score column; the columns
// must then be exactly score_1 … score_L, of type double.
func ReadScores(path string) ([]float64, int, error) {
	var m []float64
	L := 0
	err := readTable(path, func(s *arrow.Schema, rows int) ([]sink, error) {
		at := map[int]int{} // field index of score_(k+1)
		for i, f := range s.Fields() {
			if !strings.HasPrefix(f.Name, ScorePrefix) {
				continue
			}
			if !arrow.TypeEqual(f.Type, arrow.PrimitiveTypes.Float64) {
				return nil, fmt.Errorf("column %s has type %s, want double", f.Name, f.Type)
			}
			at[i] = len(at)
			L++
		}
		sinks := make([]sink, s.NumFields())
		if L == 0 {
			return sinks, nil
		}
		m = make([]float64, rows*L)
		all := matrixSinks(m, L)
		for i, k := range at {
			if want := ScorePrefix + fmt.Sprint(k+1); s.Field(i).Name != want {
				return nil, fmt.Errorf("column %d is %q, want %q (score columns must be score_1 … score_L in order)", i+1, s.Field(i).Name, want)
			}
			sinks[i] = all[k]
		}
		return sinks, nil
	})
	if err != nil {
		return nil, 0, err
	}
	return m, L, nil
}
