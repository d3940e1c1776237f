package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"scpipe/shard"
)

// Run ingests opt.Input into the shard folder opt.Output: one pass over the
// input counts (cells expressing each gene, genes per cell, validation of
// every entry) and records the entries above the threshold in a spill (see
// spillWriter: about one byte per entry, in memory up to spillMemory, the
// rest in a temporary file beside the output); the filters are decided; a
// second pass reads the spill back and sets the kept bits through a
// shard.Writer, which writes to a temporary folder and renames it into
// place on success. On any error nothing is left at opt.Output (an
// existing output replaced with Force is kept until the new one is
// complete). The output is locked for the whole run: a second Run into it
// fails at once, and the leftovers of a killed Run into it are removed.
func Run(ctx context.Context, opt Options) (*Report, error) {
	start := time.Now()
	if err := opt.check(); err != nil {
		return nil, err
	}
	opt.Workers = goroutines(opt.Workers)
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var inputs []string
	for _, x := range opt.Samples {
		inputs = append(inputs, x.Path)
	}
	lk, err := lockOutput(opt.Output, opt.Input, log, inputs...)
	if err != nil {
		return nil, err
	}
	defer lk.Release()
	if !opt.Force {
		if _, err := os.Lstat(opt.Output); err == nil {
			return nil, fmt.Errorf("ingest: output %s already exists; use --force to replace it", opt.Output)
		}
	}
	var src source
	var ms *multiSource
	if len(opt.Samples) > 0 {
		ms, err = openSamples(&opt)
		src = ms
	} else {
		src, err = openSource(&opt)
	}
	if err != nil {
		return nil, err
	}
	defer src.close()
	info := src.describe()
	format, matrix := info.format, info.matrix
	cells, genes := src.shape()
	nnz := src.entries()
	rep := &Report{Input: opt.Input, Output: opt.Output, Format: format, Matrix: matrix,
		CellsIn: cells, GenesIn: genes, NNZ: nnz}
	if ms != nil {
		rep.Input = cmpOr(opt.SamplesFile, matrix) // "3 samples" without a samples file
	}
	if cells == 0 || genes == 0 || nnz == 0 {
		return nil, fmt.Errorf("ingest: %s: empty matrix (%d cells × %d genes, %d stored entries)", matrix, cells, genes, nnz)
	}
	log.Info("ingest: reading", "input", opt.Input, "format", format.String(), "matrix", matrix,
		"cells", cells, "genes", genes, "stored", nnz)

	where := matrix
	if info.barcodes != "" {
		where = info.barcodes
	}
	if err := checkUniqueBarcodes(src.barcodes(), where); err != nil {
		return nil, err
	}
	if err := checkNames(src, info); err != nil {
		return nil, err
	}
	feat := src.features()
	if a, b := firstRepeat(feat.IDs); a >= 0 {
		// Not refused: some references repeat ids, and genes are also
		// told apart by position; but a join by id would take the first.
		log.Warn("ingest: a gene id names two genes; the outputs list both, and joins by gene id (a GMT of ids, a user's table) will match the first",
			"input", matrix, "id", feat.IDs[a], "genes", fmt.Sprintf("%d and %d", a+1, b+1))
	}
	if w := axesWarning(matrix, cells, genes, feat, src.barcodes(), opt.Transpose); w != "" {
		log.Warn(w)
	}
	typeKept, dropped, otherGenome := selectFeatures(feat, genes, opt.FeatureType, opt.Genome)
	var cellSample []uint16
	if ms != nil {
		typeKept, dropped, otherGenome = ms.kept, sum(ms.otherType), sum(ms.otherGenome)
		rep.DroppedByIntersect = ms.notShared
		cellSample = ms.cellSamples()
		log.Info("ingest: samples", "samples", len(ms.srcs), "genes", opt.GeneJoin.String(), "matched_genes", ms.shared, "dropped_by_intersect", ms.notShared)
	}
	rep.DroppedByFeatureType, rep.DroppedByGenome = dropped, otherGenome
	if dropped+otherGenome+rep.DroppedByIntersect == genes {
		return nil, fmt.Errorf("ingest: %s: no feature of type %q (types present: %s)", matrix, opt.FeatureType, featureTypeList(feat))
	}

	var excluded []bool
	if opt.ExcludeGenes != nil {
		excluded, rep.DroppedByExclude = opt.ExcludeGenes.matchGenes(feat, typeKept)
		log.Info("ingest: excluding genes by pattern", "pattern", opt.ExcludeGenes.Expr, "matched", rep.DroppedByExclude)
		if rep.DroppedByExclude == 0 {
			log.Warn("ingest: the gene pattern matches no gene name", "pattern", opt.ExcludeGenes.String(), "names", geneNameKind(feat))
		}
	}
	var dev *devAccum
	if opt.SelectGenes > 0 {
		dev = newDevAccum(cells, typeKept)
	}

	prog := &progress{fn: opt.Progress, total: 2 * max(nnz, 0)}
	t0 := time.Now()
	spill, err := createSpill(opt.Output, spillMemory, opt.Cached)
	if err != nil {
		return nil, err
	}
	defer spill.remove()
	var amb *ambientLevels
	if opt.Ambient > 0 {
		if amb, err = measureAmbient(ctx, src, cells, genes, typeKept, opt.Ambient, newSplit(opt.Workers), cellSample, len(opt.Samples), log); err != nil {
			return nil, err
		}
		if amb != nil {
			rep.Ambient = opt.Ambient
		}
	}
	c, err := countPass(ctx, src, cells, genes, typeKept, binariser{opt.Threshold, amb}, spill, prog, newSplit(opt.Workers), dev)
	if err != nil {
		return nil, err
	}
	src.startHash() // see fileHasher
	if err := spill.finish(); err != nil {
		return nil, err
	}
	if nnz >= 0 && c.entries != nnz {
		return nil, fmt.Errorf("ingest: %s: %d stored entries read, %d declared", matrix, c.entries, nnz)
	}
	if c.entries == 0 {
		return nil, fmt.Errorf("ingest: %s: empty matrix (no nonzero entries)", matrix)
	}
	rep.NNZ = c.entries
	rep.ValueSum, rep.AboveOne, rep.OnesIn = c.sum, c.aboveOne, c.ones
	rep.Count = time.Since(t0)

	plan, err := decideFilters(&opt, c, typeKept, excluded)
	if err != nil {
		return nil, fmt.Errorf("ingest: %s: %w", matrix, err)
	}
	if dev != nil {
		t := time.Now()
		if err := plan.selectGenes(ctx, &opt, src, dev, log); err != nil {
			return nil, err
		}
		rep.SelectedFrom, rep.Select = plan.selection.Candidates, time.Since(t)
	}
	rep.CellsOut, rep.GenesOut = len(plan.cells), len(plan.genes)
	log.Info("ingest: counted", "stored", nnz, "sum", c.sum, "ones", c.ones,
		"genes_kept", rep.GenesOut, "cells_kept", rep.CellsOut, "dropped_by_feature_type", dropped, "elapsed", rep.Count)

	var observed *sampleMask
	if ms != nil {
		observed = ms.observedMask(plan)
	}
	t1 := time.Now()
	w, err := shard.Create(opt.Output, shard.Layout{Cells: rep.CellsOut, Genes: rep.GenesOut, Masked: observed != nil}, shard.CreateOptions{Force: opt.Force, Cached: opt.Cached, Workers: opt.Workers, FreeBytes: opt.FreeBytes})
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	defer w.Abort()
	ones, dups, err := writePass(ctx, spill, w, plan, c, prog, opt.Workers, observed)
	if err != nil {
		return nil, err
	}
	if dups.n > 0 {
		return nil, repeatError(matrix, src, plan, dups)
	}
	sum, err := src.sha256()
	if err != nil {
		return nil, err
	}
	rep.SHA256 = sum
	if ms != nil {
		rep.Samples = ms.report(&opt, plan, c, rep.Ambient)
	}
	m := plan.manifest(&opt, src, rep)
	m.Filters.OnesBefore = c.ones
	rep.Write = time.Since(t1)
	t2 := time.Now()
	if err := w.Commit(ctx, m); err != nil {
		return nil, fmt.Errorf("ingest: writing %s: %w", opt.Output, err)
	}
	rep.Ones = w.Ones()
	if rep.Ones != ones {
		return nil, fmt.Errorf("ingest: %s: shard holds %d ones, %d were set", opt.Output, rep.Ones, ones)
	}
	rep.Commit = time.Since(t2)
	rep.Total = time.Since(start)
	log.Info("ingest: wrote", "output", opt.Output, "cells", rep.CellsOut, "genes", rep.GenesOut,
		"ones", ones, "elapsed", rep.Total)
	return rep, nil
}

