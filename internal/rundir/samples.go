package rundir

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"scpipe/internal/infile"
)

// SampleUsageFile is RUN/samples.tsv: for a run fitted to shards of several
// samples, how each sample's cells use each program of the recommended L.
const SampleUsageFile = "samples.tsv"

// SampleSpecificShare is the share of a program's cells from one sample
// at which samples.tsv marks it sample-specific: a program of one sample's
// cells may be biology (a cell type only that donor has) or a batch effect
// (that library's background), which the fit alone cannot tell.
const SampleSpecificShare = 0.9

// SampleUsage is one row of samples.tsv: one program of one fit and one
// sample.
type SampleUsage struct {
	L, Chain, Code int    // the fit and the program (code_k of its tables)
	Sample         string // the sample's name
	SampleCells    int    // the sample's cells
	Using          int    // its cells using the program (posterior mean ≥ ½)
	// Share is Using / SampleCells: the share of the sample's cells that
	// use the program.
	Share float64
	// OfProgram is Using over the program's cells in every sample: the
	// share of the program's cells from this sample (NaN when no cell uses
	// the program).
	OfProgram float64
	// SampleSpecific says that SampleSpecificShare or more of the
	// program's cells are one sample's (the same on every row of the
	// program).
	SampleSpecific bool
}

var samplesHeader = []string{"L", "chain", "code", "sample", "sample_cells", "cells_using", "share_of_sample", "share_of_program", "sample_specific"}

// WriteSamples writes rows as samples.tsv at path, atomically.
func WriteSamples(path string, rows []SampleUsage) error {
	return WriteFileAtomic(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		bw.WriteString(strings.Join(samplesHeader, "\t") + "\n")
		for _, r := range rows {
			if strings.ContainsAny(r.Sample, "\t\r\n") {
				return fmt.Errorf("rundir: %s: sample name %q holds a tab or line break", path, r.Sample)
			}
			line := strconv.AppendInt(nil, int64(r.L), 10)
			for _, v := range []int{r.Chain, r.Code} {
				line = strconv.AppendInt(append(line, '\t'), int64(v), 10)
			}
			line = append(append(line, '\t'), r.Sample...)
			for _, v := range []int{r.SampleCells, r.Using} {
				line = strconv.AppendInt(append(line, '\t'), int64(v), 10)
			}
			line = appendFloat(append(line, '\t'), r.Share)
			line = appendFloat(append(line, '\t'), r.OfProgram)
			line = append(append(line, '\t'), map[bool]string{false: "no", true: "yes"}[r.SampleSpecific]...)
			bw.Write(append(line, '\n'))
		}
		return bw.Flush()
	})
}

// ReadSamples reads a samples.tsv written by WriteSamples.
func ReadSamples(path string) ([]SampleUsage, error) {
	data, err := infile.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("rundir: %w", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) == 0 || lines[0] != strings.Join(samplesHeader, "\t") {
		return nil, fmt.Errorf("rundir: %s: not a samples table (header %q)", path, lines[0])
	}
	var rows []SampleUsage
	for i, l := range lines[1:] {
		f := strings.Split(l, "\t")
		if len(f) != len(samplesHeader) {
			return nil, fmt.Errorf("rundir: %s line %d: %d fields, want %d", path, i+2, len(f), len(samplesHeader))
		}
		var r SampleUsage
		ints := []*int{&r.L, &r.Chain, &r.Code, nil, &r.SampleCells, &r.Using}
		for k, p := range ints {
			if p == nil {
				continue
			}
			v, err := strconv.Atoi(f[k])
			if err != nil {
				return nil, fmt.Errorf("rundir: %s line %d: %s: %w", path, i+2, samplesHeader[k], err)
			}
			*p = v
		}
		r.Sample = f[3]
		for k, p := range map[int]*float64{6: &r.Share, 7: &r.OfProgram} {
			if *p, err = parseFloat(f[k]); err != nil {
				return nil, fmt.Errorf("rundir: %s line %d: %s: %w", path, i+2, samplesHeader[k], err)
			}
		}
		switch f[8] {
		case "yes":
			r.SampleSpecific = true
		case "no":
		default:
			return nil, fmt.Errorf("rundir: %s line %d: sample_specific %q: want yes or no", path, i+2, f[8])
		}
		rows = append(rows, r)
	}
	return rows, nil
}
