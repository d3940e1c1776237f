package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"

	"scpipe/shard"
)

// HousekeepingPattern is the pattern of the "housekeeping" preset of
// ParseGenePattern, matched case-insensitively: mitochondrially encoded
// genes (human MT-CO1, mouse mt-Co1) and the cytoplasmic ribosomal
// proteins (RPL5, RPL10A, RPL36AL, RPS4X, RPS27A, RPSA, RPLP0 and their
// pseudogenes such as RPL21P28 and RPSAP58; mouse Rpl5, Rps4x, Rplp0,
// Rpsa), but not the kinases RPS6KA1 … RPS6KL1, RPS19BP1, antisense RNAs
// such as RPL34-AS1, the hg19 clone names RP11-…, nor the mitochondrial
// ribosomal proteins MRPL…/MRPS…. They are detected in nearly every cell
// and say more about a cell's depth and state than its type.
const HousekeepingPattern = `^(MT-|RPLP[0-2](P\d+)?$|RPSA(P\d+)?$|RPL\d+[A-Z]*\d*$|RPS\d+[A-Z]?\d*$)`

// genePresets names patterns that users need often.
var genePresets = map[string]string{
	"housekeeping": HousekeepingPattern,
}

// GenePattern picks genes by a regular expression over their names.
type GenePattern struct {
	// Preset is the preset's name, or "" for a pattern given as such.
	Preset string
	// Expr is the regular expression, matched case-insensitively.
	Expr string
	re   *regexp.Regexp
}

// ParseGenePattern parses s, a preset's name ("housekeeping": see
// HousekeepingPattern) or a regular expression (RE2 syntax, as Go's regexp
// package reads it) matched case-insensitively against each gene's name
// (its symbol), or its id where the input records no names.
func ParseGenePattern(s string) (*GenePattern, error) {
	if s == "" {
		return nil, errors.New("ingest: empty gene pattern")
	}
	p := &GenePattern{Expr: s}
	if expr, ok := genePresets[strings.ToLower(s)]; ok {
		p.Preset, p.Expr = strings.ToLower(s), expr
	}
	re, err := regexp.Compile("(?i)" + p.Expr)
	if err != nil {
		return nil, fmt.Errorf("ingest: gene pattern %q: %w", s, err)
	}
	p.re = re
	return p, nil
}

// String returns the preset's name or the expression.
func (p *GenePattern) String() string {
	if p.Preset != "" {
		return p.Preset
	}
	return p.Expr
}

// Match reports whether the gene of name and id matches: its name when it
// has one, else its id.
func (p *GenePattern) Match(name, id string) bool {
	if name == "" {
		name = id
	}
	return p.re.MatchString(name)
}

// matchGenes marks the genes of f that p matches, among those of
// typeKept, and counts them.
func (p *GenePattern) matchGenes(f features, typeKept []bool) (excluded []bool, n int) {
	excluded = make([]bool, len(typeKept))
	for g, kept := range typeKept {
		if !kept {
			continue
		}
		var name, id string
		if f.Names != nil {
			name = f.Names[g]
		}
		if f.IDs != nil {
			id = f.IDs[g]
		}
		if p.Match(name, id) {
			excluded[g] = true
			n++
		}
	}
	return excluded, n
}

// selectTop keeps in p the n genes of largest deviance dev among those p
// keeps, ties going to the lower input index; the kept genes stay in input
// order. It returns the deviance of the least kept gene.
func (p *filterPlan) selectTop(dev []float64, n int) float64 {
	order := slices.Clone(p.genes)
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(dev[b], dev[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	order = order[:min(n, len(order))]
	least := dev[order[len(order)-1]]
	slices.Sort(order)
	for _, g := range p.genes {
		p.geneMap[g] = -1
	}
	for i, g := range order {
		p.geneMap[g] = int32(i)
	}
	p.genes = order
	return least
}

// geneNameKind says what a gene pattern is matched against in f, for a
// warning when it matched nothing.
func geneNameKind(f features) string {
	if f.Names != nil {
		return "gene names"
	}
	return "gene ids (the input has no gene names)"
}

// selectGenes completes dev's sums and keeps, of the genes p keeps, the
// opt.SelectGenes of largest binomial deviance, recording the selection.
func (p *filterPlan) selectGenes(ctx context.Context, opt *Options, src source, dev *devAccum, log *slog.Logger) error {
	matrix := src.describe().matrix
	if dev.unsorted.Load() {
		log.Info("ingest: the input does not store each cell's entries together: reading it again for the genes' deviance", "matrix", matrix)
	}
	scores, err := dev.finish(ctx, matrix, src.scan, newSplit(opt.Workers))
	if err != nil {
		return err
	}
	n, candidates := opt.SelectGenes, len(p.genes)
	if n >= candidates {
		log.Info("ingest: --select-genes asks for at least as many genes as pass the other filters: keeping them all",
			"select_genes", n, "genes", candidates)
	}
	least := p.selectTop(scores, n)
	sel := &shard.GeneSelection{Method: devianceMethod, N: n, Candidates: candidates, Scores: make([]float64, len(p.genes))}
	for i, g := range p.genes {
		sel.Scores[i] = scores[g]
	}
	p.selection = sel
	log.Info("ingest: selected genes by binomial deviance", "kept", len(p.genes), "of", candidates, "least_deviance", least)
	return nil
}
