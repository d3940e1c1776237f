package gibbs

import (
	"math"
	"testing"
)

// TestDetection checks the tables against a count entry by entry, with and
// without a mask, over every cell block and over each block alone (whose
// sums must be the whole's, as a fit spread over processes adds them), and
// Phi against Pearson's correlation of the two binary vectors.
func TestDetection(t *testing.T) {
	const cells, genes, L, block = 300, 37, 3, 128
	for _, masked := range []bool{false, true} {
		r := &testRNG{s: 7}
		x := randomMatrix(r, cells, genes, 0.3, 0)
		xt, err := transposed(x, block)
		if err != nil {
			t.Fatal(err)
		}
		d := Data{X: x, XT: xt}
		if masked {
			mask := randomMatrix(r, cells, genes, 0.8, 0)
			mt, err := transposed(mask, block)
			if err != nil {
				t.Fatal(err)
			}
			d.Mask, d.MaskT = mask, mt
		}
		uses := make([][]uint64, L)
		in := make([][]bool, L)
		for k := range uses {
			uses[k], in[k] = make([]uint64, (cells+63)/64), make([]bool, cells)
			for n := range cells {
				if r.bern(0.2 + 0.2*float64(k)) {
					uses[k][n/64] |= 1 << (n % 64)
					in[k][n] = true
				}
			}
		}
		whole, err := d.Detection(uses, 0, cells, 3)
		if err != nil {
			t.Fatal(err)
		}
		sum := &Detection{Genes: genes, L: L, Both: make([]int64, genes*L), Used: make([]int64, genes*L),
			Ones: make([]int64, genes), Obs: make([]int64, genes)}
		bounds := xt.Segments()
		for s := 0; s+1 < len(bounds); s++ {
			part, err := d.Detection(uses, bounds[s], bounds[s+1], 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range [][2][]int64{{sum.Both, part.Both}, {sum.Used, part.Used}, {sum.Ones, part.Ones}, {sum.Obs, part.Obs}} {
				for i, v := range p[1] {
					p[0][i] += v
				}
			}
		}
		for g := range genes {
			for k := range L {
				var xs, zs []float64
				var both, used int64
				for n := range cells {
					if d.Mask != nil && !bitAt(d.Mask, n, g) {
						continue
					}
					xv, zv := x.Get(n, g), in[k][n]
					xs, zs = append(xs, b2f(xv)), append(zs, b2f(zv))
					if zv {
						used++
						if xv {
							both++
						}
					}
				}
				for _, tab := range []*Detection{whole, sum} {
					if tab.Both[g*L+k] != both || tab.Used[g*L+k] != used || tab.Obs[g] != int64(len(xs)) {
						t.Fatalf("masked=%v gene %d code %d: both %d used %d obs %d, want %d %d %d",
							masked, g, k, tab.Both[g*L+k], tab.Used[g*L+k], tab.Obs[g], both, used, len(xs))
					}
				}
				if got, want := whole.Phi(g, k), pearson(xs, zs); math.Abs(got-want) > 1e-12 {
					t.Fatalf("masked=%v gene %d code %d: phi %v, Pearson's correlation %v", masked, g, k, got, want)
				}
			}
		}
	}
}

// TestDetectionRefuses checks the inputs Detection cannot count.
func TestDetectionRefuses(t *testing.T) {
	r := &testRNG{s: 3}
	x := randomMatrix(r, 200, 10, 0.3, 0)
	xt, _ := transposed(x, 128)
	d := Data{X: x, XT: xt}
	good := [][]uint64{make([]uint64, 4)}
	for _, c := range []struct {
		name   string
		uses   [][]uint64
		lo, hi int
	}{
		{"short cell set", [][]uint64{make([]uint64, 3)}, 0, 200},
		{"range inside a block", good, 0, 100},
		{"reversed range", good, 128, 0},
	} {
		if _, err := d.Detection(c.uses, c.lo, c.hi, 1); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// TestPhiEdges checks the degenerate tables: an empty margin is no
// association.
func TestPhiEdges(t *testing.T) {
	for _, c := range []struct {
		name                  string
		both, used, ones, obs int64
		want                  float64
	}{
		{"no cell uses the code", 0, 0, 5, 10, 0},
		{"every cell uses it", 5, 10, 5, 10, 0},
		{"no cell detects the gene", 0, 4, 0, 10, 0},
		{"exactly the code's cells detect it", 4, 4, 4, 10, 1},
		{"exactly the other cells detect it", 0, 4, 6, 10, -1},
	} {
		tab := &Detection{Genes: 1, L: 1, Both: []int64{c.both}, Used: []int64{c.used}, Ones: []int64{c.ones}, Obs: []int64{c.obs}}
		if got := tab.Phi(0, 0); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: phi %v, want %v", c.name, got, c.want)
		}
	}
}

// pearson is the sample correlation of x and y; 0 when either is constant.
func pearson(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx, my = mx+x[i]/n, my+y[i]/n
	}
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}
