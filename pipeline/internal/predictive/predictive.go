package predictive

import (
	"math"

	"scpipe/gibbs"
	"scpipe/internal/rundir"
)

// CellChunk is the number of cells whose held-out scores are summed
// together before the sums are merged in chunk order, by the run's summary
// and by scpipe evaluate alike: the chunks, not the workers, fix the
// floating-point totals, and one size for both keeps their held-out scores
// equal to the bit.
const CellChunk = 4096

// Means are a fit's posterior means: ẑ (cells × L, row-major), û (genes ×
// L) and the housekeeping code's û (nil without one), which every cell
// uses.
type Means struct {
	L            int
	Z, U         []float64
	Housekeeping []float64
}

// Used returns dst[:0] with the codes that cell n uses (ẑ_nl ≠ 0) appended.
// A code the cell never used has a factor of exactly 1 in Uncovered:
// leaving it out changes no bit of the product.
func (m Means) Used(n int, dst []int) []int {
	dst = dst[:0]
	for l, z := range m.Z[n*m.L : (n+1)*m.L] {
		if z != 0 {
			dst = append(dst, l)
		}
	}
	return dst
}

// Uncovered returns ∏_l(1 − ẑ_nl û_dl) over the housekeeping code and then
// used, the codes cell n uses (Used): the posterior probability, to the
// plug-in estimate, that no code covers entry (n, d). The explicit
// conversion forbids fused multiply-adds, whose rounding would differ
// between builds (GOAMD64=v1 and v3).
func (m Means) Uncovered(n, d int, used []int) float64 {
	z := m.Z[n*m.L : (n+1)*m.L]
	prod := 1.0
	if m.Housekeeping != nil {
		prod = 1 - m.Housekeeping[d]
	}
	for _, l := range used {
		prod *= 1 - float64(z[l]*m.U[d*m.L+l])
	}
	return prod
}

// PlugIn is the plug-in predictive of a fit (gibbs.PlugIn): the expected
// coverage c = 1 − ∏_l(1 − ẑ_nl û_ld) of the posterior means put into the
// likelihood, P(x = 1) = σ(λ(2c − 1)) under symmetric noise (λ not NaN) and
// β + (1 − α − β)·c under dropout noise.
type PlugIn struct {
	lambda, dropout, background float64
	// cellDropout and cellBackground, when not nil, hold each cell's rates
	// (per-cell levels), which replace the shared ones.
	cellDropout, cellBackground []float64
	// genes, when not nil, holds each gene's offset to the gain of a
	// covered one (per-gene levels, gibbs.EntryRates).
	genes *geneLifts
	// With the samples' own gene levels (rundir.Codes.SampleGeneLift),
	// cellLifts[n] is cell n's sample's offsets, in place of genes; nil
	// otherwise.
	cellLifts []*geneLifts
}

// geneLifts are one set of the genes' offsets: each gene's (lift), and
// their distinct values with each gene's place among them, so that a Cell
// works out a cell's rates once per level rather than once per entry (of
// nil when the genes take too many values for that).
type geneLifts struct {
	lift, values []float64
	of           []uint8
}

func newGeneLifts(lift []float64) *geneLifts {
	values, of := distinctLifts(lift)
	return &geneLifts{lift: lift, values: values, of: of}
}

// NewPlugIn returns the plug-in predictive of a fit whose last sweep is
// last and whose cells.parquet and codes.parquet are cells and codes.
func NewPlugIn(last rundir.TraceRow, cells rundir.Cells, codes rundir.Codes) PlugIn {
	q := PlugIn{lambda: last.Lambda, dropout: last.Dropout, background: last.Background,
		cellDropout: cells.Dropout, cellBackground: cells.Background}
	if cells.Dropout != nil && codes.GeneLift != nil {
		q.genes = newGeneLifts(codes.GeneLift)
		q.cellLifts = sampleLifts(cells.Samples, codes, q.genes)
	}
	return q
}

