package rundir

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// scoreColumns returns columns score_1 … score_L of a row-major matrix.
func scoreColumns(m []float64, L int) []column {
	cols := matrixColumns(m, L)
	for k := range cols {
		cols[k].name = strings.Replace(cols[k].name, "code_", ScorePrefix, 1)
	}
	return cols
}

func TestReadScores(t *testing.T) {
	t.Parallel()
	ids, names := []string{"g1", "g2"}, []string{"A", "B"}
	mean := []float64{0.9, 0.1, 0.2, 0.8}
	score := []float64{0.5, -0.25, -0.125, 0.75}
	hk := []float64{0, 1}
	base := []column{stringColumn("gene_id", ids), stringColumn("gene_name", names)}
	for _, tc := range []struct {
		name string
		cols []column
		want []float64 // nil: no scores
	}{
		{"none", append(slices.Clone(base), append(matrixColumns(mean, 2), float64Column(HousekeepingColumn, hk))...), nil},
		{"after the codes", append(slices.Clone(base), append(append(matrixColumns(mean, 2), scoreColumns(score, 2)...), float64Column(HousekeepingColumn, hk))...), score},
		{"at the end", append(slices.Clone(base), append(append(matrixColumns(mean, 2), float64Column(HousekeepingColumn, hk)), scoreColumns(score, 2)...)...), score},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), CodesFile)
			if err := writeTable(path, "codes", tc.cols, 2, BatchRows); err != nil {
				t.Fatal(err)
			}
			c, err := ReadCodes(path)
			if err != nil {
				t.Fatal(err)
			}
			if c.L != 2 || !slices.Equal(c.Mean, mean) || !slices.Equal(c.Housekeeping, hk) {
				t.Errorf("ReadCodes: L %d mean %v housekeeping %v", c.L, c.Mean, c.Housekeeping)
			}
			got, L, err := ReadScores(path)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) || (tc.want != nil) != (L == 2) {
				t.Errorf("ReadScores = %v (L %d), want %v", got, L, tc.want)
			}
		})
	}
}