func (o *Options) check() error {
	switch {
	case o.Input == "" && len(o.Samples) == 0:
		return errors.New("ingest: no input")
	case o.Input != "" && len(o.Samples) > 0:
		return errors.New("ingest: an input and samples given: give one input, or several as samples")
	case o.Output == "":
		return errors.New("ingest: no output")
	case math.IsNaN(o.Threshold) || math.IsInf(o.Threshold, 0) || o.Threshold < 0:
		return fmt.Errorf("ingest: threshold %v: want a finite number ≥ 0", o.Threshold)
	case !(o.Ambient >= 0 && o.Ambient < 1):
		return fmt.Errorf("ingest: ambient fraction %v: want 0 (none) or a fraction below 1", o.Ambient)
	case !(o.MinCellFrac >= 0 && o.MinCellFrac <= 1):
		return fmt.Errorf("ingest: min cell fraction %v: want 0..1", o.MinCellFrac)
	case o.MinCells < 0:
		return fmt.Errorf("ingest: min cells %d: want ≥ 0", o.MinCells)
	case o.MinGenes < 0:
		return fmt.Errorf("ingest: min genes %d: want ≥ 0", o.MinGenes)
	case o.SelectGenes < 0:
		return fmt.Errorf("ingest: select genes %d: want a positive number of genes (0: no selection)", o.SelectGenes)
	case o.GeneJoin != GenesSame && o.GeneJoin != GenesIntersect && o.GeneJoin != GenesUnion:
		return fmt.Errorf("ingest: genes %q: want intersect or union (or empty: refuse samples whose genes differ)", string(o.GeneJoin))
	case o.GeneJoin != GenesSame && len(o.Samples) == 0:
		return fmt.Errorf("ingest: --genes %s matches the genes of several samples; one input was given", o.GeneJoin)
	}
	if len(o.Samples) > 0 {
		return checkSamples(o.Samples, o.SampleColumns, "samples")
	}
	return nil
}

