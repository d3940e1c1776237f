package shard

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
)

// FormatVersion is the version of the shard format written by this package
// and the only one Open accepts.
const FormatVersion = 1

// checksumAlgorithm names the checksum recorded for every file: CRC-32C
// (Castagnoli polynomial, as in hash/crc32.Castagnoli, iSCSI, ext4, …).
const checksumAlgorithm = "crc32c"

// File names fixed by the format.
const (
	ManifestName = "manifest.json"
	GenesName    = "genes.tsv"
	barcodesName = "barcodes.tsv"
)

// Gene columns that genes.tsv may hold, in this order.
const (
	columnID          = "id"
	columnName        = "name"
	columnFeatureType = "feature_type"
)

// errFormat is wrapped by every error Open and Verify return for a shard
// folder whose contents break the format (as opposed to I/O errors).
var errFormat = errors.New("shard: invalid shard")

// Manifest describes a shard folder; it is stored as manifest.json. Fields
// marked "filled by Commit" are computed by Writer.Commit and overwrite
// whatever the caller set; the caller sets Source, Filters, Tool and the
// gene and cell annotations.
type Manifest struct {
	// FormatVersion is the shard format version (FormatVersion). Filled by Commit.
	FormatVersion int `json:"format_version"`
	// Tool names the program that wrote the shard, e.g. "scpipe ingest v0.3.0".
	Tool string `json:"tool"`
	// Created is the commit time, RFC 3339 in UTC. Filled by Commit when empty.
	Created string `json:"created"`
	// Cells is the number of cells (rows of X). Filled by Commit.
	Cells int `json:"cells"`
	// Genes is the number of genes (columns of X). Filled by Commit.
	Genes int `json:"genes"`
	// Ones is the number of set bits of X. Filled by Commit.
	Ones int64 `json:"ones"`
	// Density is Ones / (Cells × Genes). Filled by Commit.
	Density float64 `json:"density"`
	// Observed is the number of set bits of the observed mask when
	// Layout.Masked, else 0. Filled by Commit.
	Observed int64 `json:"observed"`
	// Layout is the geometry of the files. Filled by Commit.
	Layout Layout `json:"layout"`

	// GenesFile is "genes.tsv" when gene annotations were stored, else "".
	// Filled by Commit.
	GenesFile string `json:"genes_file"`
	// GeneColumns lists the tab-separated columns of GenesFile: "id", then
	// "name" and "feature_type" when those annotations were given. Filled by
	// Commit.
	GeneColumns []string `json:"gene_columns"`
	// BarcodesFile is "barcodes.tsv" when cell barcodes were stored, else "".
	// Filled by Commit.
	BarcodesFile string `json:"barcodes_file"`

	// GeneIDs holds one id per kept gene (e.g. Ensembl ids), or is empty.
	GeneIDs []string `json:"-"`
	// GeneNames holds one symbol per kept gene, or is empty.
	GeneNames []string `json:"-"`
	// FeatureTypes holds one feature type per kept gene
	// (e.g. "Gene Expression"), or is empty.
	FeatureTypes []string `json:"-"`
	// Barcodes holds one barcode per kept cell, or is empty, for Commit
	// to write. Open leaves it empty: Shard.Barcodes reads them when they
	// are needed.
	Barcodes []string `json:"-"`

	// Source describes the input the shard was made from (of several
	// samples: Format is theirs, or "mixed", and Path the samples file or
	// empty; Samples describes each input).
	Source Source `json:"source"`
	// Samples lists the samples of a shard ingested from several inputs,
	// in the order of their cells: sample i's cells are the rows
	// [FirstCell, FirstCell+CellsAfter), the samples' ranges one after
	// another from row 0 to the last. Empty for one input (CellSamples).
	Samples []Sample `json:"samples,omitempty"`
	// SampleColumns names the values each sample's Values holds (a samples
	// file's further columns), the cells' metadata.
	SampleColumns []string `json:"sample_columns,omitempty"`
	// Filters records the filters applied and their effect.
	Filters Filters `json:"filters"`
	// Ratings describes the ratings a shard made from a ratings file holds
	// (scpipe ingest --format ratings); zero for other inputs.
	Ratings Ratings `json:"ratings"`

	// Checksum is the checksum algorithm of Files (checksumAlgorithm).
	// Filled by Commit.
	Checksum string `json:"checksum"`
	// Files lists every file of the folder except manifest.json. Filled by
	// Commit.
	Files []File `json:"files"`
}

