package bench

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestParseSizes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec string
		want []Size
	}{
		{"1300000x11000", []Size{{paperCells, paperGenes}}},
		{"1300000×11000", []Size{{paperCells, paperGenes}}},
		{"500X300", []Size{{500, 300}}},
		{"1.3e6x1.1e4", []Size{{paperCells, paperGenes}}},
		{"1e8", []Size{{9091, 11000}}},
		{"1e8, 1e9 ,1.4e10", []Size{{9091, 11000}, {90909, 11000}, {1272727, 11000}}},
		{"100000000", []Size{{9091, 11000}}},
		{"10000", []Size{{100, 100}}},
		{"1", []Size{{1, 1}}},
		{"64x64,1e8", []Size{{64, 64}, {9091, 11000}}},
	}
	for _, tt := range tests {
		got, err := ParseSizes(tt.spec)
		if err != nil {
			t.Errorf("ParseSizes(%q): %v", tt.spec, err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("ParseSizes(%q) = %v, want %v", tt.spec, got, tt.want)
		}
	}
}

func TestParseSizesErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ spec, mention string }{
		{"", "empty"},
		{"  ", "empty"},
		{"1e8,,1e9", "empty item"},
		{"abc", `"abc" is not a number`},
		{"0", "outside"},
		{"-5", "outside"},
		{"1.5", "not a whole number"},
		{"1e30", "outside"},
		{"NaN", "outside"},
		{"1e8x", "genes"},
		{"x100", "cells"},
		{"10x0", "genes"},
		{"1.5x3", "cells"},
		{"100000000x100000000", "2^53"},
	}
	for _, tt := range tests {
		_, err := ParseSizes(tt.spec)
		if err == nil {
			t.Errorf("ParseSizes(%q) succeeded", tt.spec)
			continue
		}
		if !errors.Is(err, errOptions) || !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("ParseSizes(%q) = %v, want errOptions mentioning %q", tt.spec, err, tt.mention)
		}
	}
}

// TestShapeForKeepsEntries checks that a laid-out entry count is off by
// less than half a row and uses the paper's gene count where it can.
func TestShapeForKeepsEntries(t *testing.T) {
	t.Parallel()
	for _, e := range []int64{1, 7, 1000, 12345, 1e6, 11e6, 1e8, 1e9, 14e9, 1 << 40} {
		s := shapeFor(e)
		if s.Cells < 1 || s.Genes < 1 {
			t.Fatalf("ShapeFor(%d) = %v", e, s)
		}
		if d := math.Abs(float64(s.Entries() - e)); d > float64(s.Genes)/2+0.5 {
			t.Errorf("ShapeFor(%d) = %v: %d entries, off by %v", e, s, s.Entries(), d)
		}
		if wide := e >= paperGenes*minCellsAtPaperGenes; wide != (s.Genes == paperGenes) {
			t.Errorf("ShapeFor(%d) = %v: genes %d", e, s, s.Genes)
		}
		back, err := ParseSizes(s.String())
		if err != nil || len(back) != 1 || back[0] != s {
			t.Errorf("ParseSizes(%q) = %v, %v: does not round-trip", s.String(), back, err)
		}
	}
}
