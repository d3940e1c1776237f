package ingest

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"scpipe/shard"
)

// TestBlockSumsAboveOne: blockSums reports a value above 1 exactly when
// there is one, whether the block's sum gives it away or not, at any block
// size, and keeps a finding of an earlier call.
func TestBlockSumsAboveOne(t *testing.T) {
	t.Parallel()
	ones := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = 1
		}
		return v
	}
	with := func(v []float64, i int, x float64) []float64 {
		v = slices.Clone(v)
		v[i] = x
		return v
	}
	for _, tc := range []struct {
		name  string
		val   []float64
		above bool
	}{
		{"ones", ones(4097), false},
		{"a 2 in the last block", with(ones(4097), 4096, 2), true},
		{"a 2 in the first block", with(ones(4097), 3, 2), true},
		{"a 2 beside an explicit 0 (sum = length)", with(with(ones(9), 0, 0), 5, 2), true},
		{"fractions and 1.5 (sum < length)", []float64{0.1, 0.2, 1.5, 0.3, 0.1}, true},
		{"fractions at most 1", []float64{0.5, 1, 0.25, 1, 0, 0.75}, false},
		{"just above 1", with(ones(7), 6, 1.0000000000000002), true},
		{"counts", []float64{3, 1, 7, 1, 2}, true},
	} {
		for _, block := range []int{1, 4, 5, 4096} {
			sums := make([]float64, (len(tc.val)+block-1)/block)
			if got := blockSums(tc.val, 0, len(tc.val), block, sums, false); got != tc.above {
				t.Errorf("%s, block %d: above one %v, want %v", tc.name, block, got, tc.above)
			}
			if !blockSums(tc.val, 0, len(tc.val), block, sums, true) {
				t.Errorf("%s, block %d: an earlier finding was dropped", tc.name, block)
			}
		}
	}
}

// TestSourceValues: the manifest says counts for input with a value above
// 1 and binary for a 0/1 matrix, from MTX (integer and pattern) and HDF5.
func TestSourceValues(t *testing.T) {
	t.Parallel()
	binaryMTX := strings.NewReplacer("1 1 3\n", "1 1 1\n", "3 2 7\n", "3 2 1\n", "4 3 2\n", "4 3 1\n").Replace(goodMTX)
	patternMTX := `%%MatrixMarket matrix coordinate pattern general
4 3 5
1 1
2 1
3 2
4 3
1 3
`
	binaryCSC := tenxCSC()
	binaryCSC.Data = []float64{1, 1, 1, 1, 1}
	for _, tc := range []struct {
		name, input, want string
	}{
		{"MTX counts", mtxFolder(t, goodMTX, 4, 3, false, true), shard.ValuesCounts},
		{"MTX of ones", mtxFolder(t, binaryMTX, 4, 3, false, true), shard.ValuesBinary},
		{"MTX pattern", mtxFolder(t, patternMTX, 4, 3, true, true), shard.ValuesBinary},
		{"10x HDF5 counts", writeTenXV3(t, tenxCSC()), shard.ValuesCounts},
		{"10x HDF5 of ones", writeTenXV3(t, binaryCSC), shard.ValuesBinary},
	} {
		rep, s := ingest(t, exact(tc.input, filepath.Join(t.TempDir(), "s")))
		if got := s.Manifest().Source.Values; got != tc.want || rep.AboveOne != (tc.want == shard.ValuesCounts) {
			t.Errorf("%s: source values %q (above one %v), want %q", tc.name, got, rep.AboveOne, tc.want)
		}
	}
}
