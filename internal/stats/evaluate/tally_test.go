package evaluate

import (
	"bytes"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// handCase is ten predictions whose scores are worked out by hand below.
var handCase = []struct {
	p float64
	y bool
}{
	{0.9, true}, {0.8, true}, {0.7, true}, {0.7, false}, {0.6, true},
	{0.55, false}, {0.4, true}, {0.3, false}, {0.2, false}, {0.1, false},
}

func handTally(calibrationBins int) *Tally {
	t := NewTally(calibrationBins)
	for _, c := range handCase {
		t.Add(c.p, c.y)
	}
	return t
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestHandComputed compares every output with values worked out by hand.
func TestHandComputed(t *testing.T) {
	tl := handTally(2)
	s := tl.Scores()
	// Pairs of a positive above a negative, of 5 × 5: 0.9 and 0.8 beat all
	// five; 0.7 beats four and ties one (½); 0.6 beats four; 0.4 beats
	// three. 21.5 / 25 = 0.86. The only pair sharing a bin is an exact
	// tie: the AUC is exact.
	if s.N != 10 || s.Positives != 5 || s.AUC != 0.86 || s.AUCTieBound != 0 {
		t.Errorf("n %d, positives %d, AUC %v ± %v; want 10, 5, 0.86 ± 0", s.N, s.Positives, s.AUC, s.AUCTieBound)
	}
	// Two predictions 0.00001 apart share a bin: counted as a tie (½)
	// where the exact AUC is 0, within the bound of ½ · 1/(1·1).
	near2 := NewTally(10)
	near2.Add(0.3, true)
	near2.Add(0.30001, false)
	if s := near2.Scores(); s.AUC != 0.5 || s.AUCTieBound != 0.5 {
		t.Errorf("a near tie: AUC %v ± %v, want 0.5 ± 0.5", s.AUC, s.AUCTieBound)
	}
	// Right side of ½: the positives but 0.4, the negatives but 0.7, 0.55.
	if s.Accuracy != 0.7 {
		t.Errorf("accuracy %v, want 0.7", s.Accuracy)
	}
	// The probabilities given to the outcomes.
	given := []float64{0.9, 0.8, 0.7, 0.3, 0.6, 0.45, 0.4, 0.7, 0.8, 0.9}
	var logp, brier float64
	for _, q := range given {
		logp += math.Log(q) / 10
		brier += (1 - q) * (1 - q) / 10
	}
	if !near(s.LogPred, logp, 1e-12) || !near(s.Brier, brier, 1e-12) {
		t.Errorf("log predictive %v, Brier %v; want %v, %v", s.LogPred, s.Brier, logp, brier)
	}

	// The ROC curve by hand, threshold falling through the predictions.
	want := []struct{ p, fpr, tpr float64 }{
		{math.Inf(1), 0, 0}, {0.9, 0, 0.2}, {0.8, 0, 0.4}, {0.7, 0.2, 0.6}, {0.6, 0.2, 0.8},
		{0.55, 0.4, 0.8}, {0.4, 0.4, 1}, {0.3, 0.6, 1}, {0.2, 0.8, 1}, {0.1, 1, 1},
	}
	roc := tl.ROC()
	if len(roc) != len(want) {
		t.Fatalf("ROC has %d points, want %d: %+v", len(roc), len(want), roc)
	}
	for i, w := range want {
		r := roc[i]
		// A threshold is the lower edge of its prediction's bin: at most
		// the prediction, and less than a bin below it.
		okThreshold := r.Threshold == w.p || (r.Threshold <= w.p && r.Threshold > w.p-0.0002)
		if !okThreshold || !near(r.FPR, w.fpr, 1e-15) || !near(r.TPR, w.tpr, 1e-15) {
			t.Errorf("ROC point %d: %+v, want threshold ≈ %v, FPR %v, TPR %v", i, r, w.p, w.fpr, w.tpr)
		}
	}

	// Operating points: the lowest threshold within each target FPR.
	rows := tl.Thresholds([]float64{0, 0.2, 0.5, 1})
	for i, w := range []struct{ p, fpr, tpr, precision float64 }{
		{0.8, 0, 0.4, 1}, {0.6, 0.2, 0.8, 0.8}, {0.4, 0.4, 1, 5.0 / 7}, {0.1, 1, 1, 0.5},
	} {
		r := rows[i]
		if !(r.Threshold <= w.p && r.Threshold > w.p-0.0002) || r.FPR != w.fpr || r.TPR != w.tpr || !near(r.Precision, w.precision, 1e-15) {
			t.Errorf("target FPR %v: %+v, want threshold ≈ %v, FPR %v, TPR %v, precision %v", r.TargetFPR, r, w.p, w.fpr, w.tpr, w.precision)
		}
	}

	// Two calibration bins: [0, ½) holds 0.4 (a 1), 0.3, 0.2, 0.1; [½, 1]
	// the other six, four of them 1.
	cal := tl.Calibration()
	if c := cal[0]; c.N != 4 || c.Positives != 1 || !near(c.MeanPredicted, 0.25, 1e-15) || c.Observed != 0.25 {
		t.Errorf("bin [0, ½): %+v", c)
	}
	if c := cal[1]; c.N != 6 || c.Positives != 4 || !near(c.MeanPredicted, 4.25/6, 1e-15) || !near(c.Observed, 4.0/6, 1e-15) {
		t.Errorf("bin [½, 1]: %+v", c)
	}
	// Wilson interval of 1 in 4 at 95%: 0.0456 to 0.6994.
	if c := cal[0]; !near(c.ObservedLow, 0.04558, 1e-5) || !near(c.ObservedHigh, 0.69936, 1e-5) {
		t.Errorf("Wilson interval of 1/4: [%v, %v]", c.ObservedLow, c.ObservedHigh)
	}
}

// TestUndefined checks the NaNs of a tally with one outcome only.
func TestUndefined(t *testing.T) {
	tl := NewTally(10)
	if s := tl.Scores(); s.N != 0 || !math.IsNaN(s.Accuracy) || !math.IsNaN(s.AUC) {
		t.Errorf("empty: %+v", s)
	}
	tl.Add(0.8, true)
	tl.Add(0.3, true)
	if s := tl.Scores(); s.Accuracy != 0.5 || !math.IsNaN(s.AUC) || tl.ROC() != nil || tl.Thresholds([]float64{0.1}) != nil {
		t.Errorf("one outcome: %+v", s)
	}
	tl.Add(0, false)
	tl.Add(1, true)
	if s := tl.Scores(); s.AUC != 1 {
		t.Errorf("p = 0 and 1 in the end bins: AUC %v, want 1", s.AUC)
	}
}

// TestBins checks that a bin's threshold is at most every prediction in it
// and above every prediction of the bin below.
func TestBins(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		p := r.Float64()
		if r.IntN(4) == 0 {
			p = math.Pow(p, 20) // small probabilities, down to the end bin
		}
		k := bin(p)
		lo := threshold(k)
		if lo > p*(1+1e-12) {
			t.Fatalf("p = %v in bin %d whose threshold is %v", p, k, lo)
		}
		if k+1 < Bins && threshold(k+1) <= p*(1-1e-12) {
			t.Fatalf("p = %v in bin %d, below bin %d's threshold %v", p, k, k+1, threshold(k+1))
		}
	}
}

// TestCalibratedPredictor draws outcomes with the predicted probabilities
// (a calibrated predictor, p uniform): every calibration bin's observed
// frequency must lie within 4 standard errors of its mean prediction, and
// the AUC must be 5/6, its value for this predictor (∫∫_{a>b} 2a·2(1−b)).
// A miscalibrated predictor (reporting p² for an outcome of probability p)
// must fail the same check.
func TestCalibratedPredictor(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	good, bad := NewTally(10), NewTally(10)
	const n = 400000
	for range n {
		p := r.Float64()
		y := r.Float64() < p
		good.Add(p, y)
		bad.Add(p*p, y)
	}
	worst := func(tl *Tally) float64 {
		z := 0.0
		for _, c := range tl.Calibration() {
			se := math.Sqrt(c.MeanPredicted * (1 - c.MeanPredicted) / float64(c.N))
			z = max(z, math.Abs(c.Observed-c.MeanPredicted)/se)
		}
		return z
	}
	if z := worst(good); z > 4 {
		t.Errorf("calibrated predictor: a bin is %.1f standard errors off", z)
	}
	if z := worst(bad); z < 10 {
		t.Errorf("miscalibrated predictor: worst bin only %.1f standard errors off", z)
	}
	s := good.Scores()
	if !near(s.AUC, 5.0/6, 0.004) || s.AUCTieBound > 1e-4 {
		t.Errorf("AUC %v ± %v, want 5/6", s.AUC, s.AUCTieBound)
	}
	// p² is a monotone transform of p: the same ranking, the same AUC.
	if b := bad.Scores().AUC; !near(b, s.AUC, 1e-3) {
		t.Errorf("AUC of p² %v differs from AUC of p %v", b, s.AUC)
	}
}

// TestMerge checks that merging tallies in pieces gives the counts of one.
func TestMerge(t *testing.T) {
	whole, a, b := handTally(3), NewTally(3), NewTally(3)
	for i, c := range handCase {
		if i%3 == 0 {
			a.Add(c.p, c.y)
		} else {
			b.Add(c.p, c.y)
		}
	}
	a.Merge(b)
	if sa, sw := a.Scores(), whole.Scores(); sa.N != sw.N || sa.AUC != sw.AUC || !near(sa.LogPred, sw.LogPred, 1e-15) {
		t.Errorf("merged %+v, whole %+v", sa, sw)
	}
	a.Reset()
	if a.N() != 0 || a.ROC() != nil {
		t.Errorf("reset tally holds %d predictions", a.N())
	}
}

// TestOutputs writes the tables of the hand case and checks their shape:
// headers and rows per series.
func TestOutputs(t *testing.T) {
	ss := []Series{{Keys: []string{"5", "1"}, Name: "L=5 chain 1", Tally: handTally(10)}, {Keys: []string{"5", "2"}, Name: "L=5 <chain 2>", Tally: NewTally(10)}}
	keys := []string{"L", "chain"}
	for _, tc := range []struct {
		name   string
		write  func(io.Writer) error
		header string
		rows   int
	}{
		{"scores", func(w io.Writer) error { return WriteScores(w, keys, ss) }, "L\tchain\tn\tpositives\taccuracy\tlogpred\tbrier\tauc\tauc_tie_bound", 2},
		{"roc", func(w io.Writer) error { return WriteROC(w, keys, ss) }, "L\tchain\tthreshold\tfpr\ttpr\tfp\ttp", 10},
		{"calibration", func(w io.Writer) error { return WriteCalibration(w, keys, ss) }, "L\tchain\tbin_lo\tbin_hi\tn\tpositives\tmean_predicted\tobserved\tobserved_low\tobserved_high", 20},
		{"thresholds", func(w io.Writer) error { return WriteThresholds(w, keys, ss, []float64{0.01, 0.1}) }, "L\tchain\ttarget_fpr\tthreshold\tfpr\ttpr\tprecision", 2},
	} {
		var b bytes.Buffer
		if err := tc.write(&b); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if lines[0] != tc.header || len(lines)-1 != tc.rows {
			t.Errorf("%s: header %q and %d rows, want %q and %d", tc.name, lines[0], len(lines)-1, tc.header, tc.rows)
		}
		for _, l := range lines[1:] {
			if strings.Count(l, "\t") != strings.Count(tc.header, "\t") {
				t.Errorf("%s: row %q has the wrong number of columns", tc.name, l)
			}
		}
	}
	if !strings.Contains(mustWrite(t, func(w io.Writer) error { return WriteScores(w, keys, ss) }), "5\t1\t10\t5\t0.7\t") {
		t.Error("scores row of the hand case missing")
	}
}

func mustWrite(t *testing.T, f func(io.Writer) error) string {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
