package gibbs

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBisectMatchesReference checks that bisect, which stops a split's
// rounds once the sides repeat, returns exactly the clusters of the
// implementation that runs every round, on sparse random rows with planted
// groups, for every k a fit asks for; and that it finds the planted groups'
// splits at all.
func TestBisectMatchesReference(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rows, genes, groups int
		seed                uint64
	}{
		{0, 10, 1, 1},
		{1, 10, 1, 2},
		{50, 64, 3, 3},
		{400, 300, 5, 4},
		{1200, 700, 9, 5},
	} {
		rows, weight, norm := plantedRows(tc.rows, tc.genes, tc.groups, tc.seed)
		for k := 1; k <= 11; k++ {
			minSize := max(10, tc.rows/100)
			got := bisect(rows, weight, norm, tc.genes, k, minSize, tc.seed, clusterRows)
			want := bisectReference(rows, weight, norm, tc.genes, k, minSize, tc.seed)
			if len(got) != len(want) {
				t.Fatalf("%d rows, k=%d: %d clusters, reference %d", tc.rows, k, len(got), len(want))
			}
			for i := range got {
				if !slices.Equal(got[i], want[i]) {
					t.Fatalf("%d rows, k=%d: cluster %d differs from the reference's", tc.rows, k, i)
				}
			}
			if tc.rows >= 400 && k > 1 && len(got) < 2 {
				t.Errorf("%d rows with %d planted groups, k=%d: no split at all", tc.rows, tc.groups, k)
			}
		}
	}
}

// BenchmarkBisect times the cell-type start's clustering of clusterSample
// rows over 11 000 genes into 10 clusters, the work of one start at L = 10.
func BenchmarkBisect(b *testing.B) {
	rows, weight, norm := plantedRows(clusterSample, 11000, 10, 1)
	for _, impl := range []struct {
		name string
		f    func([][]int32, []float64, []float64, int, int, int, uint64) [][]int
	}{{"bisect", func(rows [][]int32, weight, norm []float64, D, k, minSize int, key uint64) [][]int {
		return bisect(rows, weight, norm, D, k, minSize, key, clusterRows)
	}}, {"reference", bisectReference}} {
		b.Run(impl.name, func(b *testing.B) {
			for b.Loop() {
				impl.f(rows, weight, norm, 11000, 10, clusterSample/100, 1)
			}
		})
	}
}

// plantedRows draws n sparse rows over D genes from groups groups, each
// detecting its own genes at 60% beside a 3% background, and the weights
// and norms seedClusters would give them.
func plantedRows(n, D, groups int, seed uint64) ([][]int32, []float64, []float64) {
	r := rand.New(rand.NewPCG(seed, 7))
	rows := make([][]int32, n)
	count := make([]float64, D)
	for i := range rows {
		grp := r.IntN(groups)
		for g := range D {
			p := 0.03
			if g*groups/D == grp && g%10 == 0 || (g+grp)%groups == 0 && g%7 == 0 {
				p = 0.6
			}
			if r.Float64() < p {
				rows[i] = append(rows[i], int32(g))
				count[g]++
			}
		}
	}
	weight := make([]float64, D)
	for g := range weight {
		weight[g] = math.Log((float64(n) + 1) / (count[g] + 1))
	}
	norm := make([]float64, n)
	for i, row := range rows {
		t := 0.0
		for _, g := range row {
			t += weight[g] * weight[g]
		}
		norm[i] = math.Sqrt(max(t, 1e-300))
	}
	return rows, weight, norm
}

