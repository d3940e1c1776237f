package bench

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// errOptions is wrapped by the errors that report invalid benchmark options,
// such as a size ladder that does not parse.
var errOptions = errors.New("bench: invalid options")

// The paper's mouse brain atlas after the gene filter: the default size.
const (
	paperCells = 1_300_000
	paperGenes = 11_000
)

// DefaultSizes is the default size ladder: the paper's data alone.
const DefaultSizes = "1300000x11000"

// minCellsAtPaperGenes is the fewest cells for which an entry count is laid
// out with the paper's gene count; smaller counts become square matrices.
const minCellsAtPaperGenes = 1000

// maxEntries bounds a size so that cells × genes is exact in a float64 and
// fits an int on every platform Go supports with 64-bit ints.
const maxEntries = 1 << 53

// Size is the shape of one benchmark dataset: Cells × Genes entries.
type Size struct {
	Cells int `json:"cells"`
	Genes int `json:"genes"`
}

// Entries returns Cells · Genes.
func (s Size) Entries() int64 { return int64(s.Cells) * int64(s.Genes) }

// String returns the shape as "CELLSxGENES", the form ParseSizes reads back.
func (s Size) String() string { return fmt.Sprintf("%dx%d", s.Cells, s.Genes) }

// shapeFor lays out an entry count as a dataset: the paper's 11,000 genes
// and entries/11,000 cells (rounded), so that a ladder of entry counts grows
// the number of cells as real atlases do; counts too small for a thousand
// cells at that width become a near-square matrix.
func shapeFor(entries int64) Size {
	if entries >= int64(paperGenes)*minCellsAtPaperGenes {
		return Size{Cells: int(math.Round(float64(entries) / paperGenes)), Genes: paperGenes}
	}
	g := max(1, int(math.Round(math.Sqrt(float64(entries)))))
	return Size{Cells: max(1, int(math.Round(float64(entries)/float64(g)))), Genes: g}
}

// ParseSizes parses a comma-separated ladder of dataset sizes. Each item is
// an entry count ("1e8", "1.4e10", "100000000", laid out by shapeFor) or a
// shape "CELLSxGENES" (also "CELLS×GENES"; each side a whole number, which
// may be written as "1.3e6"). The ladder keeps the order given.
func ParseSizes(spec string) ([]Size, error) {
	bad := func(item, why string) ([]Size, error) {
		return nil, fmt.Errorf("%w: size %q: %s (examples: 1e8,1e9,1.4e10 or 1300000x11000)", errOptions, item, why)
	}
	if strings.TrimSpace(spec) == "" {
		return bad(spec, "empty")
	}
	var sizes []Size
	for item := range strings.SplitSeq(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return bad(spec, "empty item in the list")
		}
		n, d, isShape := cutShape(item)
		if !isShape {
			e, err := wholeNumber(item)
			if err != nil {
				return bad(item, err.Error())
			}
			sizes = append(sizes, shapeFor(e))
			continue
		}
		cells, err := wholeNumber(n)
		if err != nil {
			return bad(item, "cells: "+err.Error())
		}
		genes, err := wholeNumber(d)
		if err != nil {
			return bad(item, "genes: "+err.Error())
		}
		if float64(cells)*float64(genes) > maxEntries {
			return bad(item, "more than 2^53 entries")
		}
		sizes = append(sizes, Size{Cells: int(cells), Genes: int(genes)})
	}
	return sizes, nil
}

// cutShape splits "NxD", "NXD" or "N×D".
func cutShape(s string) (string, string, bool) {
	for _, sep := range []string{"×", "x", "X"} {
		if n, d, ok := strings.Cut(s, sep); ok {
			return strings.TrimSpace(n), strings.TrimSpace(d), true
		}
	}
	return "", "", false
}

// wholeNumber parses a positive whole number, written plainly or in
// scientific notation ("1.4e10"), up to 2^53.
func wholeNumber(s string) (int64, error) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		if v < 1 || v > maxEntries {
			return 0, fmt.Errorf("%d is outside 1..2^53", v)
		}
		return v, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if !(f >= 1 && f <= maxEntries) {
		return 0, fmt.Errorf("%v is outside 1..2^53", f)
	}
	if f != math.Trunc(f) {
		return 0, fmt.Errorf("%v is not a whole number", f)
	}
	return int64(f), nil
}
