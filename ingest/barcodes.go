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
// It sorts one hash per cell rather than building a map of strings, so a
// million barcodes cost 16 MB for a moment.
func checkUniqueBarcodes(bcs []string, where string) error {
	type keyed struct {
		h uint64
		i int
	}
	seed := maphash.MakeSeed()
	ks := make([]keyed, len(bcs))
	for i, b := range bcs {
		ks[i] = keyed{maphash.String(seed, b), i}
	}
	// By hash, then barcode (so that equal barcodes are neighbours even
	// where two hashes collide), then position.
	slices.SortFunc(ks, func(a, b keyed) int {
		if c := cmp.Compare(a.h, b.h); c != 0 {
			return c
		}
		if c := strings.Compare(bcs[a.i], bcs[b.i]); c != 0 {
			return c
		}
		return a.i - b.i
	})
	first := -1 // the later cell of the pair reported: the first repeat in input order
	var pair [2]int
	for j := 1; j < len(ks); j++ {
		a, b := ks[j-1], ks[j]
		if a.h == b.h && bcs[a.i] == bcs[b.i] && (first < 0 || b.i < first) {
			first, pair = b.i, [2]int{a.i, b.i}
		}
	}
	if first >= 0 {
		return fmt.Errorf("ingest: %s: barcode %q names two cells (cells %d and %d): joins by barcode would be ambiguous; make the barcodes unique (for example with a suffix per sample)",
			where, bcs[pair[0]], pair[0]+1, pair[1]+1)
	}
	return nil
}
