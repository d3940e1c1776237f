package rundir

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
)

// Codes is the content of codes.parquet: for each gene, the posterior mean
// of its row of U, the probability that each code switches the gene on.
type Codes struct {
	GeneIDs   []string // e.g. Ensembl ids; one per gene
	GeneNames []string // gene symbols, same length as GeneIDs
	L         int      // number of codes, at least 1
	// Mean is genes × L, row-major: Mean[g*L+k] is the posterior mean of
	// u for gene g and code k+1 (column code_(k+1)).
	Mean []float64
	// Score, when not nil, is genes × L like Mean: how specific gene g is
	// to code k's cells under the fit (gibbs.Detection.Phi: the
	// correlation between the gene's detection and the code's use across
	// cells), the order in which a program's genes are read (columns
	// score_1 … score_L, after the codes).
	Score []float64
	// Housekeeping, when not nil, is the posterior mean of each gene's u in
	// the fit's housekeeping code, the code every cell uses (column
	// housekeeping, after the codes); it is not one of the L codes.
	Housekeeping []float64
	// GeneLift, when not nil, is each gene's offset to the log-odds gain of
	// a covered one at the end of the fit (dropout noise with per-gene
	// levels; gibbs.Result.GeneLift): column gene_lift, last.
	GeneLift []float64
	// Samples and SampleGeneLift, when not nil, are the samples of shards
	// ingested from several inputs, fitted with their own gene levels
	// (gibbs.Result.SampleGeneLift), and each one's gene offsets, which
	// its cells' entries take in place of GeneLift (then their mean):
	// columns gene_lift.NAME, after gene_lift, in the shards' sample
	// order. A cell's sample is its cells.parquet sample.
	Samples        []string
	SampleGeneLift [][]float64
}

// geneLiftColumn names the column of codes.parquet that holds each gene's
// offset (per-gene background levels), and sampleLiftPrefix, with the
// sample's name after it, those of each sample's offsets.
const (
	geneLiftColumn   = "gene_lift"
	sampleLiftPrefix = geneLiftColumn + "."
)

// housekeepingColumn names the column of codes.parquet that holds the
// housekeeping code.
const housekeepingColumn = "housekeeping"

// Cells is the content of cells.parquet: for each cell, the posterior mean
// of its row of Z, the probability that the cell uses each code.
type Cells struct {
	Barcodes []string // nil when read by ReadCellMeans
	// Samples, when not nil, holds each cell's sample (shards ingested
	// from several samples): column sample, after barcode. Nil when read
	// by ReadCellMeans.
	Samples []string
	L       int
	// Mean is cells × L, row-major: Mean[n*L+k] is the posterior mean of z
	// for cell n and code k+1.
	Mean []float64
	// Dropout and Background, when not nil, are each cell's rates at the
	// end of the fit, P(x = 0 | covered) and P(x = 1 | not covered)
	// (dropout noise with per-cell levels): columns dropout and background,
	// after the codes.
	Dropout, Background []float64
}

// sampleColumn names the column of cells.parquet that holds each cell's
// sample.
const sampleColumn = "sample"

// The columns of cells.parquet that hold each cell's rates.
const (
	dropoutColumn    = "dropout"
	backgroundColumn = "background"
)

// Phase tells the burn-in sweeps of a trace from the sampling sweeps whose
// draws enter the posterior means.
type Phase string

// The phases of a sweep, as written in trace.parquet's phase column.
const (
	PhaseBurnIn Phase = "burn-in"
	PhaseSample Phase = "sample"
)

// TraceRow is one row of trace.parquet: the state of a chain after one
// sweep.
type TraceRow struct {
	Sweep         int64   // 1-based sweep number
	Phase         Phase   // PhaseBurnIn or PhaseSample
	Lambda        float64 // dispersion λ after the sweep (symmetric noise; NaN under dropout noise)
	Dropout       float64 // P(x = 0 | covered) after the sweep
	Background    float64 // P(x = 1 | not covered) after the sweep
	LogLik        float64 // log-likelihood of the training data
	TrainAccuracy float64 // fraction of training entries reconstructed correctly
	Flips         int64   // number of entries of Z and U that changed in the sweep
	Seconds       float64 // wall-clock seconds the sweep took
}

