package codematch

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// assignmentCost checks that assign is a valid assignment for an n × m
// cost matrix (each row at most one column, no column twice, min(n, m)
// pairs) and returns its cost.
func assignmentCost(t *testing.T, cost [][]float64, assign []int) float64 {
	t.Helper()
	n := len(cost)
	m := 0
	if n > 0 {
		m = len(cost[0])
	}
	if len(assign) != n {
		t.Fatalf("assignment has %d entries for %d rows", len(assign), n)
	}
	seen := make(map[int]bool)
	total := 0.0
	for i, j := range assign {
		if j == -1 {
			continue
		}
		if j < 0 || j >= m || seen[j] {
			t.Fatalf("assignment %v: row %d gets column %d (out of range or repeated)", assign, i, j)
		}
		seen[j] = true
		total += cost[i][j]
	}
	if len(seen) != min(n, m) {
		t.Fatalf("assignment %v pairs %d rows, want min(%d, %d)", assign, len(seen), n, m)
	}
	return total
}

// bruteForce returns the smallest cost over all assignments of the rows of
// the smaller side, by enumerating the injections directly.
func bruteForce(cost [][]float64) float64 {
	n, m := len(cost), len(cost[0])
	if n > m {
		tr := make([][]float64, m)
		for j := range tr {
			tr[j] = make([]float64, n)
			for i := range n {
				tr[j][i] = cost[i][j]
			}
		}
		return bruteForce(tr)
	}
	best := math.Inf(1)
	used := make([]bool, m)
	var rec func(i int, sum float64)
	rec = func(i int, sum float64) {
		if i == n {
			best = min(best, sum)
			return
		}
		for j := range m {
			if !used[j] {
				used[j] = true
				rec(i+1, sum+cost[i][j])
				used[j] = false
			}
		}
	}
	rec(0, 0)
	return best
}

func TestHungarianBruteForce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	draws := []struct {
		name string
		draw func() float64
	}{
		{"continuous", func() float64 { return rng.NormFloat64() * 10 }},
		{"small integers (many ties)", func() float64 { return float64(rng.IntN(3)) }},
		{"large offset", func() float64 { return 1e6 + float64(rng.IntN(100)) }},
	}
	for _, d := range draws {
		for n := 1; n <= 7; n++ {
			for m := 1; m <= 7; m++ {
				for rep := 0; rep < 4; rep++ {
					cost := make([][]float64, n)
					for i := range cost {
						cost[i] = make([]float64, m)
						for j := range cost[i] {
							cost[i][j] = d.draw()
						}
					}
					got := assignmentCost(t, cost, hungarian(cost))
					want := bruteForce(cost)
					if math.Abs(got-want) > 1e-9*max(1, math.Abs(want)) {
						t.Fatalf("%s %d×%d: Hungarian cost %v, brute force %v\ncost %v", d.name, n, m, got, want, cost)
					}
				}
			}
		}
	}
}

func TestHungarianDegenerate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cost [][]float64
		want []int // nil: only check optimality
	}{
		{"empty", [][]float64{}, []int{}},
		{"no columns", [][]float64{{}, {}}, []int{-1, -1}},
		{"1×1", [][]float64{{5}}, []int{0}},
		{"identity wins", [][]float64{{0, 1, 1}, {1, 0, 1}, {1, 1, 0}}, []int{0, 1, 2}},
		{"anti-diagonal", [][]float64{{1, 1, 0}, {1, 0, 1}, {0, 1, 1}}, []int{2, 1, 0}},
		{"all equal", [][]float64{{2, 2, 2}, {2, 2, 2}, {2, 2, 2}}, nil},
		{"one row picks min", [][]float64{{3, 1, 2}}, []int{1}},
		{"one column", [][]float64{{3}, {1}, {2}}, []int{-1, 0, -1}},
		{"tall: rows left over", [][]float64{{5, 9}, {1, 9}, {9, 2}}, []int{-1, 0, 1}},
		{"greedy fails", [][]float64{{1, 2}, {2, 100}}, []int{1, 0}},
		{"negative", [][]float64{{-1, -5}, {-3, -2}}, []int{1, 0}},
		{"zeros", [][]float64{{0, 0}, {0, 0}}, nil},
	} {
		got := hungarian(tc.cost)
		if tc.want != nil && !slices.Equal(got, tc.want) {
			t.Errorf("%s: Hungarian = %v, want %v", tc.name, got, tc.want)
		}
		if len(tc.cost) > 0 && len(tc.cost[0]) > 0 {
			if c, best := assignmentCost(t, tc.cost, got), bruteForce(tc.cost); c != best {
				t.Errorf("%s: cost %v, optimum %v", tc.name, c, best)
			}
		}
	}
}

func TestHungarianPanics(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cost [][]float64
	}{
		{"ragged", [][]float64{{1, 2}, {3}}},
		{"NaN", [][]float64{{1, math.NaN()}, {3, 4}}},
		{"Inf", [][]float64{{1, 2}, {math.Inf(1), 4}}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			hungarian(tc.cost)
		}()
	}
}
