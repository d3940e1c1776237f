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
	row("size_on_disk", humanBytes(info.BytesOnDisk))
	if o.Verify {
		row("checksums", "verified")
	}
	return tw.Flush()
}

// humanBytes formats a byte count in binary units.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
