package gibbs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
)

func TestMatrixSegmentsAndTranspose(t *testing.T) {
	t.Parallel()
	cases := []struct{ rows, cols, seg int }{
		{1, 1, 0}, {3, 64, 64}, {5, 65, 64}, {7, 200, 128}, {2, 129, 0}, {130, 3, 0},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%dx%d/seg%d", tc.rows, tc.cols, tc.seg), func(t *testing.T) {
			m := randomMatrix(&testRNG{s: uint64(tc.rows*tc.cols + tc.seg)}, tc.rows, tc.cols, 0.4, tc.seg)
			b := m.Segments()
			if b[0] != 0 || b[len(b)-1] != tc.cols {
				t.Fatalf("segments %v do not span 0..%d", b, tc.cols)
			}
			for s := 1; s+1 < len(b); s++ {
				if b[s]%64 != 0 || (tc.seg != 0 && b[s]-b[s-1] != tc.seg) {
					t.Fatalf("segments %v not split every %d columns", b, tc.seg)
				}
			}
			for i := range tc.rows {
				for s := 0; s+1 < len(b); s++ {
					w := m.Segment(i, s)
					if len(w) != (b[s+1]-b[s]+63)/64 {
						t.Fatalf("segment %d has %d words", s, len(w))
					}
					if r := (b[s+1] - b[s]) % 64; r != 0 && w[len(w)-1]>>uint(r) != 0 {
						t.Fatalf("row %d segment %d has bits past its end", i, s)
					}
				}
				for j := range tc.cols {
					if bitAt(m, i, j) != m.Get(i, j) {
						t.Fatalf("bitAt(%d, %d) disagrees with Get", i, j)
					}
				}
			}
			for _, tseg := range []int{0, 64} {
				mt, err := transposed(m, tseg)
				if err != nil {
					t.Fatal(err)
				}
				if mt.Rows() != tc.cols || mt.Cols() != tc.rows || mt.Count() != m.Count() {
					t.Fatalf("transpose is %d × %d with %d ones", mt.Rows(), mt.Cols(), mt.Count())
				}
				for i := range tc.rows {
					for j := range tc.cols {
						if mt.Get(j, i) != m.Get(i, j) {
							t.Fatalf("transpose differs at (%d, %d)", i, j)
						}
					}
				}
			}
		})
	}
	if _, err := NewSegmentedMatrix(3, 100, 50); !errors.Is(err, errShape) {
		t.Errorf("segment width 50: %v, want errShape", err)
	}
}

func TestNewSamplerRejectsBadInput(t *testing.T) {
	t.Parallel()
	x := randomMatrix(&testRNG{s: 1}, 10, 70, 0.5, 0)
	good, err := NewData(x, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	other := randomMatrix(&testRNG{s: 2}, 10, 70, 0.5, 0)
	otherT, err := transposed(other, 0)
	if err != nil {
		t.Fatal(err)
	}
	mask := randomMatrix(&testRNG{s: 3}, 10, 70, 0.5, 0)
	segMask := randomMatrix(&testRNG{s: 3}, 10, 70, 0.5, 64)
	maskT, err := transposed(mask, 0)
	if err != nil {
		t.Fatal(err)
	}
	mod := func(f func(*Config)) Config {
		c := DefaultConfig()
		f(&c)
		return c
	}
	cases := []struct {
		name string
		data Data
		cfg  Config
		want error
	}{
		{"L 0", good, mod(func(c *Config) { c.L = 0 }), ErrConfig},
		{"L 65", good, mod(func(c *Config) { c.L = 65 }), ErrConfig},
		{"L 64 and the housekeeping code", good, mod(func(c *Config) { c.L, c.Housekeeping = 64, true }), ErrConfig},
		{"no samples", good, mod(func(c *Config) { c.Samples = 0 }), ErrConfig},
		{"thin past samples", good, mod(func(c *Config) { c.Thin = 200 }), ErrConfig},
		{"sweeps summing past an int", good, mod(func(c *Config) { c.BurnIn, c.Samples, c.Starts = math.MaxInt-1000, 10000, 1 }), ErrConfig},
		{"samples past MaxSweeps", good, mod(func(c *Config) { c.Samples = MaxSweeps + 1 }), ErrConfig},
		{"lambda 0", good, mod(func(c *Config) { c.Lambda = 0 }), ErrConfig},
		{"start sweeps past burn-in", good, mod(func(c *Config) { c.StartSweeps = 500 }), ErrConfig},
		{"prior length", good, mod(func(c *Config) { c.PriorZ = FixedPrior(0.1, 0.2, 0.3) }), ErrConfig},
		{"prior 1", good, mod(func(c *Config) { c.PriorU = FixedPrior(1) }), ErrConfig},
		{"XT not the transpose", Data{X: x, XT: otherT}, DefaultConfig(), errShape},
		{"XT wrong shape", Data{X: x, XT: x}, DefaultConfig(), errShape},
		{"mask without MaskT", Data{X: x, XT: good.XT, Mask: mask}, DefaultConfig(), errShape},
		{"mask segments", Data{X: x, XT: good.XT, Mask: segMask, MaskT: maskT}, DefaultConfig(), errShape},
		{"missing X", Data{XT: good.XT}, DefaultConfig(), errShape},
	}
	for _, tc := range cases {
		if _, err := NewSampler(context.Background(), tc.data, tc.cfg); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := NewSampler(context.Background(), good, DefaultConfig()); err != nil {
		t.Errorf("valid input: %v", err)
	}
}

// TestEmpiricalPrior checks that q solves 1 − (1 − q²)^L = density.
func TestEmpiricalPrior(t *testing.T) {
	t.Parallel()
	for _, L := range []int{1, 2, 5, 10} {
		for _, density := range []float64{0.01, 0.07, 0.5, 0.9} {
			q := empiricalQ(density, L)
			got := 1 - pow(1-q*q, L)
			if diff := got - density; diff > 1e-12 || diff < -1e-12 {
				t.Errorf("L %d density %v: q = %v gives density %v", L, density, q, got)
			}
		}
	}
	if q := empiricalQ(0, 3); !(q > 0) {
		t.Errorf("density 0: q = %v, want a positive clamp", q)
	}
}

func pow(x float64, n int) float64 {
	r := 1.0
	for range n {
		r *= x
	}
	return r
}

// TestCountOnes checks countOnes, masked and not, against Get for worker
// counts that split the rows evenly, unevenly and beyond their number.
func TestCountOnes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ rows, cols, seg int }{{1, 70, 0}, {5, 200, 64}, {131, 65, 0}} {
		r := &testRNG{s: uint64(tc.rows + tc.cols)}
		m := randomMatrix(r, tc.rows, tc.cols, 0.3, tc.seg)
		mask := randomMatrix(r, tc.rows, tc.cols, 0.8, tc.seg)
		var want, wantMasked int64
		for i := range tc.rows {
			for j := range tc.cols {
				if m.Get(i, j) {
					want++
					if mask.Get(i, j) {
						wantMasked++
					}
				}
			}
		}
		for _, workers := range []int{1, 2, 3, 7, 200} {
			if got := countOnes(m, nil, workers); got != want {
				t.Errorf("%+v, %d workers: %d ones, want %d", tc, workers, got, want)
			}
			if got := countOnes(m, mask, workers); got != wantMasked {
				t.Errorf("%+v, %d workers: %d masked ones, want %d", tc, workers, got, wantMasked)
			}
		}
	}
}
