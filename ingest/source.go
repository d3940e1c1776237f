package ingest

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// batchSize is the number of entries a source hands over at a time: large
// enough to amortise the call, small enough to stay in L2 cache.
const batchSize = 1 << 15

// batch is a run of stored entries in source order, already oriented:
// entry k is (cell[k], gene[k]) with value val[k]. Sources that store each
// cell's entries together (10x CSC, AnnData CSR) may instead leave cell
// unset and list the batch's cells in runs, so that consumers handle a cell
// once rather than once per entry. The slices are reused by the source
// after the callback returns.
type batch struct {
	cell []int32
	gene []int32
	val  []float64
	runs []cellRun // when not nil, cell is not set
}

// cellRun says entries from the previous run's end (0 for the first) up to
// end belong to cell. Runs of a batch are in order and none is empty.
type cellRun struct {
	cell, end int32
}

func newBatch() *batch {
	return &batch{
		cell: make([]int32, 0, batchSize),
		gene: make([]int32, 0, batchSize),
		val:  make([]float64, 0, batchSize),
	}
}

func (b *batch) reset() {
	b.cell, b.gene, b.val = b.cell[:0], b.gene[:0], b.val[:0]
}

func (b *batch) full() bool { return len(b.cell) == cap(b.cell) }

// features holds per-gene annotations in input order; Names and Types may be
// nil when the input does not store them.
type features struct {
	IDs     []string
	Names   []string
	Types   []string
	Genomes []string
}

// source is one opened input matrix. Every format validates what it reads
// (indices against the shape, pointers against lengths, values non-negative
// and finite) and fails with an error naming the file and the problem.
type source interface {
	// shape returns cells × genes after orientation.
	shape() (cells, genes int)
	// entries returns the number of entries scan will produce, or -1 when
	// that is only known after a scan (dense matrices yield their nonzeros).
	entries() int64
	features() features
	barcodes() []string
	// describe says what was read.
	describe() sourceInfo
	// scan streams every stored entry once, in batches, to fn. It may be
	// called more than once; it stops at the first error of fn or of the
	// input, or when ctx is done.
	scan(ctx context.Context, fn func(*batch) error) error
	// startHash starts hashing the input in the background, where the
	// source does not hash it as it scans.
	startHash()
	// sha256 returns the hex SHA-256 of the input file; it may wait for a
	// background hash to finish (and start it, if startHash was not
	// called).
	sha256() (string, error)
	// bytes returns the size of the files read.
	bytes() int64
	close() error
}

// sourceInfo describes what a source reads.
type sourceInfo struct {
	format Format
	matrix string // what was read: the matrix file, HDF5 group or dataset
	genome string // the 10x genome, when known
	layer  string // the AnnData matrix read ("X", "raw/X", "layers/NAME")
	// barcodes names the file the barcodes come from, when it is not the
	// matrix's (a 10x MTX folder's barcodes.tsv); genes likewise for the
	// genes (features.tsv).
	barcodes, genes string
}

// errValue marks a value that cannot be binarised as a count.
var errValue = errors.New("not a count")

// checkValue rejects values that cannot be counts: negative (scaled or
// centred data), NaN and infinities.
func checkValue(v float64) error {
	switch {
	case math.IsNaN(v):
		return fmt.Errorf("%w: NaN", errValue)
	case math.IsInf(v, 0):
		return fmt.Errorf("%w: %v", errValue, v)
	case v < 0:
		return fmt.Errorf("%w: negative value %v (scaled or log-centred data? read raw counts, e.g. with --layer counts or --layer raw)", errValue, v)
	}
	return nil
}
