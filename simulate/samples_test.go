package simulate

import (
	"context"
	"math"
	"math/bits"
	"strings"
	"testing"
)

// TestSamples draws a single-cell simulation of several samples: the
// sample programs are used in their sample's cells only, by about the
// fraction asked; each sample's background detection scales with its
// background factor; the names follow ingest's.
func TestSamples(t *testing.T) {
	t.Parallel()
	p := DefaultSingleCellParams()
	p.Cells, p.Genes, p.L, p.Seed = 3000, 600, 4, 7
	p.SingleCell.DepthSigma = 0 // depth from the samples alone
	p.Samples = SampleParams{Samples: 3, DepthSigma: 0, BackgroundSigma: 0.7, Programs: 2, ProgramFraction: 0.4}
	tr, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Programs() != 6 || len(tr.U) != 6 {
		t.Fatalf("%d programs, want L + 2 sample programs = 6", len(tr.U))
	}
	for k := range 2 {
		z := tr.Z[p.L+k]
		lo, hi := tr.sampleRange(k)
		in := 0
		for n := range p.Cells {
			if z[n/64]>>(n%64)&1 == 1 {
				if n < lo || n >= hi {
					t.Fatalf("sample program %d used by cell %d of sample %d", k+1, n, tr.SampleOf(n)+1)
				}
				in++
			}
		}
		if f := float64(in) / float64(hi-lo); math.Abs(f-0.4) > 0.06 {
			t.Errorf("sample program %d: %.2f of its sample's cells, want about 0.4", k+1, f)
		}
	}
	// Background ones per cell (observed, not covered) in each sample,
	// against the baseline rates scaled by the sample's factor.
	b := tr.newRowBuf()
	bg := make([]float64, 3)
	for n := range p.Cells {
		tr.draw(n, b)
		for i, w := range b.row {
			bg[tr.SampleOf(n)] += float64(bits.OnesCount64(w &^ b.clean[i]))
		}
	}
	for s := range 3 {
		var want float64 // expected background ones of a cell of sample s
		for g, mu := range tr.Baseline {
			if p := 1 - math.Exp(-tr.SampleBackground[s]*tr.SampleDepth[s]*mu); p > 0 {
				want += p * (1 - coveredShare(tr, g, s))
			}
		}
		got := bg[s] / float64(p.Cells/3)
		if math.Abs(got-want)/want > 0.1 {
			t.Errorf("sample %d (background factor %.2f): %.1f background ones a cell, want about %.1f", s+1, tr.SampleBackground[s], got, want)
		}
	}
	if name := tr.CellName(p.Cells - 1); !strings.HasSuffix(name, "-sample3") || !strings.HasPrefix(name, tr.Barcode(p.Cells-1)) {
		t.Errorf("last cell named %q", name)
	}
	if ms := tr.manifestSamples(); len(ms) != 3 || ms[1].FirstCell != 1000 || ms[2].CellsAfter != 1000 {
		t.Errorf("manifest samples %+v", ms)
	}
	for _, bad := range []SampleParams{{Samples: 2, ProgramFraction: 0, Programs: 1}, {Samples: 0, DepthSigma: 1}, {Samples: 2, DepthSigma: 4}} {
		q := p
		q.Samples = bad
		if _, err := New(context.Background(), q); err == nil {
			t.Errorf("samples %+v accepted", bad)
		}
	}
	q := DefaultParams()
	q.Samples = DefaultSampleParams(2)
	if _, err := New(context.Background(), q); err == nil || !strings.Contains(err.Error(), "singlecell") {
		t.Errorf("samples of the ormachine kind: %v", err)
	}
}

// coveredShare returns the share of sample s's cells whose programs cover
// gene g (their background is not counted there).
func coveredShare(tr *Truth, g, s int) float64 {
	lo, hi := tr.sampleRange(s)
	clean := make([]uint64, tr.words)
	c := 0
	for n := lo; n < hi; n++ {
		tr.CleanRow(n, clean)
		c += int(clean[g/64] >> (g % 64) & 1)
	}
	return float64(c) / float64(hi-lo)
}