// WriteCodes writes c to path as codes.parquet, atomically.
func WriteCodes(path string, c Codes) error { return writeCodes(path, c, batchRows) }

func writeCodes(path string, c Codes, batch int) error {
	rows := len(c.GeneIDs)
	if err := checkMatrix(rows, c.L, c.Mean); err != nil {
		return fmt.Errorf("rundir: %s: %w", path, err)
	}
	if len(c.GeneNames) != rows {
		return fmt.Errorf("rundir: %s: %d gene names for %d gene ids", path, len(c.GeneNames), rows)
	}
	cols := append([]column{namesColumn("gene_id", c.GeneIDs), namesColumn("gene_name", c.GeneNames)},
		matrixColumns(codePrefix, c.Mean, c.L)...)
	if c.Score != nil {
		if len(c.Score) != len(c.Mean) {
			return fmt.Errorf("rundir: %s: %d scores for %d posterior means", path, len(c.Score), len(c.Mean))
		}
		cols = append(cols, matrixColumns(scorePrefix, c.Score, c.L)...)
	}
	if c.Housekeeping != nil {
		if len(c.Housekeeping) != rows {
			return fmt.Errorf("rundir: %s: %d housekeeping means for %d genes", path, len(c.Housekeeping), rows)
		}
		cols = append(cols, float64Column(housekeepingColumn, c.Housekeeping))
	}
	if c.GeneLift != nil {
		if len(c.GeneLift) != rows {
			return fmt.Errorf("rundir: %s: %d gene offsets for %d genes", path, len(c.GeneLift), rows)
		}
		cols = append(cols, float64Column(geneLiftColumn, c.GeneLift))
	}
	if len(c.Samples) != len(c.SampleGeneLift) || c.Samples != nil && c.GeneLift == nil {
		return fmt.Errorf("rundir: %s: %d samples, %d samples' gene offsets, gene offsets %v", path, len(c.Samples), len(c.SampleGeneLift), c.GeneLift != nil)
	}
	for i, lift := range c.SampleGeneLift {
		if len(lift) != rows {
			return fmt.Errorf("rundir: %s: %d gene offsets of sample %q for %d genes", path, len(lift), c.Samples[i], rows)
		}
		cols = append(cols, float64Column(sampleLiftPrefix+c.Samples[i], lift))
	}
	return writeTable(path, "codes", cols, rows, batch)
}

// ReadCodes reads a codes.parquet file written by WriteCodes (or by any tool
// that keeps its column names and types).
func ReadCodes(path string) (Codes, error) {
	var c Codes
	err := readTable(path, func(s *arrow.Schema, rows int) ([]sink, error) {
		str := arrow.BinaryTypes.String
		if err := checkFields(s, 0, []string{"gene_id", "gene_name"}, []arrow.DataType{str, str}); err != nil {
			return nil, err
		}
		// Optional columns after the codes: housekeeping, then gene_lift,
		// then the samples' gene_lift.NAME.
		tail := 0
		var samples []string
		for i := s.NumFields() - 1; i > 2 && strings.HasPrefix(s.Field(i).Name, sampleLiftPrefix); i-- {
			if err := checkFields(s, i, []string{s.Field(i).Name}, []arrow.DataType{arrow.PrimitiveTypes.Float64}); err != nil {
				return nil, err
			}
			samples = append(samples, strings.TrimPrefix(s.Field(i).Name, sampleLiftPrefix))
			tail++
		}
		slices.Reverse(samples)
		optional := func(name string) (bool, error) {
			i := s.NumFields() - 1 - tail
			if i < 2 || s.Field(i).Name != name {
				return false, nil
			}
			tail++
			return true, checkFields(s, i, []string{name}, []arrow.DataType{arrow.PrimitiveTypes.Float64})
		}
		lift, err := optional(geneLiftColumn)
		if err != nil {
			return nil, err
		}
		hk, err := optional(housekeepingColumn)
		if err != nil {
			return nil, err
		}
		L, scored, err := codeColumns(s, 2, tail)
		if err != nil {
			return nil, err
		}
		c = Codes{GeneIDs: make([]string, rows), GeneNames: make([]string, rows), L: L, Mean: make([]float64, rows*L)}
		sinks := append([]sink{stringSink(c.GeneIDs), stringSink(c.GeneNames)}, matrixSinks(c.Mean, L)...)
		if scored {
			c.Score = make([]float64, rows*L)
			sinks = append(sinks, matrixSinks(c.Score, L)...)
		}
		if hk {
			c.Housekeeping = make([]float64, rows)
			sinks = append(sinks, float64Sink(c.Housekeeping))
		}
		if lift {
			c.GeneLift = make([]float64, rows)
			sinks = append(sinks, float64Sink(c.GeneLift))
		} else if samples != nil {
			return nil, fmt.Errorf("%d samples' gene offsets (%s…) without the genes' (%s)", len(samples), sampleLiftPrefix+samples[0], geneLiftColumn)
		}
		for _, name := range samples {
			lift := make([]float64, rows)
			c.Samples, c.SampleGeneLift = append(c.Samples, name), append(c.SampleGeneLift, lift)
			sinks = append(sinks, float64Sink(lift))
		}
		return sinks, nil
	})
	return c, err
}