// selectFeatures marks the genes of type want (all when want is empty, or
// when the input has no feature types and want is geneExpression) and, when
// genome is set and the input records a genome per feature, of that genome.
func selectFeatures(f features, genes int, want, genome string) (kept []bool, otherType, otherGenome int) {
	kept = make([]bool, genes)
	for g := range kept {
		typeOK := want == "" || (f.Types == nil && want == geneExpression) || (f.Types != nil && f.Types[g] == want)
		genomeOK := genome == "" || f.Genomes == nil || f.Genomes[g] == genome
		kept[g] = typeOK && genomeOK
		switch {
		case !typeOK:
			otherType++
		case !genomeOK:
			otherGenome++
		}
	}
	return kept, otherType, otherGenome
}

func featureTypeList(f features) string {
	if f.Types == nil {
		return "none recorded, all count as " + geneExpression
	}
	seen := map[string]bool{}
	var s string
	for _, t := range f.Types {
		if !seen[t] {
			seen[t] = true
			if s != "" {
				s += ", "
			}
			s += fmt.Sprintf("%q", t)
		}
	}
	return s
}

// progress reports entries processed, at most every progressStep entries.
type progress struct {
	fn          func(done, total int64)
	done, total int64
	last        int64
}

// A variable so that tests can see progress within a small input.
var progressStep int64 = 1 << 20

func (p *progress) add(n int) {
	p.done += int64(n)
	if p.fn != nil && (p.done-p.last >= progressStep || p.done == p.total) {
		p.last = p.done
		p.fn(p.done, p.total)
	}
}

// counts is the result of the counting pass.
type counts struct {
	cellsPerGene []int32 // cells with a 1 in each gene (kept feature type only)
	genesPerCell []int32 // genes of the kept feature type with a 1 in each cell
	entries      int64   // stored entries
	ones         int64   // entries above the threshold among kept feature types
	sum          float64 // sum of all stored values
	aboveOne     bool    // some stored value exceeds 1
}

// binariser decides which stored values are 1: those above value and, where
// ambient is not nil, above the entry's ambient limit.
type binariser struct {
	value   float64
	ambient *ambientLevels
}

