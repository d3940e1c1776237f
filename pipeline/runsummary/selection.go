package runsummary

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"

	"scpipe/internal/rundir"
)

// Convergence thresholds of an L's chains: the rank-normalised split-R̂ of
// each chain against itself and the agreement of their codes with chain
// 1's (mean Jaccard of the matched program gene sets), as the Stan and
// cNMF guides use.
const (
	maxRHat      = 1.1
	MinAgreement = 0.9
)

// Converged tells whether the chains of one L found the same programs and
// settled there. It takes each chain's agreement with chain 1 and its
// number of programs (codes with genes), the number of programs stable
// across the chains (codematch.StablePrograms) and the largest
// codematch.WithinRHat of the traced quantities. It returns "yes" when
//
//   - the chains found the same programs: every chain's agreement is at
//     least 0.9 (MinAgreement) and every program of every chain is stable, and
//   - each chain has reached a level: the within-chain R̂ is below 1.1 (maxRHat);
//
// "no" when either fails, and "" (unknown) with a single chain or no
// R̂ (fewer than four sampling sweeps).
//
// The chains are compared with each other by their codes, not by the
// pooled R̂ of scalar traces. A posterior over Boolean codes has a mode per
// arrangement of its codes' few uncertain bits and of codes that hold no
// program, and chains that found the same programs settle in different
// ones: on the demo's planted data at L = 8 both chains recover all six
// programs (agreement 0.998) yet their log-likelihoods sit 45 nats apart
// (−503 350 and −503 395, of 8 million entries), so the pooled R̂ is large
// for a difference no program shows. The pooled R̂ stays in summary.tsv
// (rhat) for a reader who wants the stricter question answered.
func Converged(agreement []float64, programs []int, stable int, rhatWithin float64) string {
	if len(agreement) < 2 || math.IsNaN(rhatWithin) {
		return ""
	}
	if rhatWithin >= maxRHat {
		return "no"
	}
	for _, a := range agreement {
		if !(a >= MinAgreement) {
			return "no"
		}
	}
	for _, p := range programs {
		if p != stable {
			return "no"
		}
	}
	return "yes"
}

// ConvergedByConsensus is the verdict on an L whose chains' verdict is
// converged (Converged) and whose consensus of chains (pipeline's
// consensus stage) reproduces or not (codematch.Reproduces; false where
// the L has none): "yes" where the chains agree, and also where they
// settled in different modes but the consensus of them reproduces and
// each chain has reached a level (the within-chain R̂ below maxRHat):
// the programs the run hands over, the consensus's, are then the same
// from another set of chains.
func ConvergedByConsensus(converged string, rhatWithin float64, reproduces bool) string {
	if converged == "yes" || !reproduces || !(rhatWithin < maxRHat) {
		return converged
	}
	return "yes"
}

// elbowShare is the share of the held-out gain across the fitted L that
// recommendL lets a smaller L forgo.
const elbowShare = 0.05

// lSelection is the choice of L and the numbers behind it, in nats per
// held-out entry.
type lSelection struct {
	L    int // the recommended L; 0 when nothing was held out
	Best int // the L of the highest held-out log predictive
	// Gap[L] is the best L's held-out log predictive less L's, over the
	// held-out entries of all cells (0 at Best), and GapSE[L] its standard
	// error over cells, paired: from each cell's difference between the two
	// fits. Both have an entry for every L scored.
	Gap, GapSE map[int]float64
	// Elbow is elbowShare of the gain from the worst L to the best.
	Elbow float64
}

// tolerance returns the gap to the best L that the rule allows L: one
// standard error of the paired difference or the elbow, whichever is
// larger.
func (s lSelection) tolerance(L int) float64 {
	tol := s.Elbow
	if se := s.GapSE[L]; se > tol {
		tol = se
	}
	return tol
}

// within reports whether L is within the tolerance of the rule.
func (s lSelection) within(L int) bool {
	gap, ok := s.Gap[L]
	return ok && gap <= s.tolerance(L)
}

// recommendL picks L from the held-out log predictive of each cell under
// each L (perCell[L]: the log predictive summed over the cell's held-out
// entries, from the L's chain of highest training log-likelihood: a chain
// stuck in a poorer mode says nothing about what L codes can explain) and
// the number of held-out entries of each cell (the same for every L).
//
// The rule: the smallest L whose held-out log predictive falls short of
// the best L's by no more than one standard error of their paired
// difference (the one-standard-error rule of cross-validation, with cells
// as the independent units: a cell's held-out entries share its codes, so
// they are not independent of each other) or elbowShare of the gain from
// the worst fitted L to the best, whichever is larger. The second bound is
// the elbow of the curve: past the L that captures the data's programs,
// more codes keep improving the held-out score a little (they split
// programs or fit what the model leaves out, such as genes' detection
// rates), and with thousands of cells even that little is many standard
// errors.
func recommendL(perCell map[int][]float32, entries []int32) lSelection {
	sel := lSelection{Gap: map[int]float64{}, GapSE: map[int]float64{}}
	var Ls []int
	for L := range perCell {
		Ls = append(Ls, L)
	}
	slices.Sort(Ls)
	total := 0.0
	for _, n := range entries {
		total += float64(n)
	}
	if len(Ls) == 0 || total == 0 {
		return lSelection{}
	}
	bestMean, worst := math.Inf(-1), math.Inf(1)
	for _, L := range Ls {
		m := sum32(perCell[L]) / total
		if m > bestMean {
			sel.Best, bestMean = L, m
		}
		worst = min(worst, m)
	}
	sel.Elbow = elbowShare * (bestMean - worst)
	best := perCell[sel.Best]
	diff := make([]float64, len(best))
	for _, L := range Ls {
		v := perCell[L]
		for i := range diff {
			diff[i] = float64(best[i]) - float64(v[i])
		}
		sel.Gap[L], sel.GapSE[L] = sum64(diff)/total, ratioSE(diff, entries)
	}
	for _, L := range Ls {
		if sel.within(L) {
			sel.L = L
			break
		}
	}
	return sel
}