// WriteCells writes c to path as cells.parquet, atomically.
func WriteCells(path string, c Cells) error { return writeCells(path, c, batchRows) }

func writeCells(path string, c Cells, batch int) error {
	rows := len(c.Barcodes)
	if err := checkMatrix(rows, c.L, c.Mean); err != nil {
		return fmt.Errorf("rundir: %s: %w", path, err)
	}
	cols := []column{namesColumn("barcode", c.Barcodes)}
	if c.Samples != nil {
		if len(c.Samples) != rows {
			return fmt.Errorf("rundir: %s: %d samples for %d cells", path, len(c.Samples), rows)
		}
		cols = append(cols, namesColumn(sampleColumn, c.Samples))
	}
	cols = append(cols, matrixColumns(codePrefix, c.Mean, c.L)...)
	if (c.Dropout == nil) != (c.Background == nil) || c.Dropout != nil && (len(c.Dropout) != rows || len(c.Background) != rows) {
		return fmt.Errorf("rundir: %s: %d dropout and %d background rates for %d cells", path, len(c.Dropout), len(c.Background), rows)
	}
	if c.Dropout != nil {
		cols = append(cols, float64Column(dropoutColumn, c.Dropout), float64Column(backgroundColumn, c.Background))
	}
	return writeTable(path, "cells", cols, rows, batch)
}

// ReadCells reads a cells.parquet file written by WriteCells.
func ReadCells(path string) (Cells, error) { return readCells(path, true) }

// ReadCellMeans reads the posterior means of a cells.parquet file and not
// its barcodes (Barcodes is nil): for readers that need only the means, a
// million barcodes cost more to read than ten columns of doubles.
func ReadCellMeans(path string) (Cells, error) { return readCells(path, false) }

func readCells(path string, barcodes bool) (Cells, error) {
	var c Cells
	err := readTable(path, func(s *arrow.Schema, rows int) ([]sink, error) {
		if err := checkFields(s, 0, []string{"barcode"}, []arrow.DataType{arrow.BinaryTypes.String}); err != nil {
			return nil, err
		}
		f := s.NumFields()
		rated := f > 3 && s.Field(f-2).Name == dropoutColumn && s.Field(f-1).Name == backgroundColumn
		tail := 0
		if rated {
			dbl := arrow.PrimitiveTypes.Float64
			if err := checkFields(s, f-2, []string{dropoutColumn, backgroundColumn}, []arrow.DataType{dbl, dbl}); err != nil {
				return nil, err
			}
			tail = 2
		}
		from := 1
		sampled := f > 1 && s.Field(1).Name == sampleColumn
		if sampled {
			if err := checkFields(s, 1, []string{sampleColumn}, []arrow.DataType{arrow.BinaryTypes.String}); err != nil {
				return nil, err
			}
			from = 2
		}
		L, scored, err := codeColumns(s, from, tail)
		if err != nil {
			return nil, err
		}
		if scored {
			return nil, errors.New("score columns in a cells table")
		}
		c = Cells{L: L, Mean: make([]float64, rows*L)}
		var bc sink
		if barcodes {
			c.Barcodes = make([]string, rows)
			bc = stringSink(c.Barcodes)
		}
		sinks := []sink{bc}
		if sampled {
			var sm sink
			if barcodes {
				c.Samples = make([]string, rows)
				sm = stringSink(c.Samples)
			}
			sinks = append(sinks, sm)
		}
		sinks = append(sinks, matrixSinks(c.Mean, L)...)
		if rated {
			c.Dropout, c.Background = make([]float64, rows), make([]float64, rows)
			sinks = append(sinks, float64Sink(c.Dropout), float64Sink(c.Background))
		}
		return sinks, nil
	})
	return c, err
}

