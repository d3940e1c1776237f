package report

import (
	"cmp"
	"slices"
)

// usage groups the cells of one fit by their usage pattern, the set of
// codes whose posterior mean of z is at or above the threshold, keeping for
// each pattern its number of cells and the sum of their posterior means.
// That is all a heat map of cell usage needs once the cells are ordered by
// pattern: a band of cells inside one pattern shows the pattern's mean, and
// the memory is that of the patterns, at most min(cells, 2^L), not of the
// cells.
type usage struct {
	L     int
	Cells int
	// Patterns lists each pattern's codes as bytes, 1 for a code the
	// cells use and 0 otherwise (L bytes per pattern), in the order first
	// seen; Count and Sum run parallel to it (Sum is patterns × L).
	Patterns []string
	Count    []int
	Sum      []float64
}

// countUsage groups the cells of mean (cells × L, row-major posterior means
// of z) by pattern.
func countUsage(mean []float64, L int, threshold float64) *usage {
	u := &usage{L: L, Cells: len(mean) / L}
	// Up to 64 codes a pattern is also a bit mask, a cheaper key than its
	// bytes.
	masks, keys := map[uint64]int{}, map[string]int{}
	key := make([]byte, L)
	for n := range u.Cells {
		row := mean[n*L : (n+1)*L]
		var mask uint64
		for k, z := range row {
			key[k] = 0
			if z >= threshold {
				key[k] = 1
				mask |= 1 << (k % 64)
			}
		}
		var p int
		var ok bool
		if L <= 64 {
			p, ok = masks[mask]
		} else {
			p, ok = keys[string(key)] // no allocation for the lookup
		}
		if !ok {
			p = len(u.Patterns)
			if L <= 64 {
				masks[mask] = p
			} else {
				keys[string(key)] = p
			}
			u.Patterns = append(u.Patterns, string(key))
			u.Count = append(u.Count, 0)
			u.Sum = append(u.Sum, make([]float64, L)...)
		}
		u.Count[p]++
		sum := u.Sum[p*L : (p+1)*L]
		for k, z := range row {
			sum[k] += z
		}
	}
	return u
}

// idle returns the number of cells that use none of the codes k with
// uses[k] set.
func (u *usage) idle(uses []bool) int {
	n := 0
	for p, pat := range u.Patterns {
		used := false
		for k := range u.L {
			used = used || pat[k] == 1 && uses[k]
		}
		if !used {
			n += u.Count[p]
		}
	}
	return n
}

// order returns the patterns sorted for display with the codes compared in
// the order codes (0-based; every code once): cells using codes[0] first,
// among them those using codes[1] first, and so on, so that the cells of
// each program come together as its genes do in the genes heat map; cells
// using no code last.
func (u *usage) order(codes []int) []int {
	idx := make([]int, len(u.Patterns))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		pa, pb := u.Patterns[a], u.Patterns[b]
		for _, k := range codes {
			if c := cmp.Compare(pb[k], pa[k]); c != 0 {
				return c
			}
		}
		return 0
	})
	return idx
}

// bands returns the mean posterior usage of the cells, ordered by pattern
// (see order), in rows bands of equal numbers of cells: rows × len(codes),
// row-major, the columns in the order of codes. A band that straddles two
// patterns mixes their means in proportion to the cells it takes from each.
// With fewer cells than rows, each band is one cell. It also returns the
// patterns in display order with the band (as a fraction of rows, from 0)
// where each starts.
func (u *usage) bands(codes []int, rows int) (z []float64, rowsOut int, order []int, start []float64) {
	rows = max(min(rows, u.Cells), 1)
	C := len(codes)
	z = make([]float64, rows*C)
	order = u.order(codes)
	start = make([]float64, len(order))
	per := float64(u.Cells) / float64(rows) // cells per band
	at := 0.0                               // first cell of the current pattern
	for i, p := range order {
		start[i] = at / per
		end := at + float64(u.Count[p])
		mean := u.Sum[p*u.L : (p+1)*u.L]
		inv := 1 / float64(u.Count[p])
		// Bands b whose cells [b·per, (b+1)·per) meet [at, end).
		for b := int(at / per); b < rows && float64(b)*per < end; b++ {
			lo, hi := max(at, float64(b)*per), min(end, float64(b+1)*per)
			if hi <= lo {
				continue
			}
			w := (hi - lo) / per * inv
			row := z[b*C : (b+1)*C]
			for j, k := range codes {
				row[j] += w * mean[k]
			}
		}
		at = end
	}
	return z, rows, order, start
}
