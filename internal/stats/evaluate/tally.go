package evaluate

import (
	"fmt"
	"math"
)

// Bins is the number of bins of predicted probabilities on the logit scale
// that a Tally counts positives and negatives in: logit(p) from −logitMax
// to logitMax in steps of 2·logitMax/Bins ≈ 0.0006 (a step of less than
// 0.015% in p around ½). Predictions beyond ±logitMax fall into the end
// bins.
const (
	Bins     = 1 << 16
	logitMax = 20.0
)

// Tally accumulates predicted probabilities p of binary outcomes y. Counts
// are integers, so tallies merged in any order give the same counts; the
// sums of log predictive, squared error and predicted probability per
// calibration bin are floating-point, so a caller that wants results
// independent of its parallelism merges tallies in a fixed order.
type Tally struct {
	pos, neg []int64   // per logit bin: outcomes 1 and 0
	lo, hi   []float64 // per logit bin: the smallest and largest p

	calN, calPos []int64   // per calibration bin: predictions and outcomes 1
	calSum       []float64 // per calibration bin: Σ p

	n, ones, correct int64
	logSum, sqSum    float64
}

// NewTally returns an empty tally whose calibration curve has
// calibrationBins bins of equal width in p.
func NewTally(calibrationBins int) *Tally {
	if calibrationBins < 1 {
		panic(fmt.Sprintf("evaluate: %d calibration bins", calibrationBins))
	}
	t := &Tally{
		pos: make([]int64, Bins), neg: make([]int64, Bins), lo: make([]float64, Bins), hi: make([]float64, Bins),
		calN: make([]int64, calibrationBins), calPos: make([]int64, calibrationBins), calSum: make([]float64, calibrationBins),
	}
	t.Reset()
	return t
}

// Reset empties t.
func (t *Tally) Reset() {
	clear(t.pos)
	clear(t.neg)
	for k := range t.lo {
		t.lo[k], t.hi[k] = math.Inf(1), math.Inf(-1)
	}
	clear(t.calN)
	clear(t.calPos)
	clear(t.calSum)
	t.n, t.ones, t.correct, t.logSum, t.sqSum = 0, 0, 0, 0, 0
}

// bin returns the logit bin of p.
func bin(p float64) int {
	switch {
	case !(p > 0): // and NaN, which callers never pass
		return 0
	case p >= 1:
		return Bins - 1
	}
	k := math.Floor((math.Log(p) - math.Log1p(-p) + logitMax) * (Bins / (2 * logitMax)))
	return int(max(0, min(Bins-1, k)))
}

// threshold returns the lower edge of logit bin k as a probability: a
// prediction in bin k or above has p at least this (up to rounding at the
// edge). Bin 0 has no lower edge: everything is at least 0.
func threshold(k int) float64 {
	if k == 0 {
		return 0
	}
	e := -logitMax + float64(k)*(2*logitMax/Bins)
	return 1 / (1 + math.Exp(-e))
}

// Add counts one prediction p of an outcome y. The prediction counts as
// correct when p ≥ ½ and y, or p < ½ and not y.
func (t *Tally) Add(p float64, y bool) {
	k := bin(p)
	t.lo[k], t.hi[k] = min(t.lo[k], p), max(t.hi[k], p)
	c := max(0, min(len(t.calN)-1, int(p*float64(len(t.calN)))))
	t.n++
	t.calN[c]++
	t.calSum[c] += p
	// The probability given to the outcome, and the distance of p from it.
	py, miss := 1-p, p
	if y {
		t.pos[k]++
		t.ones++
		t.calPos[c]++
		py, miss = p, 1-p
	} else {
		t.neg[k]++
	}
	if (p >= 0.5) == y {
		t.correct++
	}
	t.logSum += math.Log(max(py, 1e-300))
	t.sqSum += miss * miss
}

// Merge adds the counts and sums of o to t; both must have the same
// calibration bins.
func (t *Tally) Merge(o *Tally) {
	if len(o.calN) != len(t.calN) {
		panic("evaluate: merging tallies of different calibration bins")
	}
	for k := range t.pos {
		t.pos[k] += o.pos[k]
		t.neg[k] += o.neg[k]
		t.lo[k], t.hi[k] = min(t.lo[k], o.lo[k]), max(t.hi[k], o.hi[k])
	}
	for c := range t.calN {
		t.calN[c] += o.calN[c]
		t.calPos[c] += o.calPos[c]
		t.calSum[c] += o.calSum[c]
	}
	t.n += o.n
	t.ones += o.ones
	t.correct += o.correct
	t.logSum += o.logSum
	t.sqSum += o.sqSum
}

// N returns the number of predictions counted.
func (t *Tally) N() int64 { return t.n }

// Scores are the summary scores of a tally; NaN where undefined (no
// predictions; for the AUC, no outcome of one kind).
type Scores struct {
	N, Positives int64
	// Accuracy is the fraction of predictions on the right side of ½.
	Accuracy float64
	// LogPred is the mean log probability of the outcomes (the log
	// predictive), each probability floored at 1e-300.
	LogPred float64
	// Brier is the mean squared difference of p and the outcome.
	Brier float64
	// AUC is the area under the ROC curve: the probability that a random
	// positive has a higher p than a random negative, ties counted half.
	// Predictions in the same logit bin count as ties; the AUC of the exact
	// predictions lies within AUCTieBound of it: half the fraction of
	// positive–negative pairs in bins that hold different predictions (0
	// when every bin holds one value, so that the AUC is exact).
	AUC, AUCTieBound float64
}