// Len returns the number of cells.
func (c Cells) Len() int { return len(c.Mean) / max(c.L, 1) }

func checkMatrix(rows, L int, mean []float64) error {
	if L < 1 {
		return fmt.Errorf("L = %d, want at least 1", L)
	}
	if len(mean) != rows*L {
		return fmt.Errorf("posterior mean has %d values, want %d rows × L = %d", len(mean), rows, L)
	}
	return nil
}

// traceNames and traceTypes are the columns of trace.parquet, in order.
var (
	traceNames = []string{"sweep", "phase", "lambda", "dropout", "background", "loglik", "train_accuracy", "flips", "seconds"}
	traceTypes = []arrow.DataType{
		arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64,
		arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float64,
		arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Float64,
	}
)

// WriteTrace writes rows to path as trace.parquet, atomically.
func WriteTrace(path string, rows []TraceRow) error { return writeTrace(path, rows, batchRows) }

func writeTrace(path string, rows []TraceRow, batch int) error {
	n := len(rows)
	var (
		sweep, flips                 = make([]int64, n), make([]int64, n)
		phase                        = make([]string, n)
		lambda, loglik, acc, seconds = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		dropout, background          = make([]float64, n), make([]float64, n)
	)
	for i, r := range rows {
		if r.Phase != PhaseBurnIn && r.Phase != PhaseSample {
			return fmt.Errorf("rundir: %s: row %d: phase %q, want %q or %q", path, i+1, r.Phase, PhaseBurnIn, PhaseSample)
		}
		sweep[i], phase[i], lambda[i], loglik[i] = r.Sweep, string(r.Phase), r.Lambda, r.LogLik
		dropout[i], background[i] = r.Dropout, r.Background
		acc[i], flips[i], seconds[i] = r.TrainAccuracy, r.Flips, r.Seconds
	}
	cols := []column{
		int64Column("sweep", sweep), stringColumn("phase", phase), float64Column("lambda", lambda),
		float64Column("dropout", dropout), float64Column("background", background),
		float64Column("loglik", loglik), float64Column("train_accuracy", acc), int64Column("flips", flips),
		float64Column("seconds", seconds),
	}
	return writeTable(path, "trace", cols, n, batch)
}

// ReadTrace reads a trace.parquet file written by WriteTrace.
func ReadTrace(path string) ([]TraceRow, error) {
	var (
		sweep, flips                 []int64
		phase                        []string
		lambda, loglik, acc, seconds []float64
		dropout, background          []float64
	)
	err := readTable(path, func(s *arrow.Schema, n int) ([]sink, error) {
		if err := checkFields(s, 0, traceNames, traceTypes); err != nil {
			return nil, err
		}
		if s.NumFields() != len(traceNames) {
			return nil, fmt.Errorf("%d columns, want %d", s.NumFields(), len(traceNames))
		}
		sweep, flips, phase = make([]int64, n), make([]int64, n), make([]string, n)
		lambda, loglik, acc, seconds = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		dropout, background = make([]float64, n), make([]float64, n)
		return []sink{int64Sink(sweep), stringSink(phase), float64Sink(lambda), float64Sink(dropout),
			float64Sink(background), float64Sink(loglik), float64Sink(acc), int64Sink(flips), float64Sink(seconds)}, nil
	})
	if err != nil {
		return nil, err
	}
	rows := make([]TraceRow, len(sweep))
	for i := range rows {
		p := Phase(phase[i])
		if p != PhaseBurnIn && p != PhaseSample {
			return nil, fmt.Errorf("rundir: %s: row %d: phase %q, want %q or %q", path, i+1, p, PhaseBurnIn, PhaseSample)
		}
		rows[i] = TraceRow{sweep[i], p, lambda[i], dropout[i], background[i], loglik[i], acc[i], flips[i], seconds[i]}
	}
	return rows, nil
}