// ratioSE returns the standard error over cells of the ratio Σ num / Σ
// den, num and den given per cell, by the delta method with the cells as
// the independent units (the cluster-robust standard error of a mean over
// entries clustered in cells):
//
//	r = Σ num / Σ den,  SE = sqrt(C/(C−1) · Σ (num_c − r·den_c)²) / Σ den
//
// over the C cells with den > 0. It is NaN with fewer than two such cells.
func ratioSE[T float32 | float64 | int32](num []T, den []int32) float64 {
	var c int
	var sn, sd float64
	for i, d := range den {
		if d > 0 {
			c++
			sn += float64(num[i])
			sd += float64(d)
		}
	}
	if c < 2 {
		return math.NaN()
	}
	r := sn / sd
	ss := 0.0
	for i, d := range den {
		if d > 0 {
			e := float64(num[i]) - float64(r*float64(d))
			ss += float64(e * e)
		}
	}
	return math.Sqrt(float64(c)/float64(c-1)*ss) / sd
}

func sum32(v []float32) float64 {
	t := 0.0
	for _, x := range v {
		t += float64(x)
	}
	return t
}

func sum64(v []float64) float64 {
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t
}

// logSelection states the rule of the recommendation with its numbers,
// and says for every L whether its chains agree, and which programs they
// share where they do not: a warning at the recommended L.
func logSelection(log *slog.Logger, rows []rundir.SummaryRow) {
	byL := map[int][]rundir.SummaryRow{}
	var Ls []int
	recommended := 0
	for _, r := range rows {
		if len(byL[r.L]) == 0 {
			Ls = append(Ls, r.L)
		}
		byL[r.L] = append(byL[r.L], r)
		if r.Recommended {
			recommended = r.L
		}
	}
	slices.Sort(Ls)
	for _, L := range Ls {
		rs := byL[L]
		r := rs[0]
		worst := 1.0
		var programs []string
		for _, q := range rs {
			worst = min(worst, q.Agreement)
			programs = append(programs, fmt.Sprint(q.Programs))
		}
		// The score is the one the recommendation weighed: that of the L's
		// most likely chain, as summary.go picks it, not chain 1's, which
		// could read higher than the best L's.
		ml := mostLikely(rs)
		attrs := []any{"L", L, "heldout_logpred", ml.HeldoutLogPred, "se", ml.HeldoutLogPredSE, "heldout_chain", ml.Chain,
			"gap_to_best", r.LogPredGap, "gap_se", r.LogPredGapSE, "tolerance", r.LogPredTolerance}
		switch r.Converged {
		case "yes":
			log.Info("chains agree", append(attrs, "agreement", worst, "programs", r.Programs, "rhat_within", r.RHatWithin)...)
		case "no":
			// A warning for the L a reader will read (or for every L when
			// none is recommended); the others' disagreement is logged too,
			// and is in summary.tsv, but a warning at every L that is not
			// the answer would teach users to skip warnings.
			level := slog.LevelInfo
			if L == recommended || recommended == 0 {
				level = slog.LevelWarn
			}
			log.Log(context.Background(), level, "chains have not converged: they found different programs or still drift; read the stable programs, or run more sweeps or starts",
				append(attrs, "agreement", worst, "min_agreement", MinAgreement, "rhat_within", r.RHatWithin, "max_rhat", maxRHat,
					"rhat", r.RHat, "stable_programs", r.StablePrograms, "programs_per_chain", strings.Join(programs, ","),
					"stable_codes", stableCodes(rs))...)
		default:
			log.Info("one chain: convergence not checked (use --chains 2 or more)", append(attrs, "rhat_within", r.RHatWithin)...)
		}
	}
	if recommended == 0 {
		log.Info("no L recommended: no entries were held out (--holdout)")
		return
	}
	r := byL[recommended][0]
	best := recommended
	for _, L := range Ls {
		if byL[L][0].LogPredGap == 0 {
			best = L
			break
		}
	}
	log.Info(fmt.Sprintf("recommended L: the smallest whose held-out log predictive is below the best L's by at most one standard error of the paired difference over cells or %g%% of the gain across L (the elbow), whichever is larger", 100*elbowShare),
		"L", recommended, "best_L", best, "gap", r.LogPredGap, "gap_se", r.LogPredGapSE, "elbow", byL[best][0].LogPredTolerance,
		"converged", r.Converged, "stable_programs", r.StablePrograms, "programs", r.Programs)
}

// mostLikely returns the row of highest training log-likelihood, the
// first of a tie: the chain whose held-out scores choose L.
func mostLikely(rows []rundir.SummaryRow) rundir.SummaryRow {
	best := rows[0]
	for _, r := range rows[1:] {
		if r.LogLik > best.LogLik {
			best = r
		}
	}
	return best
}

// stableCodes names the codes of each chain that hold the stable
// programs: "chain 1: 1,2,4; chain 2: 3,1,2".
func stableCodes(rows []rundir.SummaryRow) string {
	var parts []string
	for _, r := range rows {
		codes := make([]string, len(r.StableCodes))
		for i, k := range r.StableCodes {
			codes[i] = fmt.Sprint(k)
		}
		list := strings.Join(codes, ",")
		if list == "" {
			list = "none"
		}
		parts = append(parts, fmt.Sprintf("chain %d: %s", r.Chain, list))
	}
	return strings.Join(parts, "; ")
}
