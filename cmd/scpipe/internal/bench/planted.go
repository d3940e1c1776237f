package bench

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"time"

	"scpipe/shard"
	"scpipe/simulate"
)

// The planted model's fixed shape: ten programs of about 3% of the genes
// each (330 genes at the paper's width), a fifth of the observed ones lost to
// dropout and a fifth of them background. Only the programs' usage is solved
// for, to reach the requested density.
const (
	plantedPrograms  = 10
	plantedCodeFrac  = 0.03
	plantedDropout   = 0.2
	backgroundShare  = 0.2 // P(background 1) = backgroundShare · density
	plantedVersion   = 1   // part of the cache key: bump when the model changes
	defaultCacheName = "scpipe-bench-sweeps"
)

// defaultDensity is the fraction of ones of the paper's mouse brain data.
const defaultDensity = 0.07

// plantedParams returns the simulate parameters of a single-cell-like
// planted dataset of the given size whose expected fraction of ones is
// density: plantedPrograms programs of plantedCodeFrac of the genes,
// dropout plantedDropout, background ones at a fifth of density, and the
// usage u of every program solved from
//
//	density = background + (1 − background − dropout) · (1 − (1 − code·u)^programs).
//
// With the defaults at density 0.07 each cell uses about 2.4 programs.
func plantedParams(size Size, density float64, seed uint64) (simulate.Params, error) {
	if size.Cells < 1 || size.Genes < 1 {
		return simulate.Params{}, fmt.Errorf("%w: size %v has no entries", errOptions, size)
	}
	if !(density > 0 && density < 1) {
		return simulate.Params{}, fmt.Errorf("%w: density %v outside (0, 1)", errOptions, density)
	}
	on := backgroundShare * density
	clean := (density - on) / (1 - on - plantedDropout)
	usage := (1 - math.Pow(1-clean, 1.0/plantedPrograms)) / plantedCodeFrac
	if !(usage > 0 && usage <= 1) {
		return simulate.Params{}, fmt.Errorf("%w: density %v is out of reach of the planted model (%d programs of %.0f%% of genes, %.0f%% dropout)",
			errOptions, density, plantedPrograms, 100*plantedCodeFrac, 100*plantedDropout)
	}
	return simulate.Params{
		Cells: size.Cells, Genes: size.Genes, L: plantedPrograms,
		CodeDensity: plantedCodeFrac, UsageDensity: usage,
		FlipOn: on, FlipOff: plantedDropout,
		Seed: seed,
	}, nil
}

// expectedDensity returns the expected fraction of ones of data drawn with p
// (over the draw of programs, usage and noise).
func expectedDensity(p simulate.Params) float64 {
	clean := 1 - math.Pow(1-p.CodeDensity*p.UsageDensity, float64(p.L))
	return clean*(1-p.FlipOff) + (1-clean)*p.FlipOn
}

// defaultWork returns the default cache folder of generated datasets, under
// the system's temporary folder.
func defaultWork() string { return filepath.Join(os.TempDir(), defaultCacheName) }

// datasetDir returns the cache folder of one dataset, named by everything
// that determines its content.
func datasetDir(work string, size Size, density float64, seed uint64) string {
	return filepath.Join(work, fmt.Sprintf("planted-v%d-%s-d%g-seed%d", plantedVersion, size, density, seed))
}

// dataset is an opened benchmark dataset.
type dataset struct {
	shards    *shard.Shard
	dir       string
	cached    bool    // found in the cache rather than generated
	genSecond float64 // seconds spent generating (0 when cached)
}

// openDataset opens the planted dataset of size from the cache in work,
// generating it first (and replacing a damaged or mismatched cache entry)
// on workers goroutines when needed, provided free (nil: the file
// system) tells room for it.
func openDataset(ctx context.Context, work string, size Size, density float64, seed uint64, workers int, pageCached bool, free simulate.FreeSpace, log *slog.Logger) (*dataset, error) {
	p, err := plantedParams(size, density, seed)
	if err != nil {
		return nil, err
	}
	dir := datasetDir(work, size, density, seed)
	shardDir := filepath.Join(dir, simulate.ShardsDir)
	s, err := shard.Open(shardDir)
	if err == nil {
		m := s.Manifest()
		if m.Cells == size.Cells && m.Genes == size.Genes && m.Source.Seed == seed {
			log.Info("using cached dataset", "path", dir, "cells", m.Cells, "genes", m.Genes, "density", m.Density)
			return &dataset{shards: s, dir: dir, cached: true}, nil
		}
		s.Close()
		err = fmt.Errorf("holds %d × %d cells × genes with seed %d", m.Cells, m.Genes, m.Source.Seed)
	}
	_, statErr := os.Stat(dir)
	replace := statErr == nil
	if replace {
		log.Warn("regenerating cached dataset", "path", dir, "reason", err)
	}
	if err := os.MkdirAll(work, 0o777); err != nil {
		return nil, fmt.Errorf("bench: creating work folder: %w", err)
	}
	// Before the truth is drawn, which for billions of cells took
	// gigabytes and minutes, deaf to Ctrl-C, before the disk refused.
	if err := simulate.CheckRoom(dir, p, true, free); err != nil {
		return nil, fmt.Errorf("bench: planted model for %v: %w", size, err)
	}
	truth, err := simulate.New(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("bench: planted model for %v: %w", size, err)
	}
	truth.Workers, truth.Free, truth.Log = workers, free, log
	log.Info("generating planted dataset", "path", dir, "cells", size.Cells, "genes", size.Genes,
		"expected_density", expectedDensity(p), "bytes", 2*size.Entries()/8)
	start := time.Now()
	if err := simulate.WriteShards(ctx, dir, truth, shard.CreateOptions{Force: replace, Cached: pageCached}); err != nil {
		return nil, fmt.Errorf("bench: generating %v into %s: %w", size, dir, err)
	}
	gen := time.Since(start).Seconds()
	s, err = shard.Open(shardDir)
	if err != nil {
		return nil, fmt.Errorf("bench: opening generated dataset: %w", err)
	}
	log.Info("generated", "path", dir, "seconds", gen, "density", s.Manifest().Density)
	return &dataset{shards: s, dir: dir, genSecond: gen}, nil
}