// countPass scans the input once, counting and validating every entry and
// recording the entries above the threshold among kept feature types in
// spill. A source read in ranges (HDF5 matrices) goes to countRanges.
// Otherwise each batch is split into contiguous ranges counted
// concurrently (see passSplit); each range records its runs of consecutive
// entries of one cell in its own segment, and the segments are appended
// to the spill in range order, so the spill holds the same entries in the
// same order for any number of workers (a cell cut by a range edge is two
// runs).
func countPass(ctx context.Context, src source, cells, genes int, typeKept []bool, thr binariser, spill *spillWriter, prog *progress, split passSplit, dev *devAccum) (*counts, error) {
	if r, ok := src.(ranger); ok {
		if n, open := r.ranges(); n > 0 {
			return countRanges(ctx, n, open, cells, genes, typeKept, thr, spill, prog, split, dev)
		}
	}
	c := &counts{cellsPerGene: make([]int32, genes), genesPerCell: make([]int32, cells)}
	parts := make([]countPart, max(split.workers, 1))
	for r := range parts {
		parts[r] = newCountPart(genes, typeKept, dev, thr.ambient)
	}
	var blockSums []float64
	spans := 0 // the deviance's ranges put so far
	err := src.scan(ctx, func(b *batch) error {
		n := len(b.val)
		blockSums = slices.Grow(blockSums[:0], n/split.block+1)[:(n+split.block-1)/split.block]
		m := split.run(n, func(r, lo, hi int) {
			parts[r].count(b, lo, hi, split.block, typeKept, thr.value, c.genesPerCell, blockSums[lo/split.block:])
		})
		for r := range m {
			if err := spill.addSegment(&parts[r].seg); err != nil {
				return err
			}
			if dev != nil {
				dev.put(spans, parts[r].dev.edges)
				spans++
			}
		}
		// Plain float64 sums, block by block in input order: integer
		// counts add exactly up to 2^53, and other values add the same
		// way for any number of workers.
		for _, s := range blockSums {
			c.sum += s
		}
		c.entries += int64(n)
		prog.add(n)
		return nil
	})
	c.addParts(parts)
	return c, err
}

// addParts adds the workers' counts of cells per gene and of ones to c.
func (c *counts) addParts(parts []countPart) {
	for r := range parts {
		for g, k := range parts[r].cellsPerGene {
			c.cellsPerGene[g] += k
		}
		c.ones += parts[r].ones
		c.aboveOne = c.aboveOne || parts[r].aboveOne
	}
}

// countPart is one worker's share of countPass.
type countPart struct {
	cellsPerGene []int32
	ones         int64
	seg          spillSegment
	run          []int32
	aboveOne     bool     // some value counted exceeds 1
	allKept      bool     // every gene's type is kept: addCounted may skip the lookup
	dev          *devPart // the deviance's sums, when genes are selected by it
	amb          *ambientLevels
}

// newCountPart returns a worker's countPart for genes genes, of which
// typeKept keeps those of the types asked for, adding to dev's sums unless
// dev is nil.
func newCountPart(genes int, typeKept []bool, dev *devAccum, amb *ambientLevels) countPart {
	p := countPart{cellsPerGene: make([]int32, genes), allKept: !slices.Contains(typeKept, false), amb: amb}
	if dev != nil {
		p.dev = dev.newPart()
	}
	return p
}

// count counts entries [lo, hi) of b, lo a multiple of block, storing the
// sum of each block's values in sums, and records the kept entries in
// p.seg. Ranges may share a cell at their edges, so genesPerCell is
// updated atomically, once per run.
func (p *countPart) count(b *batch, lo, hi, block int, typeKept []bool, thr float64, genesPerCell []int32, sums []float64) {
	cpg := p.cellsPerGene
	p.seg.reset()
	if p.dev != nil {
		p.dev.beginSpan()
		defer p.dev.endSpan()
	}
	if b.runs != nil {
		p.countRuns(b, lo, hi, block, typeKept, thr, genesPerCell, sums)
		return
	}

	p.aboveOne = blockSums(b.val, lo, hi, block, sums, p.aboveOne)
	run := p.run[:0]
	cur := int32(-1)
	var ones int64
	for s := lo; s < hi; s += block {
		val := b.val[s:min(s+block, hi)]
		gene, cell := b.gene[s:s+len(val)], b.cell[s:s+len(val)]
		for k, v := range val {
			g, i := gene[k], cell[k]
			if !(v > thr && typeKept[g]) || p.amb != nil && !(v > p.amb.limit(i, g)) {
				continue
			}
			cpg[g]++
			ones++
			if i != cur {
				p.endRun(cur, run, genesPerCell)
				cur, run = i, run[:0]
			}
			run = append(run, g)
		}
	}
	p.endRun(cur, run, genesPerCell)
	p.run = run
	p.ones += ones
	if p.dev != nil {
		p.dev.addEntries(b, lo, hi)
	}
}

