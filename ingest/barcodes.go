package ingest

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
)

// checkUniqueBarcodes refuses two cells of one barcode: every later join
// by barcode (enrich's cells, evaluate's truth, a user's metadata) would
// be ambiguous. where names the file or dataset that holds the barcodes.
func checkUniqueBarcodes(bcs []string, where string) error {
	if a, b := firstRepeat(bcs); a >= 0 {
		return fmt.Errorf("ingest: %s: barcode %q names two cells (cells %d and %d): joins by barcode would be ambiguous; make the barcodes unique (for example with a suffix per sample)",
			where, bcs[a], a+1, b+1)
	}
	return nil
}

// firstRepeat returns the positions of the first name that repeats an
// earlier one, in input order, and of that earlier one (a < b), or −1 and
// −1. It sorts one hash per name rather than building a map of strings, so
// a million barcodes cost 16 MB for a moment.
func firstRepeat(names []string) (a, b int) {
	type keyed struct {
		h uint64
		i int
	}
	seed := maphash.MakeSeed()
	ks := make([]keyed, len(names))
	for i, n := range names {
		ks[i] = keyed{maphash.String(seed, n), i}
	}
	// By hash, then name (so that equal names are neighbours even where
	// two hashes collide), then position.
	slices.SortFunc(ks, func(x, y keyed) int {
		if c := cmp.Compare(x.h, y.h); c != 0 {
			return c
		}
		if c := strings.Compare(names[x.i], names[y.i]); c != 0 {
			return c
		}
		return x.i - y.i
	})
	a, b = -1, -1
	for j := 1; j < len(ks); j++ {
		x, y := ks[j-1], ks[j]
		if x.h == y.h && names[x.i] == names[y.i] && (b < 0 || y.i < b) {
			a, b = x.i, y.i
		}
	}
	return a, b
}