// bisectReference is bisect as first written, running every one of the
// clusterSplits rounds: the reference that bisect must match exactly. It
// splits the rows into up to k clusters (lists of row indices) by
// bisecting spherical k-means: the largest cluster that can be split is
// split in two (split2); a cluster no split of which leaves both sides at
// least minSize rows is not tried again until another split changes the
// clusters.
func bisectReference(rows [][]int32, weight, norm []float64, D, k, minSize int, key uint64) [][]int {
	all := make([]int, len(rows))
	for i := range all {
		all[i] = i
	}
	clusters := [][]int{all}
	if len(rows) == 0 || k <= 1 {
		return clusters
	}
	cent := [2][]float64{make([]float64, D), make([]float64, D)}
	sim := func(i int, c []float64) float64 {
		t := 0.0
		for _, g := range rows[i] {
			t += weight[g] * c[g]
		}
		return t / norm[i]
	}
	centroid := func(dst []float64, members []int) {
		clear(dst)
		for _, i := range members {
			for _, g := range rows[i] {
				dst[g] += weight[g] / norm[i]
			}
		}
		t := 0.0
		for _, v := range dst {
			t += v * v
		}
		t = 1 / math.Sqrt(max(t, 1e-300))
		for g := range dst {
			dst[g] *= t
		}
	}
	tried := make([]bool, 1, k)
	for split := 0; len(clusters) < k; split++ {
		big := -1
		for i, c := range clusters {
			if !tried[i] && len(c) >= 2*minSize && (big < 0 || len(c) > len(clusters[big])) {
				big = i
			}
		}
		if big < 0 {
			break
		}
		c := clusters[big]
		side, ok := split2Reference(c, sim, centroid, &cent, minSize, key, split)
		if !ok {
			tried[big] = true
			continue
		}
		clusters[big] = side[0]
		clusters = append(clusters, side[1])
		tried = make([]bool, len(clusters), k)
	}
	return clusters
}

// split2 splits the rows c in two by spherical 2-means, trying
// clusterTrials pairs of seed members drawn with key and keeping the split
// whose rows are most similar to their own side's centroid among those
// that leave both sides at least minSize rows; ok is false when none does.
func split2Reference(c []int, sim func(int, []float64) float64, centroid func([]float64, []int), cent *[2][]float64,
	minSize int, key uint64, split int) (best [2][]int, ok bool) {
	bestObj := math.Inf(-1)
	for trial := range clusterTrials {
		draw := uint64(split*clusterTrials+trial) * 2
		a, b := c[bitsAt(key, draw)%uint64(len(c))], c[bitsAt(key, draw+1)%uint64(len(c))]
		if a == b {
			continue
		}
		centroid(cent[0], []int{a})
		centroid(cent[1], []int{b})
		var side [2][]int
		for range clusterSplits {
			side = [2][]int{}
			for _, i := range c {
				if sim(i, cent[0]) >= sim(i, cent[1]) {
					side[0] = append(side[0], i)
				} else {
					side[1] = append(side[1], i)
				}
			}
			if len(side[0]) == 0 || len(side[1]) == 0 {
				break
			}
			centroid(cent[0], side[0])
			centroid(cent[1], side[1])
		}
		if len(side[0]) < minSize || len(side[1]) < minSize {
			continue
		}
		obj := 0.0
		for k := range side {
			for _, i := range side[k] {
				obj += sim(i, cent[k])
			}
		}
		if obj > bestObj {
			best, bestObj, ok = side, obj, true
		}
	}
	return best, ok
}

// TestSampleCells requires the sparse shuffle of sampleCells to draw the
// cells a whole array's partial Fisher–Yates shuffle draws, without
// repeats, for samples smaller than, equal to and larger than the cells.
func TestSampleCells(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ n, k int }{{10, 3}, {1000, 999}, {100000, 4000}, {50, 50}, {7, 4000}} {
		key := uint64(tc.n*31 + tc.k)
		all := make([]int, tc.n)
		for i := range all {
			all[i] = i
		}
		want := all
		if tc.n > tc.k {
			for i := range tc.k {
				j := i + int(bitsAt(key, uint64(i))%uint64(tc.n-i))
				all[i], all[j] = all[j], all[i]
			}
			want = slices.Clone(all[:tc.k])
			slices.Sort(want)
		}
		got := sampleCells(tc.n, tc.k, key)
		if !slices.Equal(got, want) {
			t.Errorf("n=%d k=%d: sampleCells differs from the dense shuffle", tc.n, tc.k)
		}
		if len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Errorf("n=%d k=%d: a cell drawn twice", tc.n, tc.k)
		}
	}
}
