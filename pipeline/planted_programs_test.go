package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"scpipe/internal/rundir"
	"scpipe/internal/stats/codematch"
	"scpipe/simulate"

	"scpipe/simulate/simtest"

	"scpipe/internal/rundir/rundirtest"
)

// item7Params is issue 28's planted setting: 3,000 cells × 1,500 genes,
// four programs each holding 29% of the genes and used by 29% of the
// cells, independently (so cells use none, one or several), 5% of the bits
// flipped either way.
func item7Params(seed uint64) simulate.Params {
	return simulate.Params{Cells: 3000, Genes: 1500, L: 4, CodeDensity: 0.29, UsageDensity: 0.29,
		FlipOn: 0.05, FlipOff: 0.05, Seed: seed}
}

// item7Config is `scpipe fit --L 4 --chains 1 --burn-in 50 --samples 50
// --seed seed`: every other setting the default (the auto model of
// simulated binary data is the paper's symmetric noise).
func item7Config(shards, out string, seed uint64) FitConfig {
	c := DefaultFitConfig()
	c.Shards, c.Output = shards, out
	c.L, c.Chains, c.BurnIn, c.Samples, c.Seed, c.Threads = LSizes{4}, 1, 50, 50, seed, 2
	return c
}

// PlantedRecovery matches each planted program of truth to the used code
// (codematch.UsedMAPSets) of the fit in dir whose MAP genes overlap it most:
// Jaccard[l] is that overlap, Code[l] the code, and F1[l] the F1 score of
// the code's cells (posterior mean above ½) against the program's.
type plantedRecovery struct {
	Jaccard, F1 []float64
	Code        []int
}

func (r plantedRecovery) worst() float64 {
	w := 1.0
	for _, j := range r.Jaccard {
		w = min(w, j)
	}
	return w
}

func recoverPlanted(t *testing.T, truth *simulate.Truth, dir string) plantedRecovery {
	t.Helper()
	codes, cells := rundirtest.Tables(t, dir)
	L := codes.L
	found := codematch.UsedMAPSets(codes.Mean, cells.Mean, L)
	gene := map[string]int{}
	for g := range truth.Genes {
		gene[simulate.GeneID(g)] = g
	}
	cell := map[string]int{}
	for n := range truth.Cells {
		cell[truth.CellName(n)] = n
	}
	var r plantedRecovery
	for l := range truth.Programs() {
		planted := codematch.NewSet(len(codes.GeneIDs))
		for k, id := range codes.GeneIDs {
			if g, ok := gene[id]; ok && truth.U[l][g/64]>>(g%64)&1 == 1 {
				planted.Add(k)
			}
		}
		best, code := 0.0, -1
		for k, s := range found {
			if j := codematch.Jaccard(planted, s); j > best {
				best, code = j, k
			}
		}
		f1 := 0.0
		if code >= 0 {
			tp, fp, fn := 0, 0, 0
			for i, b := range cells.Barcodes {
				n := cell[b]
				in, on := truth.Z[l][n/64]>>(n%64)&1 == 1, cells.Mean[i*L+code] > 0.5
				switch {
				case in && on:
					tp++
				case on:
					fp++
				case in:
					fn++
				}
			}
			f1 = 2 * float64(tp) / float64(max(1, 2*tp+fp+fn))
		}
		r.Jaccard, r.F1, r.Code = append(r.Jaccard, best), append(r.F1, f1), append(r.Code, code)
	}
	return r
}

// TestFitKeepsEveryPlantedProgram fits issue 28's planted setting with
// the defaults on (data seed, fit seed) pairs whose fits lost a program
// before idle codes were re-seeded (VALIDATION.md): one whose starts leave
// a code empty beside codes holding the other programs (21/4), and one
// whose four starts each merge two programs into one code beside an empty
// one (27/5). Every planted program must be a used code's (Jaccard ≥
// 0.9). Without re-seeding, 21/4 loses a program: the trap is still there
// to guard against. (The 10 × 10 seeds are TestPlantedProgramsAllSeeds,
// behind the slow build tag.)
func TestFitKeepsEveryPlantedProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("three fits of 3,000 × 1,500 planted cells; not in -short")
	}
	for _, tc := range []struct {
		data, fit uint64
		reseed    bool
	}{
		{21, 4, true}, {27, 5, true}, {21, 4, false},
	} {
		t.Run(fmt.Sprintf("data%d/fit%d/reseed=%v", tc.data, tc.fit, tc.reseed), func(t *testing.T) {
			shards, truth := simtest.Shards(t, item7Params(tc.data))
			cfg := item7Config(shards, filepath.Join(t.TempDir(), "run"), tc.fit)
			cfg.Reseed = tc.reseed
			if _, err := Fit(context.Background(), cfg, FitOptions{}); err != nil {
				t.Fatal(err)
			}
			r := recoverPlanted(t, truth, rundir.FitDir(cfg.Output, 4, 1))
			t.Logf("Jaccard per program %.3f", r.Jaccard)
			switch w := r.worst(); {
			case tc.reseed && w < 0.9:
				t.Errorf("a planted program is lost: best Jaccard %.3f", w)
			case !tc.reseed && w >= 0.9:
				t.Errorf("without re-seeding every program is found (worst Jaccard %.3f): pick a pair that loses one", w)
			}
		})
	}
}

// TestFitFindsActivityProgram fits single-cell-like data of six cell
// types (one identity program per cell) whose cells of every type switch
// on a seventh, activity program with probability 0.3, at L = 7 with the
// defaults: the activity program must be a code of its own (Jaccard ≥
// 0.9, no identity program's best code) whose cells match the planted
// ones with F1 ≥ 0.9, and every identity program must be found too
// (Jaccard ≥ 0.8: the smallest holds 20 of 2,000 genes, and these shards
// skip ingest's gene filter; TestPlantedSingleCell holds the 0.9 target
// for the ingested data).
func TestFitFindsActivityProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("a fit of 4,000 simulated cells; not in -short")
	}
	sc := simulate.DefaultSingleCell()
	sc.ProgramsPerCellMax = 1
	p := simulate.DefaultSingleCellParams()
	p.SingleCell, p.ActivityPrograms, p.ActivityFraction = sc, 1, 0.3
	shards, truth := simtest.Shards(t, p)
	cfg := DefaultFitConfig()
	cfg.Shards, cfg.Output = shards, filepath.Join(t.TempDir(), "run")
	cfg.L, cfg.Chains, cfg.Threads = LSizes{7}, 1, 2
	if _, err := Fit(context.Background(), cfg, FitOptions{}); err != nil {
		t.Fatal(err)
	}
	r := recoverPlanted(t, truth, rundir.FitDir(cfg.Output, 7, 1))
	t.Logf("Jaccard %.3f, cells' F1 %.3f, codes %v", r.Jaccard, r.F1, r.Code)
	act := p.L
	if r.Jaccard[act] < 0.9 || r.F1[act] < 0.9 {
		t.Errorf("activity program: Jaccard %.3f, cells' F1 %.3f, want both ≥ 0.9", r.Jaccard[act], r.F1[act])
	}
	for l := range p.L {
		if r.Jaccard[l] < 0.8 {
			t.Errorf("identity program %d: Jaccard %.3f < 0.8", l+1, r.Jaccard[l])
		}
		if r.Code[l] == r.Code[act] {
			t.Errorf("identity program %d and the activity program share code %d", l+1, r.Code[act]+1)
		}
	}
}
