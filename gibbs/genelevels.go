package gibbs

import (
	"math"
	"slices"
)

// MaxGeneLevelBits bounds Config.GeneLevelBits: up to 8 per-gene levels.
// The gene planes travel through the kernels' lift arguments, which take
// MaxCellLevelBits planes.
const MaxGeneLevelBits = MaxCellLevelBits

// minLift is the smallest gain of a covered one that per-gene offsets may
// leave: g ≤ 0 would put the background at or above 1.
const minLift = 0.05

// geneShrink is the weight of the pooled background in each gene's, in
// entries per cell: a gene covered in nearly every cell keeps a background
// near the pooled one, rather than that of the few cells that use no code
// (often the shallowest), and a gene uncovered everywhere moves a third of
// the way from the pooled background to its own. Measured on the planted
// single-cell data (seeds 1–10, L = 6): weights of 0.05, 0.2, 0.5, 1, 2
// and 4 recover every program with Jaccard ≥ 0.9 on 7, 8, 8, 9, 9 and 8
// seeds; on pbmc3k-600, 2 finds 6 marker sets in both chains at every
// L ≥ 4, 1 and 0.05 one or two fewer at some L (docs/real-data.md).
const geneShrink = 2

// geneLevels returns the number of gene levels of a Sampler, 1 without them.
func (s *Sampler) geneLevels() int { return 1 << uint(s.cfg.GeneLevelBits) }

// geneLift returns the offset of gene level k: gene0 + geneStep·k.
func (r rates) geneLift(k uint8) float64 { return r.gene0 + r.geneStep*float64(k) }

// entryRates returns P(x = 1 | covered) and P(x = 1 | not covered) of an
// entry of a cell at level kc and a gene at level kg.
func (r rates) entryRates(kc, kg uint8) (on, off float64) {
	b := levelBackground(r.rho, r.lift(kc)+r.geneLift(kg))
	return 1 - r.rho*(1-b), b
}

// gainOf returns the gain of a covered one, log(1 − ρ(1 − β)) − log β, of a
// background β under ρ.
func gainOf(beta, rho float64) float64 { return math.Log1p(-rho*(1-beta)) - math.Log(beta) }

// countGenes sets each gene's observed ones and entries (with per-gene
// levels), summed across the processes of a partitioned fit.
func (s *Sampler) countGenes() {
	var ones, obs []int32
	if p := s.part; p != nil {
		ones, obs = rowCounts(p.xt, p.maskT, s.d, p.Hi-p.Lo)
		sumAcross(p, ones)
		sumAcross(p, obs)
	} else {
		ones, obs = rowCounts(s.data.XT, s.data.MaskT, s.d, s.n)
	}
	s.geneOnes, s.geneObs = ones, obs
}

// geneCountBuf returns a buffer for the U step's per-gene counts, reused
// from sweep to sweep.
func (s *Sampler) geneCountBuf() []uint64 {
	if len(s.geneStep) != s.d {
		s.geneStep = make([]uint64, s.d)
	}
	return s.geneStep
}

// sumGeneCounts adds the U step's per-gene counts across the processes of
// a partitioned fit (each process's cover its own cells).
func (s *Sampler) sumGeneCounts(counts []uint64) {
	if s.part == nil {
		return
	}
	v := make([]int64, 2*len(counts))
	for d, c := range counts {
		v[2*d], v[2*d+1] = splitCounts(c)
	}
	s.part.sum(v)
	for d := range counts {
		counts[d] = packCounts(v[2*d], v[2*d+1])
	}
}

