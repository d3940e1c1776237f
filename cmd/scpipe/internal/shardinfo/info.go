package shardinfo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"scpipe/shard"
)

// summary is what `scpipe info` prints.
type summary struct {
	Path              string  `json:"path"`
	Cells             int     `json:"cells"`
	Genes             int     `json:"genes"`
	NNZ               int64   `json:"nnz"`
	Density           float64 `json:"density"`
	Observed          int64   `json:"observed,omitempty"`
	GenesBeforeFilter int     `json:"genes_before_filter"`
	CellsBeforeFilter int     `json:"cells_before_filter"`
	MinCellFrac       float64 `json:"min_cell_frac"`
	Threshold         float64 `json:"threshold"`
	// AmbientFraction is ingest's --ambient: 0 when a count was 1 for
	// being above Threshold alone (or the input held 0s and 1s).
	AmbientFraction  float64 `json:"ambient_fraction"`
	ExcludeGenes     string  `json:"exclude_genes,omitempty"` // the preset's name, or the pattern
	DroppedByExclude int     `json:"dropped_by_exclude,omitempty"`
	SelectMethod     string  `json:"gene_selection,omitempty"`
	SelectGenes      int     `json:"select_genes,omitempty"`  // N asked for
	SelectedFrom     int     `json:"selected_from,omitempty"` // the genes it chose among
	Source           string  `json:"source"`
	SourceFormat     string  `json:"source_format"`
	Files            int     `json:"files"`
	BytesOnDisk      int64   `json:"bytes_on_disk"`
	CellBlocks       int     `json:"cell_blocks"`
	Verified         bool    `json:"verified"`
	// DroppedByIntersect counts the genes some sample lacked (ingest
	// --genes intersect).
	DroppedByIntersect int `json:"dropped_by_intersect,omitempty"`
	// Samples lists the samples of a shard ingested from several inputs,
	// with the filters' effect on each.
	Samples []sampleRow `json:"samples,omitempty"`
}

// sampleRow is one sample of a shard of several.
type sampleRow struct {
	Name         string  `json:"name"`
	Path         string  `json:"path"`
	Format       string  `json:"format"`
	CellsBefore  int     `json:"cells_before_filter"`
	Cells        int     `json:"cells"`
	FirstCell    int     `json:"first_cell"`
	OnesBefore   int64   `json:"ones_before_filter"`
	GenesBefore  int     `json:"genes_in_input"`
	GenesMissing int     `json:"genes_missing,omitempty"`
	Ambient      float64 `json:"ambient_fraction"`
}

// Options select what Print does.
type Options struct {
	JSON    bool // print JSON instead of a table
	Verify  bool // recompute every checksum first
	Threads int  // the goroutines that verify; 0: GOMAXPROCS
}

// Print summarises the shards in dir on w, after verifying every checksum
// when asked.
func Print(ctx context.Context, w io.Writer, dir string, o Options) error {
	if err := notShards(dir); err != nil {
		return err
	}
	s, err := shard.Open(dir)
	if err != nil {
		return err
	}
	defer s.Close()
	if o.Verify {
		if err := s.Verify(ctx, o.Threads); err != nil {
			return err
		}
	}
	m := s.Manifest()
	info := summary{
		Path: dir, Cells: m.Cells, Genes: m.Genes, NNZ: m.Ones, Density: m.Density, Observed: m.Observed,
		GenesBeforeFilter: m.Filters.GenesBefore, CellsBeforeFilter: m.Filters.CellsBefore,
		MinCellFrac: m.Filters.MinCellFrac, Threshold: m.Filters.Threshold, AmbientFraction: m.Filters.Ambient,
		Source: m.Source.Path, SourceFormat: m.Source.Format,
		Files: len(m.Files) + 1, CellBlocks: len(s.CellBlocks()), Verified: o.Verify,
	}
	for _, f := range m.Files {
		info.BytesOnDisk += f.Bytes
	}
	info.ExcludeGenes, info.DroppedByExclude = m.Filters.ExcludeGenes, m.Filters.DroppedByExclude
	if m.Filters.ExcludePreset != "" {
		info.ExcludeGenes = m.Filters.ExcludePreset
	}
	info.DroppedByIntersect = m.Filters.DroppedByIntersect
	if info.Source == "" && len(m.Samples) > 0 {
		info.Source = fmt.Sprintf("%d samples", len(m.Samples))
	}
	for _, x := range m.Samples {
		info.Samples = append(info.Samples, sampleRow{Name: x.Name, Path: x.Path, Format: x.Format,
			CellsBefore: x.CellsBefore, Cells: x.CellsAfter, FirstCell: x.FirstCell, OnesBefore: x.OnesBefore,
			GenesBefore: x.GenesBefore, GenesMissing: x.GenesMissing, Ambient: x.Ambient})
	}
	if sel := m.Filters.Selection; sel != nil {
		info.SelectMethod, info.SelectGenes, info.SelectedFrom = sel.Method, sel.N, sel.Candidates
	}
	if o.JSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k string, v any) { fmt.Fprintf(tw, "%s\t%v\n", k, v) }
	row("path", info.Path)
	row("cells", info.Cells)
	row("genes", info.Genes)
	row("nnz", info.NNZ)
	row("density", fmt.Sprintf("%.4f", info.Density))
	if m.Layout.Masked {
		row("observed", info.Observed)
	}
	row("genes_before_filter", info.GenesBeforeFilter)
	row("cells_before_filter", info.CellsBeforeFilter)
	row("min_cell_frac", info.MinCellFrac)
	row("threshold", info.Threshold)
	row("ambient_fraction", info.AmbientFraction)
	if info.ExcludeGenes != "" {
		row("exclude_genes", fmt.Sprintf("%s (%d genes dropped)", info.ExcludeGenes, info.DroppedByExclude))
	}
	if info.SelectMethod != "" {
		row("gene_selection", fmt.Sprintf("%s: %d of %d genes (asked for %d)", info.SelectMethod, info.Genes, info.SelectedFrom, info.SelectGenes))
	}
	row("source", fmt.Sprintf("%s (%s)", info.Source, info.SourceFormat))
	row("files", info.Files)
	row("cell_blocks", info.CellBlocks)
	row("size_on_disk", shard.HumanBytes(info.BytesOnDisk))
	if info.DroppedByIntersect > 0 {
		row("dropped_by_intersect", fmt.Sprintf("%d genes not in every sample", info.DroppedByIntersect))
	}
	if o.Verify {
		row("checksums", "verified")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return printSamples(w, info.Samples)
}

// printSamples prints the samples' table: each sample's cells before and
// after the cell filter (decided over every sample's cells), its ones
// before the filters and the kept genes it lacks.
func printSamples(w io.Writer, rows []sampleRow) error {
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nsamples             %d\n", len(rows))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "sample\tcells\tcells_before_filter\tones_before_filter\tgenes_missing\tinput")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s (%s)\n", r.Name, r.Cells, r.CellsBefore, r.OnesBefore, r.GenesMissing, r.Path, r.Format)
	}
	return tw.Flush()
}