// Source describes the input file a shard was made from. Fields that do not
// apply are left at their zero value.
type Source struct {
	// Path is the input path as given by the user.
	Path string `json:"path"`
	// Format is the input format, e.g. "10x-h5-v3", "10x-h5-v2", "10x-mtx",
	// "h5ad", "simulate".
	Format string `json:"format"`
	// Bytes is the input's size in bytes (for a folder, the sum of the files read).
	Bytes int64 `json:"bytes"`
	// SHA256 is the lowercase hex SHA-256 of the input file (of an MTX
	// folder: of its matrix file, as stored; empty for generated data).
	SHA256 string `json:"sha256"`
	// Genome is the genome group of a CellRanger v2 file (e.g. "mm10").
	Genome string `json:"genome"`
	// FeatureType is the feature type kept (e.g. "Gene Expression"); empty: all.
	FeatureType string `json:"feature_type"`
	// Layer is the AnnData matrix read: "X", "raw/X" or "layers/NAME".
	Layer string `json:"layer"`
	// Seed is the random seed of generated data.
	Seed uint64 `json:"seed"`
	// Run is, for a run's fit mask, the identity of the run it was made
	// for (rundir.ShardsIdentity.Run); empty otherwise.
	Run string `json:"run,omitempty"`
	// Values says what the input's stored values were before they were
	// binarised: ValuesCounts, ValuesBinary or ValuesRatings; "" in a
	// manifest written before scpipe recorded it. A reader takes a value
	// it does not know as "".
	Values string `json:"values"`
}

