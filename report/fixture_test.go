package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"scpipe/internal/rundir"
)

// synthetic describes a run directory written through rundir as scpipe fit
// would, with a planted hierarchy: the first Blocks·BlockGenes genes form
// Blocks blocks, and code k of L holds the blocks round(k·Blocks/L) up to
// round((k+1)·Blocks/L), so programs split (and regroup) as L grows; each
// cell belongs to one block and uses the code holding it.
type synthetic struct {
	Cells, Genes       int
	Blocks, BlockGenes int
	Ls                 []int
	Chains             int
	Sweeps, BurnIn     int
	Housekeeping       bool // codes.parquet gets a housekeeping column
	Unused             bool // the largest L gets a code no cell uses
	NoSummary          bool
	Seed               uint64
}

func (s synthetic) group(L, block int) int {
	for k := range L {
		if block < int(math.Round(float64((k+1)*s.Blocks)/float64(L))) {
			return k
		}
	}
	return L - 1
}

// write writes the run into dir.
func (s synthetic) write(tb testing.TB, dir string) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(s.Seed, 7))
	ids, names := make([]string, s.Genes), make([]string, s.Genes)
	for g := range s.Genes {
		ids[g], names[g] = fmt.Sprintf("ENSG%011d", g+1), fmt.Sprintf("Gene%d", g+1)
	}
	block := make([]int, s.Cells)
	barcodes := make([]string, s.Cells)
	for n := range s.Cells {
		block[n] = rng.IntN(s.Blocks)
		barcodes[n] = fmt.Sprintf("CELL%09d-1", n)
	}
	var summary []rundir.SummaryRow
	for _, L := range s.Ls {
		for c := 1; c <= s.Chains; c++ {
			fit := rundir.FitDir(dir, L, c)
			if err := os.MkdirAll(fit, 0o777); err != nil {
				tb.Fatal(err)
			}
			unused := s.Unused && L == s.Ls[len(s.Ls)-1]
			used := L
			if unused {
				used = L - 1
			}
			codes := rundir.Codes{GeneIDs: ids, GeneNames: names, L: L, Mean: make([]float64, s.Genes*L)}
			for g := range s.Genes {
				b := g / s.BlockGenes
				for k := range L {
					v := 0.01 + 0.04*rng.Float64()
					if k >= used {
						v = 0.5
					} else if b < s.Blocks && s.group(used, b) == k {
						v = 0.9 + 0.1*rng.Float64()
					}
					codes.Mean[g*L+k] = v
				}
			}
			if s.Housekeeping {
				codes.Housekeeping = make([]float64, s.Genes)
				for g := range s.Genes {
					codes.Housekeeping[g] = 0.02
					if g >= s.Genes-5 {
						codes.Housekeeping[g] = 0.97
					}
				}
			}
			cells := rundir.Cells{Barcodes: barcodes, L: L, Mean: make([]float64, s.Cells*L)}
			for n := range s.Cells {
				k := s.group(used, block[n])
				row := cells.Mean[n*L : (n+1)*L]
				for j := range row {
					row[j] = 0.02 * rng.Float64()
				}
				row[k] = 0.9 + 0.1*rng.Float64()
				if n%17 == 0 && used > 1 { // some cells use two codes
					row[(k+1)%used] = 0.8
				}
			}
			must(tb, rundir.WriteCodes(filepath.Join(fit, rundir.CodesFile), codes))
			must(tb, rundir.WriteCells(filepath.Join(fit, rundir.CellsFile), cells))
			trace := make([]rundir.TraceRow, s.Sweeps)
			for i := range trace {
				phase := rundir.PhaseSample
				if i < s.BurnIn {
					phase = rundir.PhaseBurnIn
				}
				ll := -1e6*float64(s.Genes)/float64(L) - 5e5*math.Exp(-float64(i)/5) - 1e3*rng.Float64()
				trace[i] = rundir.TraceRow{Sweep: int64(i + 1), Phase: phase, Lambda: math.NaN(),
					Dropout: 0.3 + 0.2*math.Exp(-float64(i)/4) + 0.01*rng.Float64(), Background: 0.01 + 0.002*rng.Float64(),
					LogLik: ll, TrainAccuracy: 0.9, Flips: int64(100 - i), Seconds: 0.1}
			}
			must(tb, rundir.WriteTrace(filepath.Join(fit, rundir.TraceFile), trace))
			summary = append(summary, rundir.SummaryRow{L: L, Chain: c, Sweeps: s.Sweeps, Lambda: math.NaN(),
				Dropout: 0.3, Background: 0.01, LogLik: trace[len(trace)-1].LogLik, TrainAccuracy: 0.9,
				HeldoutAccuracy: 0.9 + 0.01*math.Min(float64(L), 6) - 0.001*float64(c), HeldoutLogPred: -0.3 + 0.01*math.Min(float64(L), 6),
				Seconds: 1, Agreement: 1, RHatLogLik: 1.01, Converged: "yes", Recommended: L == 5})
		}
	}
	if !s.NoSummary {
		must(tb, rundir.WriteSummary(filepath.Join(dir, rundir.SummaryFile), summary))
	}
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