// Scores returns the tally's summary scores.
func (t *Tally) Scores() Scores {
	s := Scores{N: t.n, Positives: t.ones, Accuracy: math.NaN(), LogPred: math.NaN(), Brier: math.NaN(), AUC: math.NaN(), AUCTieBound: math.NaN()}
	if t.n == 0 {
		return s
	}
	n := float64(t.n)
	s.Accuracy, s.LogPred, s.Brier = float64(t.correct)/n, t.logSum/n, t.sqSum/n
	P, N := float64(t.ones), float64(t.n-t.ones)
	if P == 0 || N == 0 {
		return s
	}
	// Products of counts may pass 2^63: work in float64.
	var below, area, ties float64
	for k := range Bins {
		p, q := float64(t.pos[k]), float64(t.neg[k])
		area += p * (below + q/2)
		if t.lo[k] < t.hi[k] {
			ties += p * q
		}
		below += q
	}
	s.AUC, s.AUCTieBound = area/(P*N), ties/(2*P*N)
	return s
}

// ROCPoint is one point of the ROC curve: calling a prediction positive
// when p ≥ Threshold gives the false-positive rate FPR and the
// true-positive rate TPR, from the counts FP and TP.
type ROCPoint struct {
	Threshold float64
	FPR, TPR  float64
	FP, TP    int64
}

// ROC returns the ROC curve from (0, 0) at threshold +Inf to (1, 1) at
// threshold 0, one point per threshold at which it moves: the lower edges
// of the logit bins that hold predictions. It is nil when either outcome
// is absent.
func (t *Tally) ROC() []ROCPoint {
	P, N := t.ones, t.n-t.ones
	if P == 0 || N == 0 {
		return nil
	}
	pts := []ROCPoint{{Threshold: math.Inf(1)}}
	var tp, fp int64
	for k := Bins - 1; k >= 0; k-- {
		if t.pos[k] == 0 && t.neg[k] == 0 {
			continue
		}
		tp += t.pos[k]
		fp += t.neg[k]
		pts = append(pts, ROCPoint{Threshold: threshold(k), FPR: float64(fp) / float64(N), TPR: float64(tp) / float64(P), FP: fp, TP: tp})
	}
	return pts
}

// CalibrationBin is one bin of the calibration curve: the N predictions
// with p in [Lo, Hi) (the last bin includes 1), their mean p, the observed
// frequency of outcome 1 among them and its 95% Wilson score interval
// [ObservedLow, ObservedHigh]. Frequencies are NaN in an empty bin.
type CalibrationBin struct {
	Lo, Hi                    float64
	N, Positives              int64
	MeanPredicted, Observed   float64
	ObservedLow, ObservedHigh float64
}

// Calibration returns the calibration curve (reliability diagram): for a
// calibrated predictor, Observed is close to MeanPredicted in every bin.
func (t *Tally) Calibration() []CalibrationBin {
	K := len(t.calN)
	out := make([]CalibrationBin, K)
	for c := range K {
		b := CalibrationBin{Lo: float64(c) / float64(K), Hi: float64(c+1) / float64(K), N: t.calN[c], Positives: t.calPos[c],
			MeanPredicted: math.NaN(), Observed: math.NaN(), ObservedLow: math.NaN(), ObservedHigh: math.NaN()}
		if b.N > 0 {
			b.MeanPredicted = t.calSum[c] / float64(b.N)
			b.Observed = float64(b.Positives) / float64(b.N)
			b.ObservedLow, b.ObservedHigh = wilson(b.Positives, b.N, 1.959963984540054)
		}
		out[c] = b
	}
	return out
}

// wilson returns the Wilson score interval of a binomial proportion with k
// successes in n trials at z standard errors (1.96 for 95%).
func wilson(k, n int64, z float64) (lo, hi float64) {
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	nn := float64(n)
	p := float64(k) / nn
	z2 := z * z
	centre := (p + z2/(2*nn)) / (1 + z2/nn)
	half := z / (1 + z2/nn) * math.Sqrt(p*(1-p)/nn+z2/(4*nn*nn))
	return max(0, centre-half), min(1, centre+half)
}

// ThresholdRow is the operating point for a target false-positive rate:
// the lowest threshold (the most positives) whose FPR does not exceed
// TargetFPR, with its FPR, TPR and precision (NaN without positives
// called). Threshold is +Inf when no threshold meets the target.
type ThresholdRow struct {
	TargetFPR, Threshold, FPR, TPR, Precision float64
}

// Thresholds returns the operating point of each target false-positive
// rate, or nil when either outcome is absent.
func (t *Tally) Thresholds(targets []float64) []ThresholdRow {
	roc := t.ROC()
	if roc == nil {
		return nil
	}
	out := make([]ThresholdRow, len(targets))
	for i, a := range targets {
		best := roc[0]
		for _, pt := range roc[1:] {
			if pt.FPR > a {
				break // the FPR only grows as the threshold falls
			}
			best = pt
		}
		r := ThresholdRow{TargetFPR: a, Threshold: best.Threshold, FPR: best.FPR, TPR: best.TPR, Precision: math.NaN()}
		if best.TP+best.FP > 0 {
			r.Precision = float64(best.TP) / float64(best.TP+best.FP)
		}
		out[i] = r
	}
	return out
}
