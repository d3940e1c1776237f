package codematch

import (
	"fmt"
	"math"
)

// hungarian solves the assignment problem: it returns assign with
// assign[i] the column given to row i, such that no column is given twice
// and the total cost Σ cost[i][assign[i]] is smallest. The matrix may be
// rectangular: with more rows than columns, the rows left without a column
// get -1; with more columns than rows, every row gets one. Ties are broken
// deterministically.
//
// It is the Kuhn–Munkres algorithm with row and column potentials (as
// refined by Jonker and Volgenant), O(n²m) for n = min and m = max of the
// dimensions. Rows must all have the same length and costs must be finite;
// hungarian panics otherwise, as for an index out of range.
func hungarian(cost [][]float64) []int {
	n := len(cost)
	if n == 0 {
		return []int{}
	}
	m := len(cost[0])
	for i, row := range cost {
		if len(row) != m {
			panic(fmt.Sprintf("codematch: Hungarian: row %d has %d columns, row 0 has %d", i, len(row), m))
		}
		for j, c := range row {
			if math.IsNaN(c) || math.IsInf(c, 0) {
				panic(fmt.Sprintf("codematch: Hungarian: cost[%d][%d] = %v is not finite", i, j, c))
			}
		}
	}
	assign := make([]int, n)
	for i := range assign {
		assign[i] = -1
	}
	if m == 0 {
		return assign
	}
	if n <= m {
		for j, i := range hungarianWide(n, m, func(i, j int) float64 { return cost[i][j] }) {
			if i >= 0 {
				assign[i] = j
			}
		}
		return assign
	}
	// More rows than columns: solve the transpose, where every column of
	// the original gets a row.
	for i, j := range hungarianWide(m, n, func(i, j int) float64 { return cost[j][i] }) {
		if j >= 0 {
			assign[i] = j
		}
	}
	return assign
}

// hungarianWide solves an n × m problem with n ≤ m and returns, for each
// column, the row assigned to it or -1.
//
// Invariants, with potentials u (rows) and v (columns): u[i] + v[j] ≤ c(i,j)
// for every pair, with equality on the assigned pairs, so the assignment is
// optimal once every row is assigned. Rows are added one at a time; each
// addition grows an alternating tree of tight edges by Dijkstra-like steps
// (minv holds the smallest reduced cost into each column) until it reaches a
// free column, then flips the augmenting path. Index 0 is a sentinel column
// that holds the row being added, hence the 1-based arrays.
func hungarianWide(n, m int, c func(i, j int) float64) []int {
	u := make([]float64, n+1)
	v := make([]float64, m+1)
	p := make([]int, m+1)   // p[j]: row (1-based) assigned to column j, 0 if free
	way := make([]int, m+1) // way[j]: previous column on the path to j
	minv := make([]float64, m+1)
	used := make([]bool, m+1)
	for i := 1; i <= n; i++ {
		p[0] = i
		j0 := 0
		for j := range minv {
			minv[j] = math.Inf(1)
			used[j] = false
		}
		for {
			used[j0] = true
			i0 := p[j0]
			delta, j1 := math.Inf(1), 0
			for j := 1; j <= m; j++ {
				if used[j] {
					continue
				}
				if cur := c(i0-1, j-1) - u[i0] - v[j]; cur < minv[j] {
					minv[j], way[j] = cur, j0
				}
				if minv[j] < delta {
					delta, j1 = minv[j], j
				}
			}
			for j := 0; j <= m; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if p[j0] == 0 {
				break
			}
		}
		for j0 != 0 {
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
		}
	}
	rowOf := make([]int, m)
	for j := 1; j <= m; j++ {
		rowOf[j-1] = p[j] - 1
	}
	return rowOf
}
