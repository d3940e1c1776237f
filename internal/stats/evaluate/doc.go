// Package evaluate scores probabilistic predictions of binary outcomes, as
// `scpipe evaluate` does for a fit's held-out entries: accuracy, log
// predictive, Brier score, the ROC curve and its AUC, the calibration curve
// (reliability diagram) and the operating points for target false-positive
// rates, written as TSV tables (package figure draws them).
//
// The idea: a Tally counts outcomes in 65 536 bins of the predicted
// probability on the logit scale, so that any number of predictions (the
// held-out entries of 1.3 million cells, or every entry of a planted matrix)
// is summarised in fixed memory, and the ROC curve, AUC and thresholds come
// from the bins. Predictions in one bin count as tied; the AUC of the exact
// predictions differs by at most Scores.AUCTieBound, which is 0 when no bin
// holds two different predictions (the bins are 0.0006 wide in logit; a
// bin's smallest and largest prediction are kept to tell). Counts are
// integers and merge in any order; the floating-point sums merge in the
// caller's order.
//
//	t := evaluate.NewTally(10)
//	for each entry { t.Add(p, y) }
//	s := t.Scores()        // Accuracy, LogPred, Brier, AUC
//	roc := t.ROC()         // thresholds with FPR and TPR
//	cal := t.Calibration() // 10 bins: mean predicted vs observed
//	rows := t.Thresholds([]float64{0.01, 0.05})
package evaluate
