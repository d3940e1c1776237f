package rundir

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"scpipe/internal/infile"
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

	// Agreement is the mean Jaccard agreement of this chain's program gene
	// sets with those of chain 1 of the same L after matching (1 for chain
	// 1 itself).
	Agreement float64
	// RHatLogLik is the rank-normalised split-R̂ (codematch.RankRHat) of
	// the log-likelihood over the sampling sweeps of all chains of this L:
	// the same value on every row of an L.
	RHatLogLik float64

	// Converged is "yes" when the chains of this L found the same programs
	// and each reached a level (runsummary.Converged), or when the L's
	// consensus of chains reproduces and each reached a level
	// (runsummary.ConvergedByConsensus); "no" when not, and "" (written NA)
	// with a single chain and no consensus.
	Converged string
	// Recommended marks the rows of the L the run recommends
	// (by runsummary's rule of model selection).
	Recommended bool

	// The columns below were added after the ones above; a file written
	// before them reads as NaN, -1 and nil.

	// HeldoutLogPredSE and HeldoutAccuracySE are the standard errors over
	// cells of HeldoutLogPred and HeldoutAccuracy.
	HeldoutLogPredSE, HeldoutAccuracySE float64
	// LogPredGap is the held-out log predictive of the best L less this
	// L's, per entry, from each L's chain of highest log-likelihood;
	// LogPredGapSE its standard error over cells, paired; and
	// LogPredTolerance the gap the recommendation allows this L (the larger
	// of LogPredGapSE and the elbow): the recommended L is the smallest
	// whose gap is at most its tolerance. The same on every row of an L.
	LogPredGap, LogPredGapSE, LogPredTolerance float64
	// RHat is the largest rank-normalised split-R̂ of the quantities traced
	// over the sampling sweeps that do not depend on the order of the codes
	// (log-likelihood, λ, dropout and background rates), pooled over the
	// chains of this L; RHatWithin the largest of each chain's split-R̂
	// against itself (codematch.WithinRHat). The same on every row of an L.
	RHat, RHatWithin float64
	// Programs counts this chain's codes that hold genes (program gene
	// sets: posterior mean at least ½, housekeeping genes left out, codes
	// no cell uses empty); StablePrograms the programs found by every chain
	// of the L (codematch.StablePrograms), -1 with a single chain.
	Programs, StablePrograms int
	// StableCodes lists this chain's codes (1-based, as code_<k>) that hold
	// the stable programs, in the order of chain 1's codes that they
	// match; nil with a single chain.
	StableCodes []int
}

// summaryHeader lists the columns of summary.tsv in order: those every
// version has written, then extraHeader's.
var summaryHeader = []string{
	"L", "chain", "sweeps", "lambda", "loglik", "train_accuracy",
	"heldout_accuracy", "heldout_logpred", "seconds", "agreement", "rhat_loglik",
	"dropout", "background", "converged", "recommended",
}

// extraHeader lists the columns appended after summaryHeader's, which a
// reader finds by name and a file written before them lacks: the floats,
// then programs, stable_programs and stable_codes.
var extraHeader = []string{
	"heldout_logpred_se", "heldout_accuracy_se", "logpred_gap", "logpred_gap_se", "logpred_tolerance",
	"rhat", "rhat_within", "programs", "stable_programs", "stable_codes",
}

// floats returns pointers to the float columns of r, in header order from
// the fourth column.
func (r *SummaryRow) floats() []*float64 {
	return []*float64{&r.Lambda, &r.LogLik, &r.TrainAccuracy, &r.HeldoutAccuracy,
		&r.HeldoutLogPred, &r.Seconds, &r.Agreement, &r.RHatLogLik, &r.Dropout, &r.Background}
}

// extraFloats returns pointers to the float columns of extraHeader, in
// its order.
func (r *SummaryRow) extraFloats() []*float64 {
	return []*float64{&r.HeldoutLogPredSE, &r.HeldoutAccuracySE, &r.LogPredGap, &r.LogPredGapSE, &r.LogPredTolerance, &r.RHat, &r.RHatWithin}
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
		bw.WriteString(strings.Join(slices.Concat(summaryHeader, extraHeader), "\t"))
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
			for _, f := range r.extraFloats() {
				line = append(line, '\t')
				line = appendFloat(line, *f)
			}
			line = append(line, '\t')
			line = appendCount(line, r.Programs)
			line = append(line, '\t')
			line = appendCount(line, r.StablePrograms)
			line = append(line, '\t')
			line = appendCodes(line, r.StableCodes)
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

// appendCount appends n, or NA when it is negative (not defined).
func appendCount(b []byte, n int) []byte {
	if n < 0 {
		return append(b, "NA"...)
	}
	return strconv.AppendInt(b, int64(n), 10)
}

// appendCodes appends codes comma-separated, none when there are none
// and NA when codes is nil.
func appendCodes(b []byte, codes []int) []byte {
	switch {
	case codes == nil:
		return append(b, "NA"...)
	case len(codes) == 0:
		return append(b, "none"...)
	}
	for i, k := range codes {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(k), 10)
	}
	return b
}

// parseCount reads appendCount's output.
func parseCount(s string) (int, error) {
	if s == "NA" || s == "" {
		return -1, nil
	}
	n, err := strconv.Atoi(s)
	if err == nil && n < 0 {
		err = fmt.Errorf("%d is negative", n)
	}
	return n, err
}

// parseCodes reads appendCodes' output.
func parseCodes(s string) ([]int, error) {
	switch s {
	case "NA", "":
		return nil, nil
	case "none":
		return []int{}, nil
	}
	var codes []int
	for _, f := range strings.Split(s, ",") {
		k, err := strconv.Atoi(f)
		if err != nil || k < 1 {
			return nil, fmt.Errorf("%q is not a list of codes from 1", s)
		}
		codes = append(codes, k)
	}
	return codes, nil
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
// columns every version has written, in their order; the columns added
// since are found by name, and a file without them (written before them)
// reads as the SummaryRow documents; other columns (from a later format
// version) are ignored. Empty fields and NA read as NaN.
func ReadSummary(path string) ([]SummaryRow, error) {
	f, err := infile.Open(path)
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
	// extra[i]: the field of extraHeader[i], or -1 when the file lacks it.
	extra := make([]int, len(extraHeader))
	for i, name := range extraHeader {
		extra[i] = slices.Index(header, name)
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
		if err := r.readExtra(fields, extra); err != nil {
			return nil, fmt.Errorf("rundir: %s line %d: %w", path, lineNo, err)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("rundir: %s: %w", path, err)
	}
	return rows, nil
}

// readExtra reads the columns of extraHeader from fields, at the indices
// in extra (-1: not in the file).
func (r *SummaryRow) readExtra(fields []string, extra []int) error {
	field := func(i int) string {
		if extra[i] < 0 {
			return "NA"
		}
		return fields[extra[i]]
	}
	var err error
	nf := len(r.extraFloats())
	for i, p := range r.extraFloats() {
		if *p, err = parseFloat(field(i)); err != nil {
			return fmt.Errorf("column %s: %w", extraHeader[i], err)
		}
	}
	if r.Programs, err = parseCount(field(nf)); err != nil {
		return fmt.Errorf("column %s: %w", extraHeader[nf], err)
	}
	if r.StablePrograms, err = parseCount(field(nf + 1)); err != nil {
		return fmt.Errorf("column %s: %w", extraHeader[nf+1], err)
	}
	if r.StableCodes, err = parseCodes(field(nf + 2)); err != nil {
		return fmt.Errorf("column %s: %w", extraHeader[nf+2], err)
	}
	return nil
}