// updateGeneLevels sets c's gene levels and offsets from the U step's
// per-gene counts (packCounts: mispredicted, covered; over the process's
// cells, summed here across the processes of a partitioned fit), or with
// samples each sample's, given c's ρ and cell lifts (see the comment at
// the top of the file).
func (s *Sampler) updateGeneLevels(c *chain, counts []uint64) {
	if s.smp != nil {
		s.sumGeneCounts(s.smp.rowCounts)
		s.updateSampleGeneLevels(c, s.smp.rowCounts)
		return
	}
	s.sumGeneCounts(counts)
	K := s.geneLevels()
	rho := c.rates.rho
	if len(s.geneWork.genes) != s.d {
		s.geneWork.genes, s.geneWork.dev, s.geneWork.sorted = make([]levelCounts, s.d), make([]float64, s.d), make([]float64, s.d)
	}
	genes, dev, sorted := s.geneWork.genes, s.geneWork.dev, s.geneWork.sorted
	var uncOnes, uncAll float64
	for d := range genes {
		miss, covered := splitCounts(counts[d])
		t := tally{observed: int64(s.geneObs[d]), ones: int64(s.geneOnes[d]), covered: covered, miss: miss}
		co, cz, uo, uz := t.split()
		genes[d] = levelCounts{float64(co), float64(cz), float64(uo), float64(uz)}
		uncOnes += float64(uo)
		uncAll += float64(uo + uz)
	}
	// A gene's background is the frequency of ones among its uncovered
	// entries, shrunk towards the pooled one by geneShrink·N entries.
	pooled := (uncOnes + 0.5) / (uncAll + 1)
	ref := gainOf(pooled, rho)
	shrink := geneShrink * float64(s.n)
	for d, g := range genes {
		b := (g.uncOnes + shrink*pooled) / (g.uncOnes + g.uncZeros + shrink)
		dev[d] = gainOf(min(max(b, 1e-9), 1-1e-9), rho) - ref
	}
	copy(sorted, dev)
	slices.Sort(sorted)
	lo, hi := sorted[s.d*2/100], sorted[(s.d-1)*98/100]
	step := max((hi-lo)/float64(max(K-1, 1)), minLiftStep)
	for d, v := range dev {
		c.geneLevel[d] = uint8(min(max(math.Round((v-lo)/step), 0), float64(K-1)))
	}
	c.rates.gene0, c.rates.geneStep = lo+s.calibrate(genes, c.geneLevel, rho, ref, lo, step), step
	// The smallest gain is at cell level 0 and gene level 0 (both steps
	// are positive).
	c.rates.gene0 = max(c.rates.gene0, minLift-c.rates.lift0)
	s.setGenePlanes(c)
}

// calibrate returns the shift of the gene offsets (lo + step·k_d, levels
// in level) at which the uncovered entries of genes expect as many ones
// as they hold, at gain ref + offset + shift: the cells' gains, fitted
// with every gene at offset 0, keep their meaning. The expected ones rise
// as the shift falls; bisection to 1e-9.
func (s *Sampler) calibrate(genes []levelCounts, level []uint8, rho, ref, lo, step float64) float64 {
	var ones float64
	for _, g := range genes {
		ones += g.uncOnes
	}
	// A gene's background depends on its level alone: computed once per
	// level rather than per gene, and summed in gene order as before.
	var back [1 << MaxGeneLevelBits]float64
	expect := func(shift float64) float64 {
		for k := range s.geneLevels() {
			back[k] = levelBackground(rho, max(ref+lo+step*float64(k)+shift, minLift))
		}
		t := 0.0
		for d, g := range genes {
			if n := g.uncOnes + g.uncZeros; n > 0 {
				t += n * back[level[d]]
			}
		}
		return t
	}
	a, b := -4.0, 4.0 // expect(a) ≥ expect(b)
	for b-a > 1e-9 {
		m := (a + b) / 2
		if expect(m) > ones {
			a = m
		} else {
			b = m
		}
	}
	return (a + b) / 2
}

// setGenePlanes writes c's gene levels as bit planes over the genes, for
// the Z step's kernel: bit d of plane j is bit j of gene d's level.
func (s *Sampler) setGenePlanes(c *chain) {
	if s.smp != nil {
		s.setSamplePlanes(c)
		return
	}
	s.writePlanes(&c.geneBlock, &c.genePlanes, c.geneLevel, s.cfg.GeneLevelBits, s.dw)
}

// initialGeneLevels puts every gene of c at the middle level with offset
// 0, so that the first sweep's gains are the cells' alone.
func (s *Sampler) initialGeneLevels(c *chain) {
	K := s.geneLevels()
	c.rates.geneStep = 0.2
	c.rates.gene0 = -c.rates.geneStep * float64(K/2)
	c.geneLevel = make([]uint8, s.d*s.sampleCount())
	for d := range c.geneLevel {
		c.geneLevel[d] = uint8(K / 2)
	}
	s.setGenePlanes(c)
}

// setGeneLikelihood gives sp the per-gene part of chain c's likelihood:
// in the Z step the genes' planes over the columns and the gain per unit
// of gene level, with each cell level's gain raised by gene0; in the U
// step each row's (gene's) gain of a covered one at its level.
func (s *Sampler) setGeneLikelihood(sp *stepSpec, c *chain) {
	r := c.rates
	if s.smp != nil {
		defer s.setSampleLikelihood(sp, c)
	}
	if sp.cells {
		for k := range s.levels() {
			sp.levelOne[k] = r.lift(uint8(k)) + r.gene0
		}
		sp.lift = c.genePlanes
		sp.liftBlock, sp.liftStride = c.geneBlock, s.dw
		sp.geneStep = r.geneStep
		return
	}
	for k := range s.geneLevels() {
		sp.geneOne[k] = r.lift0 + r.geneLift(uint8(k))
	}
	sp.rowGene = c.geneLevel
}