// countRuns is count for a batch that lists its cells in runs: the cell
// changes once per run, not once per entry.
func (p *countPart) countRuns(b *batch, lo, hi, block int, typeKept []bool, thr float64, genesPerCell []int32, sums []float64) {
	p.aboveOne = blockSums(b.val, lo, hi, block, sums, p.aboveOne)
	var ones int
	r, _ := slices.BinarySearchFunc(b.runs, int32(lo), func(r cellRun, k int32) int { return cmp.Compare(r.end, k+1) })
	for k := lo; k < hi; r++ {
		end := min(int(b.runs[r].end), hi)
		cell := b.runs[r].cell
		if n := p.seg.addCounted(cell, b.val[k:end], b.gene[k:end], thr, typeKept, p.allKept, p.amb, p.cellsPerGene); n > 0 {
			// Ranges may share a cell at their edges.
			atomic.AddInt32(&genesPerCell[cell], int32(n))
			ones += n
		}
		if p.dev != nil {
			p.dev.addRun(cell, b.val[k:end], b.gene[k:end])
		}
		k = end
	}
	p.ones += int64(ones)
}

// blockSums stores in sums the sum of each block of val[lo:hi] (lo a
// multiple of block), in four interleaved partial sums added at the end, so
// that an addition need not wait for the one before; the result depends on
// the blocks alone, not on how the batch is divided into ranges.
//
// It also reports whether some value exceeds 1 (or above already says so),
// for the manifest's Source.Values, at the cost of a compare per block on
// counts: a block whose sum exceeds its length holds such a value (rounded
// addition is monotone, so values all at most 1 sum to at most the length),
// and only a block that does not is looked at value by value.
func blockSums(val []float64, lo, hi, block int, sums []float64, above bool) bool {
	for s := lo; s < hi; s += block {
		v := val[s:min(s+block, hi)]
		var a, b, c, d float64
		w := v
		for len(w) >= 4 {
			a, b, c, d = a+w[0], b+w[1], c+w[2], d+w[3]
			w = w[4:]
		}
		for _, x := range w {
			a += x
		}
		sum := (a + b) + (c + d)
		sums[(s-lo)/block] = sum
		above = above || sum > float64(len(v)) || slices.ContainsFunc(v, aboveOne)
	}
	return above
}

func aboveOne(x float64) bool { return x > 1 }

// endRun records a run of genes of cell, if any.
func (p *countPart) endRun(cell int32, run []int32, genesPerCell []int32) {
	if len(run) > 0 {
		p.seg.addRun(cell, run)
		atomic.AddInt32(&genesPerCell[cell], int32(len(run)))
	}
}

// filterPlan maps input cells and genes to output rows and columns (-1:
// dropped) and lists the kept ones in order.
type filterPlan struct {
	cellMap, geneMap []int32
	cells, genes     []int
	minCount         int                  // the gene filter's minimum number of cells
	selection        *shard.GeneSelection // nil: no selection
}

// decideFilters keeps a gene when it has the kept feature type, is not
// excluded (nil: none is) and is 1 in at least max(ceil(MinCellFrac ×
// cells), MinCells) cells, and a cell when it is 1 in at least MinGenes
// genes of the kept feature type. Both filters are decided from the same
// counts of the unfiltered input.
func decideFilters(opt *Options, c *counts, typeKept, excluded []bool) (*filterPlan, error) {
	ncells := len(c.genesPerCell)
	// The kept lists sized for all at once: grown by appends, they would
	// allocate, copy and fault in about twice their final size, on the
	// serial path between the passes.
	p := &filterPlan{
		cellMap: make([]int32, ncells),
		geneMap: make([]int32, len(c.cellsPerGene)),
		cells:   make([]int, 0, ncells),
		genes:   make([]int, 0, len(c.cellsPerGene)),
	}
	// The small tolerance keeps 0.01 × 10000 at 100, not 101.
	p.minCount = max(int(math.Ceil(opt.MinCellFrac*float64(ncells)-1e-9)), opt.MinCells)
	typed, dropped := 0, 0
	for g, n := range c.cellsPerGene {
		p.geneMap[g] = -1
		if !typeKept[g] {
			continue
		}
		typed++
		if excluded != nil && excluded[g] {
			dropped++
			continue
		}
		if int(n) >= p.minCount {
			p.geneMap[g] = int32(len(p.genes))
			p.genes = append(p.genes, g)
		}
	}
	for i, n := range c.genesPerCell {
		p.cellMap[i] = -1
		if int(n) >= opt.MinGenes {
			p.cellMap[i] = int32(len(p.cells))
			p.cells = append(p.cells, i)
		}
	}
	if len(p.genes) == 0 {
		return nil, fmt.Errorf("every gene filtered out: none of %d genes (%d more matched the exclude pattern) is expressed (count > %v) in at least %d of %d cells (min cell fraction %v, min cells %d)",
			typed-dropped, dropped, opt.Threshold, p.minCount, ncells, opt.MinCellFrac, opt.MinCells)
	}
	if len(p.cells) == 0 {
		return nil, fmt.Errorf("every cell filtered out: none of %d cells expresses at least %d genes", ncells, opt.MinGenes)
	}
	return p, nil
}

