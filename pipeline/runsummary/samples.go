package runsummary

import (
	"math"
	"os"
	"path/filepath"

	"scpipe/internal/rundir"
	"scpipe/shard"
)

// cellUses is the posterior mean of z at which a cell counts as using a
// program, as everywhere else (report, export, enrich).
const cellUses = 0.5

// writeSamples writes RUN/samples.tsv for shards of several samples: for
// each program of the recommended L (of its chain of highest
// log-likelihood; without a recommendation, of the largest L's), the share
// of each sample's cells that use it, and whether the program's cells are
// mostly one sample's. Shards of one input get none (a stale one, of
// shards since replaced, is removed).
func writeSamples(run string, src *shard.Shard, rows []rundir.SummaryRow) error {
	path := filepath.Join(run, rundir.SampleUsageFile)
	m := src.Manifest()
	if len(m.Samples) == 0 || len(rows) == 0 {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	var rec []rundir.SummaryRow
	maxL := 0
	for _, r := range rows {
		maxL = max(maxL, r.L)
		if r.Recommended {
			rec = append(rec, r)
		}
	}
	if len(rec) == 0 {
		for _, r := range rows {
			if r.L == maxL {
				rec = append(rec, r)
			}
		}
	}
	best := mostLikely(rec)
	cells, err := rundir.ReadCellMeans(filepath.Join(rundir.FitDir(run, best.L, best.Chain), rundir.CellsFile))
	if err != nil {
		return err
	}
	return rundir.WriteSamples(path, SampleUsage(cells, m, best.L, best.Chain))
}

// SampleUsage tabulates how the cells of each sample of m use each code
// of a fit's cells (its L and chain): samples.tsv's rows, by code, then
// sample in the shards' order.
func SampleUsage(cells rundir.Cells, m *shard.Manifest, L, chain int) []rundir.SampleUsage {
	cs := m.CellSamples()
	S := len(m.Samples)
	using := make([][]int, cells.L) // [code][sample]
	for k := range using {
		using[k] = make([]int, S)
	}
	for n := range min(cells.Len(), len(cs)) {
		for k := range cells.L {
			if cells.Mean[n*cells.L+k] >= cellUses {
				using[k][cs[n]]++
			}
		}
	}
	var out []rundir.SampleUsage
	for k := range cells.L {
		total, top := 0, 0
		for _, u := range using[k] {
			total += u
			top = max(top, u)
		}
		specific := total > 0 && float64(top) >= rundir.SampleSpecificShare*float64(total)
		for s, smp := range m.Samples {
			r := rundir.SampleUsage{L: L, Chain: chain, Code: k + 1, Sample: smp.Name, SampleCells: smp.CellsAfter,
				Using: using[k][s], Share: math.NaN(), OfProgram: math.NaN(), SampleSpecific: specific}
			if smp.CellsAfter > 0 {
				r.Share = float64(r.Using) / float64(smp.CellsAfter)
			}
			if total > 0 {
				r.OfProgram = float64(r.Using) / float64(total)
			}
			out = append(out, r)
		}
	}
	return out
}