// sampleLifts returns each cell's sample's gene offsets (cells' samples
// and codes' as the tables hold them), or nil when the fit has no
// per-sample offsets. A cell whose sample the codes do not list takes
// the genes' (their mean), mean: tables of one run always list the same.
func sampleLifts(samples []string, codes rundir.Codes, mean *geneLifts) []*geneLifts {
	if codes.SampleGeneLift == nil || samples == nil {
		return nil
	}
	of := map[string]*geneLifts{}
	for i, name := range codes.Samples {
		of[name] = newGeneLifts(codes.SampleGeneLift[i])
	}
	out := make([]*geneLifts, len(samples))
	for n, name := range samples {
		if out[n] = of[name]; out[n] == nil {
			out[n] = mean
		}
	}
	return out
}

// liftsOf returns the gene offsets that cell n's entries take, nil
// without per-gene levels.
func (q *PlugIn) liftsOf(n int) *geneLifts {
	if q.cellLifts != nil {
		return q.cellLifts[n]
	}
	return q.genes
}

// distinctLifts returns the distinct values of lift (compared bit for bit)
// and each one's index, or nil, nil when there are more than 256: gene
// levels give a handful.
func distinctLifts(lift []float64) ([]float64, []uint8) {
	var values []float64
	at := map[uint64]uint8{}
	of := make([]uint8, len(lift))
	for d, v := range lift {
		k, ok := at[math.Float64bits(v)]
		if !ok {
			if len(values) == 256 {
				return nil, nil
			}
			k = uint8(len(values))
			at[math.Float64bits(v)] = k
			values = append(values, v)
		}
		of[d] = k
	}
	return values, of
}

// Cell is the plug-in predictive of one cell's entries (PlugIn.Cell): with
// per-gene levels, the rates of each level are worked out once for the cell
// (three logarithms or exponentials each) instead of once per entry. Its P
// equals PlugIn.P bit for bit.
type Cell struct {
	q       *PlugIn
	n       int
	liftOf  []uint8   // the cell's genes' places in its lifts' values
	on, off []float64 // per value of the cell's lifts
}

// Cell makes c the predictive of cell n's entries, reusing c's space.
func (q *PlugIn) Cell(n int, c *Cell) {
	c.q, c.n = q, n
	c.on, c.off = c.on[:0], c.off[:0]
	g := q.liftsOf(n)
	if c.liftOf = nil; g == nil || g.of == nil || !math.IsNaN(q.lambda) {
		return
	}
	c.liftOf = g.of
	dropout, background := q.dropout, q.background
	if q.cellDropout != nil {
		dropout, background = q.cellDropout[n], q.cellBackground[n]
	}
	for _, lift := range g.values {
		on, off := gibbs.EntryRates(dropout, background, lift)
		c.on, c.off = append(c.on, on), append(c.off, off)
	}
}

// P returns P(x = 1) of the cell's gene d given uncovered, as PlugIn.P.
func (c *Cell) P(d int, uncovered float64) float64 {
	q := c.q
	if !math.IsNaN(q.lambda) || c.liftOf == nil {
		return q.P(c.n, d, uncovered)
	}
	k := c.liftOf[d]
	on, off := c.on[k], c.off[k]
	return off + float64((on-off)*(1-uncovered))
}

// P returns P(x = 1) of cell n and gene d given uncovered, ∏_l(1 − ẑ_nl
// û_ld) (Means.Uncovered). The explicit conversions forbid fused
// multiply-adds.
func (q PlugIn) P(n, d int, uncovered float64) float64 {
	if !math.IsNaN(q.lambda) {
		return 1 / (1 + math.Exp(-q.lambda*(1-float64(2*uncovered))))
	}
	dropout, background := q.dropout, q.background
	if q.cellDropout != nil {
		dropout, background = q.cellDropout[n], q.cellBackground[n]
	}
	if g := q.liftsOf(n); g != nil {
		on, off := gibbs.EntryRates(dropout, background, g.lift[d])
		return off + float64((on-off)*(1-uncovered))
	}
	return background + float64((1-dropout-background)*(1-uncovered))
}