// manifest builds the shard manifest for the kept cells and genes.
func (p *filterPlan) manifest(opt *Options, src source, rep *Report) shard.Manifest {
	f := src.features()
	info := src.describe()
	pick := func(all []string, idx []int) []string {
		if all == nil {
			return nil
		}
		out := make([]string, len(idx))
		for i, j := range idx {
			out[i] = all[j]
		}
		return out
	}
	var exclude, preset string
	if opt.ExcludeGenes != nil {
		exclude, preset = opt.ExcludeGenes.Expr, opt.ExcludeGenes.Preset
	}
	path := opt.Input
	if len(rep.Samples) > 0 && opt.SamplesFile != "" {
		path = opt.SamplesFile
	}
	return shard.Manifest{
		Samples:       rep.Samples,
		SampleColumns: opt.SampleColumns,
		Tool:          "scpipe ingest",
		GeneIDs:       pick(f.IDs, p.genes),
		GeneNames:     pick(f.Names, p.genes),
		FeatureTypes:  pick(f.Types, p.genes),
		Barcodes:      pick(src.barcodes(), p.cells),
		Source: shard.Source{
			Path:        path,
			Format:      rep.Format.String(),
			Bytes:       src.bytes(),
			SHA256:      rep.SHA256,
			Genome:      info.genome,
			FeatureType: opt.FeatureType,
			Layer:       info.layer,
			Values:      storedValues(rep.AboveOne),
		},
		Filters: shard.Filters{
			Threshold:            opt.Threshold,
			Ambient:              rep.Ambient,
			MinCellFrac:          opt.MinCellFrac,
			MinCells:             opt.MinCells,
			MinGenes:             opt.MinGenes,
			ExcludeGenes:         exclude,
			ExcludePreset:        preset,
			GenesBefore:          rep.GenesIn,
			DroppedByFeatureType: rep.DroppedByFeatureType + rep.DroppedByGenome,
			DroppedByExclude:     rep.DroppedByExclude,
			DroppedByIntersect:   rep.DroppedByIntersect,
			Selection:            p.selection,
			GenesAfter:           rep.GenesOut,
			CellsBefore:          rep.CellsIn,
			CellsAfter:           rep.CellsOut,
		},
	}
}

// storedValues names the input's values for the manifest: counts when
// one exceeds 1, binary otherwise (a 0/1 matrix, which fit models as the
// paper does rather than as expression).
func storedValues(aboveOne bool) string {
	if aboveOne {
		return shard.ValuesCounts
	}
	return shard.ValuesBinary
}

// repeatError describes input that stores some (cell, gene) more than once:
// each copy was counted by the filters and thresholded on its own, where
// the entry's value is their sum, so the shard could not be trusted.
func repeatError(matrix string, src source, p *filterPlan, r repeats) error {
	cell := fmt.Sprintf("cell %d", p.cells[r.row]+1)
	if bc := src.barcodes(); bc != nil {
		cell = fmt.Sprintf("cell %s", bc[p.cells[r.row]])
	}
	what := fmt.Sprintf("%d entries repeat", r.n)
	if r.n == 1 {
		what = "1 entry repeats"
	}
	return fmt.Errorf("ingest: %s: %s a cell and gene already stored (the first in %s): sum duplicate entries first (scipy: X.sum_duplicates())", matrix, what, cell)
}
