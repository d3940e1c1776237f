package simulate

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"

	"scpipe/shard"
)

// Several samples (single-cell kind): the cells are split into
// SampleParams.Samples samples of equal size, in order (cell n is in
// sample n·S/Cells), each with its own depth factor (every cell's size
// factor is multiplied by it) and background factor (every gene's
// baseline rate, in that sample's cells): the batch effects a study's
// libraries show. SamplePrograms adds programs present in one sample only
// (the biology case: a cell type or state only one donor has), used by
// ProgramFraction of that sample's cells; they follow the identity and
// activity programs in the truth. Everything is drawn after the rest, so
// that a simulation without samples is the one drawn before they existed.
type SampleParams struct {
	Samples         int     // number of samples; 0 or 1: one
	DepthSigma      float64 // σ of the log depth factor of a sample, in [0, 3]
	BackgroundSigma float64 // σ of the log background factor of a sample, in [0, 3]
	Programs        int     // programs present in one sample only (program i in sample i mod Samples)
	ProgramFraction float64 // fraction of its sample's cells using such a program, in (0, 1]
}

// DefaultSampleParams returns the settings of scpipe simulate --samples:
// depths differing by about 40% and backgrounds by about 70% (σ 0.35 and
// 0.5) between samples, about what the libraries of one study show, and a
// sample program used by half its sample's cells.
func DefaultSampleParams(samples int) SampleParams {
	return SampleParams{Samples: samples, DepthSigma: 0.35, BackgroundSigma: 0.5, ProgramFraction: 0.5}
}

func (q SampleParams) validate(p Params) error {
	switch {
	case q == SampleParams{}:
		return nil
	case p.Kind != SingleCell:
		return fmt.Errorf("simulate: samples need the %s kind (their depth and background are its rates)", SingleCell)
	case q.Samples < 1 || q.Samples > min(p.Cells, 1<<16):
		return fmt.Errorf("simulate: %d samples: want 1 to min(cells, 65536)", q.Samples)
	case !(q.DepthSigma >= 0 && q.DepthSigma <= maxSigma) || !(q.BackgroundSigma >= 0 && q.BackgroundSigma <= maxSigma):
		return fmt.Errorf("simulate: sample depth and background σ must be in [0, %d] (got %v, %v)", maxSigma, q.DepthSigma, q.BackgroundSigma)
	case q.Programs < 0 || q.Programs > 64-p.L-p.ActivityPrograms:
		return fmt.Errorf("simulate: %d sample programs beside %d others: at most 64 programs in all", q.Programs, p.L+p.ActivityPrograms)
	case q.Programs > 0 && !(q.ProgramFraction > 0 && q.ProgramFraction <= 1):
		return fmt.Errorf("simulate: sample program fraction must be in (0, 1] (got %v)", q.ProgramFraction)
	}
	return nil
}

// NumSamples returns the number of samples, at least 1.
func (t *Truth) NumSamples() int { return max(t.Samples.Samples, 1) }

// SampleOf returns the sample of cell n (0-based).
func (t *Truth) SampleOf(n int) int { return int(int64(n) * int64(t.NumSamples()) / int64(t.Cells)) }

// sampleName names sample s (0-based): sample1, sample2, ….
func sampleName(s int) string { return "sample" + strconv.Itoa(s+1) }

// sampleRange returns the cells [lo, hi) of sample s.
func (t *Truth) sampleRange(s int) (lo, hi int) {
	S := int64(t.NumSamples())
	first := func(s int64) int { return int((s*int64(t.Cells) + S - 1) / S) }
	return first(int64(s)), first(int64(s) + 1)
}

// CellName returns cell n's barcode as scpipe ingest names it once the
// samples are ingested together: Barcode(n), then "-" and its sample's
// name when there are several.
func (t *Truth) CellName(n int) string {
	if t.NumSamples() == 1 {
		return t.Barcode(n)
	}
	return t.Barcode(n) + "-" + sampleName(t.SampleOf(n))
}

// background returns the factor of the baseline rates in cell n's sample.
func (t *Truth) background(n int) float64 {
	if t.SampleBackground == nil {
		return 1
	}
	return t.SampleBackground[t.SampleOf(n)]
}

// drawSamples draws the samples' factors and programs, after everything
// else.
func (t *Truth) drawSamples(r *rand.Rand) {
	q := t.Samples
	if q.Samples < 1 {
		return
	}
	t.SampleDepth, t.SampleBackground = make([]float64, q.Samples), make([]float64, q.Samples)
	for s := range q.Samples {
		t.SampleDepth[s] = math.Exp(q.DepthSigma * r.NormFloat64())
		t.SampleBackground[s] = math.Exp(q.BackgroundSigma * r.NormFloat64())
	}
	for n := range t.SizeFactor {
		t.SizeFactor[n] *= t.SampleDepth[t.SampleOf(n)]
	}
	var ordinary []int
	for g := range t.Genes {
		if !bit(t.Housekeeping, g) {
			ordinary = append(ordinary, g)
		}
	}
	for i := range q.Programs {
		u := make([]uint64, t.words)
		for _, g := range sample(ordinary, t.SingleCell.activitySize(t.Genes), r) {
			u[g/64] |= 1 << (g % 64)
		}
		z := make([]uint64, (t.Cells+63)/64)
		lo, hi := t.sampleRange(i % q.Samples)
		for n := lo; n < hi; n++ {
			if r.Float64() < q.ProgramFraction {
				z[n/64] |= 1 << (n % 64)
			}
		}
		t.U, t.Z = append(t.U, u), append(t.Z, z)
	}
}

// manifestSamples lists the samples for the manifest of shards written
// straight from the simulation.
func (t *Truth) manifestSamples() []shard.Sample {
	if t.NumSamples() == 1 {
		return nil
	}
	out := make([]shard.Sample, t.NumSamples())
	for s := range out {
		lo, hi := t.sampleRange(s)
		out[s] = shard.Sample{Name: sampleName(s), Format: "simulate", FirstCell: lo, CellsBefore: hi - lo, CellsAfter: hi - lo, GenesBefore: t.Genes}
	}
	return out
}

// SamplesFile is the samples file of an MTX output of several samples:
// scpipe ingest --samples OUT/samples.tsv reads them.
const SamplesFile = "samples.tsv"

// writeSamplesMTX writes each sample's cells as an MTX folder tmp/NAME and
// the samples file naming them, with each sample's depth and background
// factors as further columns.
func (t *Truth) writeSamplesMTX(ctx context.Context, tmp string, ones []int64) error {
	if err := writePlain(filepath.Join(tmp, SamplesFile), func(w *bufio.Writer) error {
		w.WriteString("sample\tpath\tdepth_factor\tbackground_factor\n")
		for s := range t.NumSamples() {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", sampleName(s), sampleName(s),
				strconv.FormatFloat(t.SampleDepth[s], 'g', -1, 64), strconv.FormatFloat(t.SampleBackground[s], 'g', -1, 64))
		}
		return nil
	}); err != nil {
		return err
	}
	for s := range t.NumSamples() {
		lo, hi := t.sampleRange(s)
		if err := t.writeMTXFiles(ctx, filepath.Join(tmp, sampleName(s)), lo, hi, ones[s]); err != nil {
			return err
		}
	}
	return nil
}
