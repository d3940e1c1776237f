package report

import (
	"fmt"
	"math"

	"scpipe/internal/figure"
	"scpipe/internal/rundir"
)

// samplesPage is the section of a run fitted to several samples: how each
// sample's cells use each program of one fit (samples.tsv).
type samplesPage struct {
	Facts  string
	Figure *pageFigure
	Names  []string // the samples, in the shards' order
	Rows   []sampleLine
}

// sampleLine is one program of the section's table.
type sampleLine struct {
	Code     int
	Shares   []string // per sample, the share of its cells using the program
	Cells    int      // cells using the program, all samples
	Top      string   // the sample with most of the program's cells, and its share
	Specific bool
}

// samplesSection builds the section from samples.tsv's rows.
func samplesSection(rows []rundir.SampleUsage) (*samplesPage, error) {
	svg, err := figure.SampleShares(rows)
	if err != nil {
		return nil, err
	}
	L, chain := rows[0].L, rows[0].Chain
	sp := &samplesPage{
		Facts: fmt.Sprintf("For each program (code) of L = %d, chain %d (the chain of highest log-likelihood of the recommended L; its code numbers may differ from the reference chain's below), "+
			"the share of each sample's cells that use it (posterior mean of z at least ½). A program %g%% or more of whose cells are one sample's is marked "+
			"sample-specific: the fit cannot tell a program only that sample has (biology: a cell type or state of one donor) from that library's background "+
			"or depth (a batch effect); look at its genes (ambient, stress or mitochondrial genes suggest the batch).", L, chain, 100*rundir.SampleSpecificShare),
		Figure: &pageFigure{ID: "samples", Title: fmt.Sprintf("Programs per sample (L = %d, chain %d)", L, chain), SVG: svg,
			Caption: "Bars: the share of each sample's cells using each program; * marks a program sample-specific (biology or a batch effect?). The same numbers are in RUN/samples.tsv."},
	}
	byCode := map[int]*sampleLine{}
	best := map[int]rundir.SampleUsage{}
	for _, r := range rows {
		if r.Code == 1 {
			sp.Names = append(sp.Names, r.Sample)
		}
		line := byCode[r.Code]
		if line == nil {
			line = &sampleLine{Code: r.Code, Specific: r.SampleSpecific}
			byCode[r.Code] = line
			sp.Rows = append(sp.Rows, sampleLine{})
		}
		line.Shares = append(line.Shares, sharePercent(r.Share))
		line.Cells += r.Using
		if b, ok := best[r.Code]; !ok || r.Using > b.Using {
			best[r.Code] = r
		}
	}
	for k := range sp.Rows {
		line := byCode[k+1]
		if line == nil {
			return nil, fmt.Errorf("report: samples.tsv: no rows of code %d", k+1)
		}
		if b := best[k+1]; b.Using > 0 {
			line.Top = fmt.Sprintf("%s: %s", b.Sample, sharePercent(b.OfProgram))
		} else {
			line.Top = "no cell uses it"
		}
		sp.Rows[k] = *line
	}
	return sp, nil
}

// sharePercent writes a share as a percentage, NA when undefined.
func sharePercent(v float64) string {
	if math.IsNaN(v) {
		return "NA"
	}
	return percent(v)
}