// Sample is one input of a shard ingested from several samples.
type Sample struct {
	// Name is the sample's name: its cells' barcodes end in "-" + Name,
	// as scanpy's concat(..., index_unique="-") writes them.
	Name string `json:"name"`
	// Path, Format, Bytes, SHA256 and Layer describe its input, as
	// Source does for one input.
	Path   string `json:"path"`
	Format string `json:"format"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
	Layer  string `json:"layer,omitempty"`
	// Values holds the sample's values of Manifest.SampleColumns.
	Values []string `json:"values,omitempty"`
	// FirstCell is the sample's first row.
	FirstCell int `json:"first_cell"`
	// CellsBefore and CellsAfter count its cells before and after the
	// cell filter (which was decided over every sample's cells).
	CellsBefore int `json:"cells_before"`
	CellsAfter  int `json:"cells_after"`
	// GenesBefore counts its input's genes; GenesMissing the kept genes
	// it does not hold, unobserved in its cells (the observed mask).
	GenesBefore  int `json:"genes_before"`
	GenesMissing int `json:"genes_missing"`
	// OnesBefore counts its entries binarised to 1, before the filters.
	OnesBefore int64 `json:"ones_before"`
	// Ambient is the ambient fraction its counts were weighed against,
	// with levels measured over its own cells (0: threshold alone).
	Ambient float64 `json:"ambient_fraction,omitempty"`
}

// The values of Source.Values.
const (
	// ValuesCounts: some stored value exceeded 1 (expression counts, or
	// simulated single-cell data drawn from counts).
	ValuesCounts = "counts"
	// ValuesBinary: no stored value exceeded 1 (a 0/1 matrix), or data
	// simulated as binary (the OrMachine's model, the calculator digits).
	ValuesBinary = "binary"
	// ValuesRatings: user–item ratings, 1 where a rating exceeded
	// Filters.Threshold (see Manifest.Ratings).
	ValuesRatings = "ratings"
)

// Filters records how the input was filtered and binarised, with counts
// before and after.
type Filters struct {
	// Threshold is the binarisation threshold: an entry is 1 when its count
	// is greater than Threshold (0: any nonzero count).
	Threshold float64 `json:"threshold"`
	// Ambient is the ambient RNA fraction of ingest's ambient-aware
	// binarisation (ingest.Options.Ambient): an entry is 1 only when its
	// count is also above what that much ambient RNA explains. 0 when the
	// binarisation used Threshold alone.
	Ambient float64 `json:"ambient_fraction,omitempty"`
	// MinCellFrac keeps a gene expressed in at least this fraction of cells.
	MinCellFrac float64 `json:"min_cell_frac"`
	// MinCells keeps a gene expressed in at least this many cells.
	MinCells int `json:"min_cells"`
	// MinGenes keeps a cell expressing at least this many genes of the kept
	// feature type, counted before the gene filter (so that one counting
	// pass decides both filters).
	MinGenes int `json:"min_genes"`
	// ExcludeGenes is the regular expression, matched case-insensitively
	// against each gene's name (its id where the input has no names), of
	// the genes dropped by pattern; "" when none were.
	ExcludeGenes string `json:"exclude_genes"`
	// ExcludePreset names the preset ExcludeGenes came from (e.g.
	// "housekeeping"), or is "".
	ExcludePreset string `json:"exclude_preset"`
	// GenesBefore is the number of genes in the input.
	GenesBefore int `json:"genes_before"`
	// DroppedByFeatureType is the number of input genes dropped because their
	// feature type was not kept.
	DroppedByFeatureType int `json:"dropped_by_feature_type"`
	// DroppedByExclude is the number of genes of the kept feature type
	// dropped because ExcludeGenes matched their name.
	DroppedByExclude int `json:"dropped_by_exclude"`
	// DroppedByIntersect is the number of genes of the kept feature type
	// that some sample of several lacks, dropped by ingest --genes
	// intersect.
	DroppedByIntersect int `json:"dropped_by_intersect,omitempty"`
	// Selection records the selection of informative genes, applied after
	// every other gene filter; nil when none was made.
	Selection *GeneSelection `json:"gene_selection"`
	// GenesAfter is the number of genes kept (= Manifest.Genes).
	GenesAfter int `json:"genes_after"`
	// CellsBefore is the number of cells in the input.
	CellsBefore int `json:"cells_before"`
	// CellsAfter is the number of cells kept (= Manifest.Cells).
	CellsAfter int `json:"cells_after"`
	// OnesBefore is the number of entries above Threshold before filtering.
	OnesBefore int64 `json:"ones_before"`
}

// GeneSelection records how the kept genes were chosen among those that
// passed the other gene filters.
type GeneSelection struct {
	// Method names the score: "binomial-deviance" (Townes et al., Genome
	// Biology 2019), the genes of largest score kept, ties to the lower
	// input index.
	Method string `json:"method"`
	// N is the number of genes asked for.
	N int `json:"n"`
	// Candidates is the number of genes the selection chose from; it kept
	// min(N, Candidates) of them (= genes).
	Candidates int `json:"candidates"`
	// Scores holds each kept gene's score, in the order of the genes; empty
	// when not recorded.
	Scores []float64 `json:"scores"`
}

// Ratings describes a shard made from user–item ratings: users are cells,
// items genes, a rated entry is observed (the mask) and is 1 when its rating
// is greater than Filters.Threshold; an unrated entry is missing, not 0.
type Ratings struct {
	// Count is the number of ratings (= Manifest.Observed).
	Count int64 `json:"count"`
	// Mean, Min and Max summarise the ratings.
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	// ThresholdFrom says where Filters.Threshold came from: "mean" (the
	// global mean rating) or "given" (set by the user).
	ThresholdFrom string `json:"threshold_from"`
}

// File is one file of a shard folder.
type File struct {
	// Name is the file name, relative to the folder (no path separators).
	Name string `json:"name"`
	// Kind is one of KindX, KindXT, KindMask, KindMaskT, KindGenes, KindBarcodes.
	Kind string `json:"kind"`
	// Block is the cell block of a data file (0 for side files).
	Block int `json:"block"`
	// Tile is the gene tile of a transposed data file (0 otherwise).
	Tile int `json:"tile"`
	// Bytes is the file size.
	Bytes int64 `json:"bytes"`
	// CRC32C is the checksum of the whole file as 8 lowercase hex digits.
	CRC32C string `json:"crc32c"`
}

var hexCRC = regexp.MustCompile(`^[0-9a-f]{8}$`)

// parseManifest decodes and validates manifest.json's bytes. It checks
// everything that can be checked without touching other files.
func parseManifest(data []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%w: %s: bad JSON: %w", errFormat, ManifestName, err)
	}
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errFormat, ManifestName, err)
	}
	return &m, nil
}

// validate checks the manifest's internal consistency, including that Files
// lists exactly the data files the layout calls for with their exact sizes.
func (m *Manifest) validate() error {
	if m.FormatVersion != FormatVersion {
		return fmt.Errorf("format version %d not supported (this build reads version %d)", m.FormatVersion, FormatVersion)
	}
	if err := m.Layout.check(); err != nil {
		return err
	}
	l := m.Layout
	if m.Cells != l.Cells || m.Genes != l.Genes {
		return fmt.Errorf("cells × genes %d × %d differ from layout %d × %d", m.Cells, m.Genes, l.Cells, l.Genes)
	}
	total := int64(m.Cells) * int64(m.Genes)
	if m.Ones < 0 || m.Ones > total {
		return fmt.Errorf("ones = %d out of range 0..%d", m.Ones, total)
	}
	if d := float64(m.Ones) / float64(total); math.Abs(m.Density-d) > 1e-9 {
		return fmt.Errorf("density %g differs from ones/(cells×genes) = %g", m.Density, d)
	}
	if m.Observed < 0 || m.Observed > total || (!l.Masked && m.Observed != 0) {
		return fmt.Errorf("observed = %d invalid (masked = %v, cells × genes = %d)", m.Observed, l.Masked, total)
	}
	if err := m.Filters.Selection.check(m.Genes); err != nil {
		return err
	}
	if err := m.checkSamples(); err != nil {
		return err
	}
	if m.Checksum != checksumAlgorithm {
		return fmt.Errorf("checksum algorithm %q not supported (want %q)", m.Checksum, checksumAlgorithm)
	}
	byName := make(map[string]*File, len(m.Files))
	for i := range m.Files {
		f := &m.Files[i]
		if f.Name == "" || f.Name == "." || f.Name == ".." || f.Name == ManifestName || strings.ContainsAny(f.Name, "/\\\x00") {
			return fmt.Errorf("files[%d]: bad name %q", i, f.Name)
		}
		if byName[f.Name] != nil {
			return fmt.Errorf("files[%d]: %s listed twice", i, f.Name)
		}
		byName[f.Name] = f
		if f.Bytes < 0 {
			return fmt.Errorf("%s: negative size %d", f.Name, f.Bytes)
		}
		if !hexCRC.MatchString(f.CRC32C) {
			return fmt.Errorf("%s: crc32c %q is not 8 lowercase hex digits", f.Name, f.CRC32C)
		}
	}
	// Every expected data file, in order; stop at the first problem so that a
	// hostile layout with millions of blocks fails fast.
	n := 0
	expect := func(name, kind string, b, t int, size int64) error {
		f := byName[name]
		if f == nil {
			return fmt.Errorf("%s: not listed in files", name)
		}
		if f.Kind != kind || f.Block != b || f.Tile != t {
			return fmt.Errorf("%s: kind/block/tile %q/%d/%d, want %q/%d/%d", name, f.Kind, f.Block, f.Tile, kind, b, t)
		}
		if f.Bytes != size {
			return fmt.Errorf("%s: manifest says %d bytes, layout needs %d", name, f.Bytes, size)
		}
		n++
		return nil
	}
	planes := [][2]string{{KindX, KindXT}}
	if l.Masked {
		planes = append(planes, [2]string{KindMask, KindMaskT})
	}
	for b := 0; b < l.CellBlocks; b++ {
		for _, p := range planes {
			if err := expect(blockName(p[0], b), p[0], b, 0, l.blockBytes(b)); err != nil {
				return err
			}
			for t := 0; t < l.GeneTiles; t++ {
				if err := expect(tileName(p[1], b, t), p[1], b, t, l.tileBytes(b, t)); err != nil {
					return err
				}
			}
		}
	}
	if err := m.validateSideFiles(byName, &n); err != nil {
		return err
	}
	if n != len(m.Files) {
		return fmt.Errorf("files lists %d entries the layout does not call for", len(m.Files)-n)
	}
	return nil
}

func (m *Manifest) validateSideFiles(byName map[string]*File, n *int) error {
	side := func(field, name, kind string) error {
		switch field {
		case "":
			return nil
		case name:
		default:
			return fmt.Errorf("side file %q, want %q or empty", field, name)
		}
		f := byName[name]
		if f == nil {
			return fmt.Errorf("%s: not listed in files", name)
		}
		if f.Kind != kind {
			return fmt.Errorf("%s: kind %q, want %q", name, f.Kind, kind)
		}
		*n++
		return nil
	}
	if err := side(m.GenesFile, GenesName, KindGenes); err != nil {
		return err
	}
	if err := side(m.BarcodesFile, barcodesName, KindBarcodes); err != nil {
		return err
	}
	if (m.GenesFile == "") != (len(m.GeneColumns) == 0) {
		return fmt.Errorf("genes_file %q with gene_columns %q: both or neither must be set", m.GenesFile, m.GeneColumns)
	}
	all := []string{columnID, columnName, columnFeatureType}
	j := 0
	for _, c := range m.GeneColumns {
		for j < len(all) && all[j] != c {
			j++
		}
		if j == len(all) {
			return fmt.Errorf("gene_columns %q: want a subset of %q in that order", m.GeneColumns, all)
		}
		j++
	}
	if len(m.GeneColumns) > 0 && m.GeneColumns[0] != columnID {
		return fmt.Errorf("gene_columns %q: the first column must be %q", m.GeneColumns, columnID)
	}
	return nil
}

// maxSamples is the most samples a manifest lists: CellSamples holds a
// cell's sample in 16 bits.
const maxSamples = 1 << 16

// checkSamples checks that the samples' names are distinct and their rows
// tile the cells in order.
func (m *Manifest) checkSamples() error {
	if len(m.Samples) == 0 {
		if len(m.SampleColumns) != 0 {
			return fmt.Errorf("sample_columns %q without samples", m.SampleColumns)
		}
		return nil
	}
	if len(m.Samples) > maxSamples {
		return fmt.Errorf("%d samples, at most %d", len(m.Samples), maxSamples)
	}
	seen := make(map[string]bool, len(m.Samples))
	next := 0
	for i, s := range m.Samples {
		switch {
		case s.Name == "" || strings.ContainsAny(s.Name, "\t\r\n"):
			return fmt.Errorf("samples[%d]: bad name %q", i, s.Name)
		case seen[s.Name]:
			return fmt.Errorf("samples[%d]: name %q repeats", i, s.Name)
		case s.FirstCell != next:
			return fmt.Errorf("samples[%d] (%s): first cell %d, want %d (the samples' rows follow each other)", i, s.Name, s.FirstCell, next)
		case s.CellsAfter < 0 || s.CellsAfter > s.CellsBefore:
			return fmt.Errorf("samples[%d] (%s): %d cells after the filter of %d before", i, s.Name, s.CellsAfter, s.CellsBefore)
		case len(s.Values) != len(m.SampleColumns):
			return fmt.Errorf("samples[%d] (%s): %d values for %d sample columns", i, s.Name, len(s.Values), len(m.SampleColumns))
		}
		seen[s.Name] = true
		next += s.CellsAfter
	}
	if next != m.Cells {
		return fmt.Errorf("the samples' cells add up to %d, the shard holds %d", next, m.Cells)
	}
	return nil
}

// CellSamples returns each cell's sample, an index into Samples, or nil
// when the shard lists no samples (one input).
func (m *Manifest) CellSamples() []uint16 {
	if len(m.Samples) == 0 {
		return nil
	}
	out := make([]uint16, m.Cells)
	for i, s := range m.Samples {
		for n := s.FirstCell; n < s.FirstCell+s.CellsAfter; n++ {
			out[n] = uint16(i)
		}
	}
	return out
}

// SampleNames returns the samples' names in order (nil: one input).
func (m *Manifest) SampleNames() []string {
	var out []string
	for _, s := range m.Samples {
		out = append(out, s.Name)
	}
	return out
}

// check validates a selection (nil: none) that kept genes genes.
func (s *GeneSelection) check(genes int) error {
	switch {
	case s == nil:
		return nil
	case s.Method == "":
		return errors.New("gene_selection.method is empty")
	case s.N <= 0 || s.Candidates < 0:
		return fmt.Errorf("gene_selection: n = %d, candidates = %d: want n > 0 and candidates ≥ 0", s.N, s.Candidates)
	case genes != min(s.N, s.Candidates):
		return fmt.Errorf("gene_selection: %d genes kept, want min(n = %d, candidates = %d)", genes, s.N, s.Candidates)
	case len(s.Scores) != 0 && len(s.Scores) != genes:
		return fmt.Errorf("gene_selection: %d scores for %d genes", len(s.Scores), genes)
	}
	return nil
}
