package ingest

import (
	"log/slog"
	"time"

	"scpipe/shard"
)

// geneExpression is the 10x feature type of ordinary genes, kept by default.
const geneExpression = "Gene Expression"

// defaultMinCellFrac is the paper's gene filter (section 5.2): drop genes
// expressed in fewer than 1% of cells.
const defaultMinCellFrac = 0.01

// Options configures Run. The zero value of every filter field means "no
// filter"; DefaultOptions returns the paper's defaults.
type Options struct {
	// Input is a 10x HDF5 file, an AnnData .h5ad file, a 10x MTX folder or a
	// Matrix Market file (plain or gzip). The format is detected from content.
	Input string
	// Samples, instead of Input, names several inputs read as one matrix,
	// their cells one sample after another (see samples.go); every other
	// option applies to each of them (Layer, Genome, Transpose, …).
	Samples []Sample
	// SamplesFile is the samples file Samples were read from, if any: the
	// manifest's source path.
	SamplesFile string
	// SampleColumns names the further values of each sample (a samples
	// file's columns after name and path), kept as the cells' metadata.
	SampleColumns []string
	// GeneJoin matches the genes of Samples (GenesSame: refuse samples
	// whose genes differ).
	GeneJoin GeneJoin
	// Output is the shard folder to create.
	Output string
	// Genome selects the genome group of a CellRanger v2 HDF5 file (or the
	// genome subfolder of a v2 MTX folder) that holds several, and keeps
	// only the features of that genome where features record one (10x v3,
	// AnnData var genome).
	Genome string
	// FeatureType keeps only features of this feature type (10x features,
	// AnnData var feature_types); empty keeps every feature. Inputs without
	// feature types count as geneExpression.
	FeatureType string
	// Layer selects the AnnData matrix: "" or "X" for X, "raw" or "raw/X" for
	// raw.X, any other name for layers/NAME.
	Layer string
	// Transpose flips the source's natural orientation (10x and MTX: genes ×
	// cells; AnnData: cells × genes), for files stored the other way round.
	Transpose bool
	// Threshold binarises: a stored count c becomes 1 when c > Threshold.
	Threshold float64
	// Ambient is the fraction of a droplet's molecules taken to be ambient
	// RNA (see ambient.go): a count must also exceed what that explains,
	// weighed against the gene's average level in a cell of that size. 0
	// binarises at Threshold alone, as the paper does; inputs holding no
	// value above 1 are binarised at Threshold alone whatever Ambient is.
	Ambient float64
	// MinCellFrac keeps a gene only if it is 1 in at least this fraction of
	// the input's cells.
	MinCellFrac float64
	// MinCells keeps a gene only if it is 1 in at least this many cells.
	MinCells int
	// ExcludeGenes drops the genes whose names it matches (see
	// ParseGenePattern) before the other gene filters; nil drops none.
	ExcludeGenes *GenePattern
	// SelectGenes keeps, of the genes that pass the other gene filters,
	// the SelectGenes of largest binomial deviance (see deviance.go): on
	// the counts of the kept feature types before binarising, over all
	// input cells, each cell's total taken over all of those genes. 0
	// selects none; a number above the genes left keeps them all.
	SelectGenes int
	// MinGenes keeps a cell only if it is 1 in at least this many genes of
	// the kept feature type (counted before the gene filter, so that both
	// filters are decided by the single counting pass).
	MinGenes int
	// Force replaces an existing Output.
	Force bool
	// Cached writes the shards and the temporary entry file through the
	// page cache instead of around it with O_DIRECT (see
	// shard.CreateOptions.Cached): on network file systems such as NFS
	// each direct write waits for the server.
	Cached bool
	// FreeBytes tells the free space of the file system the shards go to
	// (shard.CreateOptions.FreeBytes; nil: the system's): the shards are
	// refused before they are written when it cannot hold them.
	FreeBytes func(path string) (n int64, ok bool)
	// Workers is the number of goroutines of each pass (decoding HDF5
	// chunks, counting, writing shards); 0 means GOMAXPROCS. The shards do
	// not depend on it.
	Workers int
	// GenesFile and BarcodesFile name the side files of a bare Matrix Market
	// file; they override the files found beside a matrix.mtx(.gz).
	GenesFile    string
	BarcodesFile string
	// Logger receives progress and summary lines; nil discards them.
	Logger *slog.Logger
	// Progress, when set, is called from time to time with the stored
	// entries processed so far and the total expected over both passes.
	Progress func(done, total int64)
}

// DefaultOptions returns the default settings: keep Gene Expression
// features, binarise counts > 0 that ambient RNA does not explain (at an
// ambient fraction of defaultAmbient), keep genes expressed in at least 1%
// of cells.
func DefaultOptions() Options {
	return Options{
		FeatureType: geneExpression,
		Ambient:     defaultAmbient,
		MinCellFrac: defaultMinCellFrac,
	}
}

// Report describes a completed ingest.
type Report struct {
	// Input and Output are the paths of Options (of several samples, Input
	// is the samples file, or "N samples").
	Input, Output string
	// Format is the detected input format.
	Format Format
	// Matrix names what was read inside Input: an HDF5 group or dataset, or
	// the Matrix Market file of a folder.
	Matrix string
	// SHA256 is the hex SHA-256 of the matrix file (the HDF5 file, or the
	// Matrix Market file as stored, compressed or not).
	SHA256 string
	// CellsIn and GenesIn are the input's shape, cells × genes, after
	// orientation and before any filter.
	CellsIn, GenesIn int
	// DroppedByFeatureType counts input genes of other feature types.
	DroppedByFeatureType int
	// DroppedByGenome counts input genes of other genomes (10x v3 files
	// with several genomes, when Options.Genome is set). The manifest's
	// dropped_by_feature_type includes them.
	DroppedByGenome int
	// DroppedByExclude counts genes of the kept feature type that
	// Options.ExcludeGenes matched.
	DroppedByExclude int
	// SelectedFrom counts the genes that passed every other gene filter,
	// among which Options.SelectGenes chose (0 without selection).
	SelectedFrom int
	// DroppedByIntersect counts the genes of the kept feature type that
	// some sample lacks, dropped by GenesIntersect.
	DroppedByIntersect int
	// Samples describes each sample of Options.Samples (nil for one input):
	// its input, its cells before and after the filters, its ones before
	// them, the kept genes it lacks (GenesUnion).
	Samples []shard.Sample
	// CellsOut and GenesOut are the shape of the shards written.
	CellsOut, GenesOut int
	// NNZ is the number of entries stored in the input (including explicit
	// zeros and entries of dropped features).
	NNZ int64
	// ValueSum is the sum of all stored values, before any filter.
	ValueSum float64
	// AboveOne reports whether some stored value exceeds 1 (counts, as
	// opposed to a 0/1 matrix): the manifest's Source.Values.
	AboveOne bool
	// Ambient is the ambient fraction the binarisation weighed counts
	// against: Options.Ambient, or 0 when it was 0 or the input held no
	// value above 1.
	Ambient float64
	// OnesIn counts entries above the threshold among the kept feature type,
	// before the gene and cell filters.
	OnesIn int64
	// Ones counts the bits set in the shards.
	Ones int64
	// Count, Write, Commit and Total time the counting pass, the writing
	// pass, the shard commit (Xᵀ, checksums, fsync, rename) and the whole
	// run; Select the gene selection's work after the counting pass (the
	// runs cut by range edges, or a second read of an input not stored
	// cell by cell, and the ranking).
	Count, Select, Write, Commit, Total time.Duration
}
