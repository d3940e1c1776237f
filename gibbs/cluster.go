package gibbs

import (
	"math"
	"math/bits"
	"slices"
)

// clusterSample is the number of cells InitCluster clusters: enough to
// find a program used by 1% of the cells (40 of them), few enough that a
// chain's start costs a fraction of a sweep at the paper's size.
const clusterSample = 4000

// clusterSplits is the number of assignment rounds of each two-way split.
const clusterSplits = 15

// seedClusters seeds c's codes from cell types: it draws up to
// clusterSample cells with key, splits them by bisecting spherical
// k-means on their observed ones (weighted by inverse detection frequency,
// so that genes detected everywhere count little), always splitting the
// largest cluster and never leaving one below minSize, and sets code l to
// the genes distinctive of cluster l: detected in at least a fifth of its
// cells and at least twice as often (plus 5 points) as in the other cells.
// Codes clamped on (the background code) start with the genes detected in
// at least half of the sampled cells. Z starts at zero, as with InitData.
//
// Everything here is sequential and keyed by the chain's seed, so the
// start does not depend on the number of workers.
func (s *Sampler) seedClusters(c *chain, key uint64) {
	rows := s.sampleRows(key)
	m := len(rows)
	count, weight, norm := rowWeights(rows, s.d)
	k := s.l - bits.OnesCount64(s.clamped|s.fixedU)
	clusters := bisect(rows, weight, norm, s.d, k, max(10, m/100), key, clusterRows)
	free := 0
	in := make([]float64, s.d)
	for l := range s.l {
		var genes []bool
		if s.fixedU>>uint(l)&1 != 0 {
			continue
		}
		if s.clamped>>uint(l)&1 != 0 {
			genes = make([]bool, s.d)
			for g, n := range count {
				genes[g] = n >= float64(m)/2
			}
		} else {
			if free >= len(clusters) {
				continue
			}
			genes = distinctive(rows, clusters[free], count, s.d, 0.2, in)
			free++
		}
		for g, on := range genes {
			if on {
				c.u[g/64*s.l+l] |= 1 << uint(g%64)
			}
		}
	}
}

// rowWeights returns each gene's count over the rows, its weight in the
// clustering (the log inverse detection frequency, so that genes detected
// everywhere count little) and each row's weighted norm.
func rowWeights(rows [][]int32, D int) (count, weight, norm []float64) {
	m := len(rows)
	count = make([]float64, D)
	for _, r := range rows {
		for _, g := range r {
			count[g]++
		}
	}
	weight = make([]float64, D)
	for g := range weight {
		weight[g] = math.Log((float64(m) + 1) / (count[g] + 1))
	}
	norm = make([]float64, m)
	for i, r := range rows {
		t := 0.0
		for _, g := range r {
			t += weight[g] * weight[g]
		}
		norm[i] = math.Sqrt(max(t, 1e-300))
	}
	return count, weight, norm
}

// sampleRows returns the observed ones of up to clusterSample cells drawn
// without replacement with key (all cells when there are fewer), in cell
// order, each as a list of gene indices.
func (s *Sampler) sampleRows(key uint64) [][]int32 {
	cells := sampleCells(s.n, clusterSample, key)
	words := s.cellRows(cells)
	rows := make([][]int32, len(cells))
	for i := range cells {
		var r []int32
		for k, w := range words[i] {
			for ; w != 0; w &= w - 1 {
				r = append(r, int32(64*k+bits.TrailingZeros64(w)))
			}
		}
		rows[i] = r
	}
	return rows
}

// sampleCells returns k of the cells 0 … n−1 drawn without replacement
// with key (all of them when n ≤ k), in order: the first k of a partial
// Fisher–Yates shuffle keyed by position. moved holds the positions past
// the first k that a swap has changed, so that no process of a
// partitioned fit needs a slot per cell of the whole data.
func sampleCells(n, k int, key uint64) []int {
	cells := make([]int, min(n, k))
	for i := range cells {
		cells[i] = i
	}
	if n <= k {
		return cells
	}
	moved := map[int]int{}
	at := func(j int) int {
		if j < k {
			return cells[j]
		}
		if v, ok := moved[j]; ok {
			return v
		}
		return j
	}
	for i := range cells {
		j := i + int(bitsAt(key, uint64(i))%uint64(n-i))
		ci, cj := cells[i], at(j)
		cells[i] = cj
		if j < k {
			cells[j] = ci
		} else {
			moved[j] = ci
		}
	}
	slices.Sort(cells)
	return cells
}

// clusterRows is a cluster's size by its rows, as the cell-type start
// splits.
func clusterRows(members []int) int { return len(members) }

// bisect splits the rows into up to k clusters (lists of row indices) by
// bisecting spherical k-means: the largest cluster by size that can be
// split is split in two (split2); a cluster no split of which leaves both
// sides at least minSize rows is not tried again until another split
// changes the clusters.
func bisect(rows [][]int32, weight, norm []float64, D, k, minSize int, key uint64, size func([]int) int) [][]int {
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
		big, bigSize := -1, 0
		for i, c := range clusters {
			if n := size(c); !tried[i] && len(c) >= 2*minSize && (big < 0 || n > bigSize) {
				big, bigSize = i, n
			}
		}
		if big < 0 {
			break
		}
		c := clusters[big]
		side, ok := split2(c, sim, centroid, &cent, minSize, key, split)
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

// clusterTrials is the number of two-way splits tried per cluster, from
// different pairs of seed members; the best is kept.
const clusterTrials = 5

// split2 splits the rows c in two by spherical 2-means, trying
// clusterTrials pairs of seed members drawn with key and keeping the split
// whose rows are most similar to their own side's centroid among those
// that leave both sides at least minSize rows; ok is false when none does.
func split2(c []int, sim func(int, []float64) float64, centroid func([]float64, []int), cent *[2][]float64,
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
		var side, last [2][]int
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
			// The same sides give the same centroids and so the same
			// sides again: the remaining rounds would change nothing.
			if slices.Equal(side[0], last[0]) && slices.Equal(side[1], last[1]) {
				break
			}
			centroid(cent[0], side[0])
			centroid(cent[1], side[1])
			last = side
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

// distinctive returns the genes detected in at least a fraction minIn of
// the cluster's rows and at least twice as often, plus 5 points, as in the
// other rows; count holds each gene's detections over all rows. It leaves
// each gene's detections in the cluster in in (D long).
func distinctive(rows [][]int32, members []int, count []float64, D int, minIn float64, in []float64) []bool {
	clear(in)
	for _, i := range members {
		for _, g := range rows[i] {
			in[g]++
		}
	}
	inN, outN := float64(len(members)), float64(len(rows)-len(members))
	genes := make([]bool, D)
	for g := range genes {
		rIn := in[g] / inN
		rOut := 0.0
		if outN > 0 {
			rOut = (count[g] - in[g]) / outN
		}
		genes[g] = rIn >= minIn && rIn >= 2*rOut+0.05
	}
	return genes
}
