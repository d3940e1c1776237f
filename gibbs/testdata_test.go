package gibbs

import (
	"math"
	"testing"

	"scpipe/internal/splitmix"
)

// testRNG is a deterministic generator for test fixtures (SplitMix64).
type testRNG struct{ s uint64 }

func (r *testRNG) next() uint64 { r.s += splitmix.Golden; return splitmix.Mix(r.s) }

func (r *testRNG) float() float64 { return float64(r.next()>>11) * 0x1p-53 }

func (r *testRNG) bern(p float64) bool { return r.float() < p }

func (r *testRNG) intn(n int) int { return int(r.next() % uint64(n)) }

// segmentedCopy returns Data holding x and mask (rows × cols) in column
// segments of seg columns (0: whole rows).
func segmentedCopy(t *testing.T, x, mask *Matrix, rows, cols, seg int) Data {
	t.Helper()
	xs, err := NewSegmentedMatrix(rows, cols, seg)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := NewSegmentedMatrix(rows, cols, seg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		for j := range cols {
			xs.Set(i, j, x.Get(i, j))
			ms.Set(i, j, mask.Get(i, j))
		}
	}
	data, err := NewData(xs, ms, seg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// randomMatrix returns a rows × cols matrix of independent Bernoulli(p) bits
// with column segments of segCols columns.
func randomMatrix(r *testRNG, rows, cols int, p float64, segCols int) *Matrix {
	m, err := NewSegmentedMatrix(rows, cols, segCols)
	if err != nil {
		panic(err)
	}
	for i := range rows {
		for j := range cols {
			if r.bern(p) {
				m.Set(i, j, true)
			}
		}
	}
	return m
}

// planted is a planted OrMachine problem: X = Z∘U with flipped bits.
type planted struct {
	z, u  [][]bool // N × L, D × L
	clean *Matrix  // noise-free Boolean product
	noisy *Matrix  // with each bit flipped with probability noise
}

// newPlanted draws Z and U with Bernoulli(q) entries, q chosen so that the
// Boolean product has expected density density, and flips bits with
// probability noise.
func newPlanted(seed uint64, n, d, L int, density, noise float64) *planted {
	r := &testRNG{s: seed}
	q := math.Sqrt(1 - math.Pow(1-density, 1/float64(L)))
	p := &planted{z: make([][]bool, n), u: make([][]bool, d), clean: NewMatrix(n, d), noisy: NewMatrix(n, d)}
	for i := range n {
		p.z[i] = make([]bool, L)
		for l := range L {
			p.z[i][l] = r.bern(q)
		}
	}
	for j := range d {
		p.u[j] = make([]bool, L)
		for l := range L {
			p.u[j][l] = r.bern(q)
		}
	}
	for i := range n {
		for j := range d {
			v := false
			for l := range L {
				v = v || p.z[i][l] && p.u[j][l]
			}
			p.clean.Set(i, j, v)
			p.noisy.Set(i, j, v != r.bern(noise))
		}
	}
	return p
}

// worstJaccard matches each planted program to the inferred code whose MAP
// gene set overlaps it most (Jaccard index) and returns the smallest of
// these best overlaps: 1 when every program is recovered exactly.
func (p *planted) worstJaccard(res *Result) float64 {
	worst := 1.0
	for l := range p.u[0] {
		best := 0.0
		for k := range res.L {
			inter, union := 0, 0
			for d := range p.u {
				a, b := p.u[d][l], res.uMAP(d, k)
				if a && b {
					inter++
				}
				if a || b {
					union++
				}
			}
			if union > 0 {
				best = max(best, float64(inter)/float64(union))
			}
		}
		worst = min(worst, best)
	}
	return worst
}
