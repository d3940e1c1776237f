package rundir

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// SummaryRow is one row of summary.tsv: the result of one (L, chain) fit.
// Float fields may be NaN (written NA) where a value is not defined, such as
// the held-out columns when no entries were held out, or R̂ with fewer than
// four sampling sweeps.
type SummaryRow struct {
	L      int // number of codes
	Chain  int // 1-based chain number
	Sweeps int // sweeps run, burn-in included

	Lambda          float64 // final dispersion λ (symmetric noise; NaN under dropout noise)
	Dropout         float64 // final P(x = 0 | covered)
	Background      float64 // final P(x = 1 | not covered)
	LogLik          float64 // final log-likelihood of the training entries
	TrainAccuracy   float64 // fraction of training entries reconstructed correctly
	HeldoutAccuracy float64 // fraction of held-out entries predicted correctly
	HeldoutLogPred  float64 // mean log predictive probability of held-out entries
	Seconds         float64 // wall-clock seconds of the fit

	// Agreement is the mean Jaccard agreement of this chain's codes with
	// those of chain 1 of the same L after matching (1 for chain 1 itself).
	Agreement float64
	// RHatLogLik is the split-R̂ of the log-likelihood over the sampling
	// sweeps of all chains of this L: the same value on every row of an L.
	RHatLogLik float64

	// Converged is "yes" when the chains of this L agree (R̂ and agreement
	// within their thresholds), "no" when they do not, and "" (written NA)
	// with a single chain.
	Converged string
	// Recommended marks the rows of the L the run recommends
	// (pipeline.RecommendL).
	Recommended bool
}

// summaryHeader lists the columns of summary.tsv in order.
var summaryHeader = []string{
	"L", "chain", "sweeps", "lambda", "loglik", "train_accuracy",
	"heldout_accuracy", "heldout_logpred", "seconds", "agreement", "rhat_loglik",
	"dropout", "background", "converged", "recommended",
}

// floats returns pointers to the float columns of r, in header order from
// the fourth column.
func (r *SummaryRow) floats() []*float64 {
	return []*float64{&r.Lambda, &r.LogLik, &r.TrainAccuracy, &r.HeldoutAccuracy,
		&r.HeldoutLogPred, &r.Seconds, &r.Agreement, &r.RHatLogLik, &r.Dropout, &r.Background}
}

// WriteSummary writes rows to path as summary.tsv, atomically: a header
// line, then one tab-separated line per row, sorted by L and then chain
// (rows itself is not reordered). Floats are
// written in the shortest form that reads back exactly; NaN as NA, infinities
// as Inf and -Inf.
func WriteSummary(path string, rows []SummaryRow) error {
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b SummaryRow) int {
		if a.L != b.L {
			return a.L - b.L
		}
		return a.Chain - b.Chain
	})
	return WriteFileAtomic(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		bw.WriteString(strings.Join(summaryHeader, "\t"))
		bw.WriteByte('\n')
		var line []byte
		for _, r := range rows {
			line = strconv.AppendInt(line[:0], int64(r.L), 10)
			line = append(line, '\t')
			line = strconv.AppendInt(line, int64(r.Chain), 10)
			line = append(line, '\t')
			line = strconv.AppendInt(line, int64(r.Sweeps), 10)
			for _, f := range r.floats() {
				line = append(line, '\t')
				line = appendFloat(line, *f)
			}
			line = append(line, '\t')
			line = appendText(line, r.Converged)
			line = append(line, '\t')
			line = appendText(line, map[bool]string{false: "no", true: "yes"}[r.Recommended])
			line = append(line, '\n')
			bw.Write(line)
		}
		return bw.Flush()
	})
}

// appendText appends s, or NA when it is empty.
func appendText(b []byte, s string) []byte {
	if s == "" {
		return append(b, "NA"...)
	}
	return append(b, s...)
}

func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "NA"...)
	case math.IsInf(v, 1):
		return append(b, "Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// yesNo reads a yes/no column; NA reads as "" where allowed.
func yesNo(s string, na bool) (string, error) {
	switch {
	case s == "yes" || s == "no":
		return s, nil
	case na && (s == "NA" || s == ""):
		return "", nil
	}
	return "", fmt.Errorf("%q is not yes or no", s)
}

func parseFloat(s string) (float64, error) {
	switch s {
	case "NA", "NaN", "nan", "":
		return math.NaN(), nil
	case "Inf", "inf":
		return math.Inf(1), nil
	case "-Inf", "-inf":
		return math.Inf(-1), nil
	}
	return strconv.ParseFloat(s, 64)
}

// ReadSummary reads a summary.tsv file. The header must start with the
// columns WriteSummary writes, in that order; further columns (from a later
// format version) are ignored. Empty fields and NA read as NaN.
func ReadSummary(path string) ([]SummaryRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("rundir: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("rundir: %s: %w", path, err)
		}
		return nil, fmt.Errorf("rundir: %s: empty file, want a header line", path)
	}
	header := strings.Split(strings.TrimSuffix(sc.Text(), "\r"), "\t")
	for i, want := range summaryHeader {
		if i >= len(header) || header[i] != want {
			return nil, fmt.Errorf("rundir: %s: header column %d: want %q, header is %q", path, i+1, want, sc.Text())
		}
	}
	var rows []SummaryRow
	for lineNo := 2; sc.Scan(); lineNo++ {
		text := strings.TrimSuffix(sc.Text(), "\r")
		if text == "" {
			continue
		}
		fields := strings.Split(text, "\t")
		if len(fields) != len(header) {
			return nil, fmt.Errorf("rundir: %s line %d: %d fields, the header has %d", path, lineNo, len(fields), len(header))
		}
		var r SummaryRow
		for i, p := range []*int{&r.L, &r.Chain, &r.Sweeps} {
			if *p, err = strconv.Atoi(fields[i]); err != nil {
				return nil, fmt.Errorf("rundir: %s line %d: column %s: %w", path, lineNo, summaryHeader[i], err)
			}
		}
		nf := len(r.floats())
		for i, p := range r.floats() {
			if *p, err = parseFloat(fields[3+i]); err != nil {
				return nil, fmt.Errorf("rundir: %s line %d: column %s: %w", path, lineNo, summaryHeader[3+i], err)
			}
		}
		if r.Converged, err = yesNo(fields[3+nf], true); err == nil {
			var rec string
			rec, err = yesNo(fields[4+nf], false)
			r.Recommended = rec == "yes"
		}
		if err != nil {
			return nil, fmt.Errorf("rundir: %s line %d: %w", path, lineNo, err)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("rundir: %s: %w", path, err)
	}
	return rows, nil
}
