package evaluate

import (
	"bufio"
	"io"
	"math"
	"strconv"
	"strings"
)

// Series is a tally with the values of the columns that identify it in the
// tables (for example L, chain and target) and its name in the figures.
type Series struct {
	Keys  []string
	Name  string
	Tally *Tally
}

// table writes tab-separated rows: the series' keys, then its values.
type table struct {
	w   *bufio.Writer
	buf []byte
}

func newTable(w io.Writer, keyCols []string, cols ...string) *table {
	t := &table{w: bufio.NewWriter(w)}
	t.w.WriteString(strings.Join(append(append([]string(nil), keyCols...), cols...), "\t") + "\n")
	return t
}

// row writes one row; values are int64 or float64.
func (t *table) row(keys []string, values ...any) {
	t.buf = t.buf[:0]
	for i, k := range keys {
		if i > 0 {
			t.buf = append(t.buf, '\t')
		}
		t.buf = append(t.buf, k...)
	}
	for i, v := range values {
		if i > 0 || len(keys) > 0 {
			t.buf = append(t.buf, '\t')
		}
		switch v := v.(type) {
		case int64:
			t.buf = strconv.AppendInt(t.buf, v, 10)
		case float64:
			t.buf = appendFloat(t.buf, v)
		}
	}
	t.w.Write(append(t.buf, '\n'))
}

// appendFloat writes v in the shortest form that reads back exactly, with
// NaN as "NaN" and infinities as "inf" and "-inf" (as pandas, polars and R
// read them).
func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, 1):
		return append(b, "inf"...)
	case math.IsInf(v, -1):
		return append(b, "-inf"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

func (t *table) flush() error { return t.w.Flush() }

// WriteScores writes one row of Scores per series: the key columns, then n,
// positives, accuracy, logpred, brier, auc, auc_tie_bound.
func WriteScores(w io.Writer, keyCols []string, ss []Series) error {
	t := newTable(w, keyCols, "n", "positives", "accuracy", "logpred", "brier", "auc", "auc_tie_bound")
	for _, s := range ss {
		sc := s.Tally.Scores()
		t.row(s.Keys, sc.N, sc.Positives, sc.Accuracy, sc.LogPred, sc.Brier, sc.AUC, sc.AUCTieBound)
	}
	return t.flush()
}

// WriteROC writes every point of every series' ROC curve: the key columns,
// then threshold, fpr, tpr, fp, tp.
func WriteROC(w io.Writer, keyCols []string, ss []Series) error {
	t := newTable(w, keyCols, "threshold", "fpr", "tpr", "fp", "tp")
	for _, s := range ss {
		for _, p := range s.Tally.ROC() {
			t.row(s.Keys, p.Threshold, p.FPR, p.TPR, p.FP, p.TP)
		}
	}
	return t.flush()
}

// WriteCalibration writes every bin of every series' calibration curve:
// the key columns, then bin_lo, bin_hi, n, positives, mean_predicted,
// observed, observed_low, observed_high.
func WriteCalibration(w io.Writer, keyCols []string, ss []Series) error {
	t := newTable(w, keyCols, "bin_lo", "bin_hi", "n", "positives", "mean_predicted", "observed", "observed_low", "observed_high")
	for _, s := range ss {
		for _, b := range s.Tally.Calibration() {
			t.row(s.Keys, b.Lo, b.Hi, b.N, b.Positives, b.MeanPredicted, b.Observed, b.ObservedLow, b.ObservedHigh)
		}
	}
	return t.flush()
}

// WriteThresholds writes the operating point of each target false-positive
// rate for every series: the key columns, then target_fpr, threshold, fpr,
// tpr, precision.
func WriteThresholds(w io.Writer, keyCols []string, ss []Series, targets []float64) error {
	t := newTable(w, keyCols, "target_fpr", "threshold", "fpr", "tpr", "precision")
	for _, s := range ss {
		for _, r := range s.Tally.Thresholds(targets) {
			t.row(s.Keys, r.TargetFPR, r.Threshold, r.FPR, r.TPR, r.Precision)
		}
	}
	return t.flush()
}
