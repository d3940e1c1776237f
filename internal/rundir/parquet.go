package rundir

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/metadata"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"scpipe/internal/infile"
)

// formatVersion is the version of the run directory format, stored in the
// key-value metadata of every Parquet file (key "scpipe.format_version")
// next to the table's kind (key "scpipe.table": codes, cells or trace).
const formatVersion = "1"

// batchRows is the number of rows in each record batch, and so in each
// Parquet row group, of the tables this package writes. Only one batch is
// held in Arrow builders at a time, so a table of a million cells costs the
// memory of 64 Ki rows on top of the caller's slices.
const batchRows = 1 << 16

// column describes one output column and how to append rows [lo, hi) of
// the caller's data to its builder.
type column struct {
	name string
	typ  arrow.DataType
	put  func(b array.Builder, lo, hi int)
	// plain columns hold a different value in nearly every row (names):
	// they are written without a dictionary (writerProperties).
	plain bool
}

func stringColumn(name string, v []string) column {
	return column{name: name, typ: arrow.BinaryTypes.String, put: func(b array.Builder, lo, hi int) {
		b.(*array.StringBuilder).AppendValues(v[lo:hi], nil)
	}}
}

// namesColumn is a stringColumn of names, one per row and each its own
// (barcodes, gene ids): a plain column.
func namesColumn(name string, v []string) column {
	c := stringColumn(name, v)
	c.plain = true
	return c
}

func float64Column(name string, v []float64) column {
	return column{name: name, typ: arrow.PrimitiveTypes.Float64, put: func(b array.Builder, lo, hi int) {
		b.(*array.Float64Builder).AppendValues(v[lo:hi], nil)
	}}
}

func int64Column(name string, v []int64) column {
	return column{name: name, typ: arrow.PrimitiveTypes.Int64, put: func(b array.Builder, lo, hi int) {
		b.(*array.Int64Builder).AppendValues(v[lo:hi], nil)
	}}
}

// The prefixes of a code's columns: its posterior means (code_1 …) and
// its genes' scores (score_1 …, codes.parquet only).
const (
	codePrefix  = "code_"
	scorePrefix = "score_"
)

// matrixColumns returns the columns prefix1 … prefixL of a row-major
// rows × L matrix.
func matrixColumns(prefix string, m []float64, L int) []column {
	cols := make([]column, L)
	for k := range L {
		cols[k] = column{name: prefix + strconv.Itoa(k+1), typ: arrow.PrimitiveTypes.Float64, put: func(b array.Builder, lo, hi int) {
			fb := b.(*array.Float64Builder)
			fb.Reserve(hi - lo)
			for i := lo; i < hi; i++ {
				fb.UnsafeAppend(m[i*L+k])
			}
		}}
	}
	return cols
}

// codeName is the column name of the 0-based code k: code_1, code_2, ….
func codeName(k int) string { return codePrefix + strconv.Itoa(k+1) }

// writerProperties are the Parquet settings of every table, chosen so that
// every common reader opens them (pyarrow, polars, DuckDB, R arrow and the
// JavaScript hyparquet; see README.md):
//
//   - the schema's root is REQUIRED. arrow-go marks it REPEATED by default,
//     which the format allows but no other writer does; a reader that takes
//     the root's repetition into its columns' levels (hyparquet) then reads
//     repetition levels that the pages do not hold and fails ("Offset is
//     outside the bounds of the DataView") whatever the codec;
//   - Snappy, the format's common default: every reader decodes it without
//     optional codecs (hyparquet without hyparquet-compressors, R arrow
//     built without zstd), and at these tables' sizes it costs little space
//     over zstd (internal/rundir/README.md gives the measure);
//   - data pages v1, dictionaries and statistics as arrow-go defaults them
//     (v1 pages are what every reader has always read), but no dictionary
//     for the columns of names (plain): a row group's 65 536 barcodes
//     overflow arrow-go's 1 MB dictionary page, its later pages fall back
//     to plain encoding, and arrow-go writes the chunk's two encodings'
//     page counts in a Go map's order, so that the same table came out in
//     different bytes from run to run (a dictionary of unique names saves
//     nothing anyway).
func writerProperties(batch int, cols []column) *parquet.WriterProperties {
	props := []parquet.WriterProperty{
		parquet.WithRootRepetition(parquet.Repetitions.Required),
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithDataPageVersion(parquet.DataPageV1),
		parquet.WithMaxRowGroupLength(int64(batch)),
	}
	for _, c := range cols {
		if c.plain {
			props = append(props, parquet.WithDictionaryFor(c.name, false))
		}
	}
	return parquet.NewWriterProperties(props...)
}

// writeTable writes rows rows of cols to path as a Parquet file
// (writerProperties), batch rows per record batch and row group,
// atomically.
func writeTable(path, table string, cols []column, rows, batch int) error {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.typ}
	}
	st, err := stampOf(path)
	if err != nil {
		return fmt.Errorf("rundir: %s: %w", path, err)
	}
	keys, values := st.metadata()
	md := arrow.NewMetadata(append([]string{"scpipe.table", "scpipe.format_version"}, keys...), append([]string{table, formatVersion}, values...))
	schema := arrow.NewSchema(fields, &md)
	props := writerProperties(batch, cols)
	sum := sha256.New()
	record := func() error { return recordChecksum(filepath.Dir(path), filepath.Base(path), sum.Sum(nil)) }
	return writeFileAtomic(path, func(w io.Writer) error {
		fw, err := pqarrow.NewFileWriter(schema, hashingWriter{w, sum}, props, pqarrow.DefaultWriterProps())
		if err != nil {
			return fmt.Errorf("parquet %s table: %w", table, err)
		}
		rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer rb.Release()
		for lo := 0; lo < rows; lo += batch {
			hi := min(lo+batch, rows)
			for i, c := range cols {
				c.put(rb.Field(i), lo, hi)
			}
			rec := rb.NewRecord()
			err := fw.Write(rec)
			rec.Release()
			if err != nil {
				fw.Close() // reporting the write error; the file is discarded
				return fmt.Errorf("parquet %s table rows %d..%d: %w", table, lo, hi, err)
			}
		}
		if err := fw.Close(); err != nil {
			return fmt.Errorf("parquet %s table: %w", table, err)
		}
		return nil
	}, record)
}

// sink consumes one column of one record batch whose first row is row0 of
// the table.
type sink func(a arrow.Array, row0 int) error

// readTable reads the Parquet file at path batch by batch. plan sees the
// file's schema and row count, checks the schema and returns one sink per
// column, in schema order; a nil sink leaves its column unread.
//
// The file is first verified against its folder's checksumsFile. Tables
// of older runs have no checksum, and the Parquet decoder panics on some
// damaged input (a page that fails zstd's CRC, offsets past a buffer):
// such a panic becomes an error that names the file.
func readTable(path string, plan func(s *arrow.Schema, rows int) ([]sink, error)) (err error) {
	if err := verifyTable(path); err != nil {
		return err
	}
	st, err := stampOf(path)
	if err != nil {
		return fmt.Errorf("rundir: %s: %w", path, err)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("rundir: %s: %w: the Parquet decoder failed: %v", path, errDamaged, p)
		}
	}()
	return decodeTable(path, func(s *arrow.Schema, rows int) ([]sink, error) {
		if err := st.check(path, s.Metadata()); err != nil {
			return nil, err
		}
		return plan(s, rows)
	})
}

// decodeTable is readTable without the checks of the file's integrity.
func decodeTable(path string, plan func(s *arrow.Schema, rows int) ([]sink, error)) error {
	mem := cappedAllocator{memory.DefaultAllocator}
	f, err := infile.Open(path)
	if err != nil {
		return fmt.Errorf("rundir: %w", err)
	}
	defer f.Close()
	rdr, err := file.NewParquetReader(f, file.WithReadProps(parquet.NewReaderProperties(mem)))
	if err != nil {
		return fmt.Errorf("rundir: %s: %w", path, err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: batchRows}, mem)
	if err != nil {
		return fmt.Errorf("rundir: %s: %w", path, err)
	}
	schema, err := fr.Schema()
	if err != nil {
		return fmt.Errorf("rundir: %s: schema: %w", path, err)
	}
	if kv := rdr.MetaData().KeyValueMetadata(); schema.Metadata().Len() == 0 && kv.Len() > 0 {
		// The file's key-value metadata (scpipe.table, scpipe.run, …),
		// which the reader's schema leaves out, for plan to see.
		md := arrow.NewMetadata(kv.Keys(), kv.Values())
		schema = arrow.NewSchema(schema.Fields(), &md)
	}
	rows := int(rdr.NumRows())
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("rundir: %w", err)
	}
	if err := checkRows(rdr, rows, schema.NumFields(), st.Size()); err != nil {
		return fmt.Errorf("rundir: %s: %w", path, err)
	}
	sinks, err := plan(schema, rows)
	if err != nil {
		return fmt.Errorf("rundir: %s: %w", path, err)
	}
	if rdr.NumRowGroups() == 0 {
		return nil
	}
	var cols []int // the columns read, in schema order
	for i, s := range sinks {
		if s != nil {
			cols = append(cols, i)
		}
	}
	// Arrow's record reader builds its column readers on goroutines of its
	// own, where a panic on a damaged file could not be recovered: the
	// readers are built, and every batch read, on this goroutine. Every
	// field is a flat column (plan checked the types), so field i is
	// leaf column i.
	groups := make([]int, rdr.NumRowGroups())
	for g := range groups {
		groups[g] = g
	}
	leaves := map[int]bool{}
	for _, i := range cols {
		leaves[i] = true
	}
	readers := make([]*pqarrow.ColumnReader, len(cols))
	for j, i := range cols {
		if readers[j], err = fr.GetFieldReader(context.Background(), i, leaves, groups); err != nil {
			return fmt.Errorf("rundir: %s: column %s: %w", path, schema.Field(i).Name, err)
		}
		defer readers[j].Release()
	}
	row := 0
	batch := make([]arrow.Array, len(cols))
	release := func() {
		for j, a := range batch {
			if a != nil {
				a.Release()
				batch[j] = nil
			}
		}
	}
	defer release()
	for {
		release()
		n := -1
		for j, i := range cols {
			a, err := nextBatch(readers[j])
			if err != nil {
				return fmt.Errorf("rundir: %s: column %s: %w", path, schema.Field(i).Name, err)
			}
			if n >= 0 && a.Len() != n {
				a.Release()
				return fmt.Errorf("rundir: %s: %w: column %s has %d values in a batch where %s has %d",
					path, errDamaged, schema.Field(i).Name, a.Len(), schema.Field(cols[0]).Name, n)
			}
			batch[j] = a
			if n < 0 {
				n = a.Len()
			}
		}
		if n <= 0 {
			break
		}
		if row+n > rows {
			return fmt.Errorf("rundir: %s: more rows than the %d the footer declares", path, rows)
		}
		for j, i := range cols {
			col := batch[j]
			if col.NullN() > 0 {
				return fmt.Errorf("rundir: %s: column %s: null values are not allowed", path, schema.Field(i).Name)
			}
			if err := sinks[i](col, row); err != nil {
				return fmt.Errorf("rundir: %s: column %s: %w", path, schema.Field(i).Name, err)
			}
		}
		row += n
	}
	if row != rows {
		return fmt.Errorf("rundir: %s: read %d rows, the footer declares %d", path, row, rows)
	}
	return nil
}

// nextBatch reads the next batchRows values of a column as one array
// (empty at the end).
func nextBatch(r *pqarrow.ColumnReader) (arrow.Array, error) {
	data, err := r.NextBatch(batchRows)
	if err != nil {
		return nil, err
	}
	defer data.Release()
	switch len(data.Chunks()) {
	case 0:
		return array.MakeArrayOfNull(memory.DefaultAllocator, data.DataType(), 0), nil
	case 1:
		a := data.Chunk(0)
		a.Retain()
		return a, nil
	}
	return array.Concatenate(data.Chunks(), memory.DefaultAllocator)
}

// maxAllocation bounds each buffer the Parquet decoder allocates. A page
// of these tables is at most arrow-go's 1 MB, and a batch of decoded
// values 65 536 rows of a column; a damaged page header can declare 2 GB
// uncompressed, which arrow-go would allocate before it decompresses.
const maxAllocation = 64 << 20

// cappedAllocator is an arrow allocator that refuses, by a panic that
// readTable reports as damage, any buffer larger than maxAllocation.
type cappedAllocator struct{ memory.Allocator }

func (a cappedAllocator) Allocate(n int) []byte {
	checkAllocation(n)
	return a.Allocator.Allocate(n)
}

func (a cappedAllocator) Reallocate(n int, b []byte) []byte {
	checkAllocation(n)
	return a.Allocator.Reallocate(n, b)
}

func checkAllocation(n int) {
	if n > maxAllocation {
		panic(fmt.Sprintf("a buffer of %d bytes asked for, more than any page or batch of these tables holds", n))
	}
}

// maxValuesPerByte bounds the values (rows × columns) a table may declare
// per byte of its file before the readers allocate for them. Real tables
// hold well under 200 (a million cells' unique barcodes and 120 codes
// mostly exactly 0); a damaged footer can declare billions of rows.
const maxValuesPerByte = 1024

// checkRows checks the row count of the footer against the row groups and
// the file's size, and that every column chunk lies within the file:
// arrow-go allocates a chunk's declared length before it reads it, so a
// damaged footer of a few kilobytes could make it allocate gigabytes.
func checkRows(rdr *file.Reader, rows, cols int, size int64) error {
	sum := int64(0)
	for i := range rdr.NumRowGroups() {
		rg := rdr.MetaData().RowGroup(i)
		n := rg.NumRows()
		if n < 0 {
			return fmt.Errorf("%w: row group %d declares %d rows", errDamaged, i, n)
		}
		sum += n
		for j := range rg.NumColumns() {
			if err := checkChunk(rg, i, j, size); err != nil {
				return err
			}
		}
	}
	if rows < 0 || int64(rows) != sum {
		return fmt.Errorf("%w: the footer declares %d rows, its row groups %d", errDamaged, rows, sum)
	}
	if values := int64(rows) * int64(max(cols, 1)); values/int64(max(cols, 1)) != int64(rows) || values > maxValuesPerByte*size+1<<16 {
		return fmt.Errorf("%w: %d rows × %d columns in a file of %d bytes", errDamaged, rows, cols, size)
	}
	return nil
}

// checkChunk checks that column chunk j of row group i (rg) lies within a
// file of size bytes, where arrow-go's page reader will look for it.
func checkChunk(rg *metadata.RowGroupMetaData, i, j int, size int64) error {
	cc, err := rg.ColumnChunk(j)
	if err != nil {
		return fmt.Errorf("%w: row group %d, column %d: %w", errDamaged, i, j, err)
	}
	start, n := cc.DataPageOffset(), cc.TotalCompressedSize()
	if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && cc.DictionaryPageOffset() < start {
		start = cc.DictionaryPageOffset()
	}
	if start < 0 || n < 0 || n > size-start {
		return fmt.Errorf("%w: row group %d, column %s declares %d bytes from byte %d of a %d-byte file", errDamaged, i, cc.PathInSchema(), n, start, size)
	}
	return nil
}

// checkFields checks that the fields of s starting at index from have the
// given names and types.
func checkFields(s *arrow.Schema, from int, names []string, types []arrow.DataType) error {
	if s.NumFields() < from+len(names) {
		return fmt.Errorf("%d columns, want at least %d", s.NumFields(), from+len(names))
	}
	for i, name := range names {
		f := s.Field(from + i)
		if f.Name != name {
			return fmt.Errorf("column %d is %q, want %q", from+i+1, f.Name, name)
		}
		if !arrow.TypeEqual(f.Type, types[i]) {
			return fmt.Errorf("column %s has type %s, want %s", name, f.Type, types[i])
		}
	}
	return nil
}

// codeColumns checks that the fields of s from from, but for the last tail,
// are code_1 … code_L of type float64, followed by score_1 … score_L or
// nothing, and returns L and whether the scores are there.
func codeColumns(s *arrow.Schema, from, tail int) (L int, scored bool, err error) {
	L = s.NumFields() - from - tail
	if L >= 2 && L%2 == 0 && s.Field(from+L/2).Name == scorePrefix+"1" {
		L, scored = L/2, true
	}
	if L < 1 {
		return 0, false, errors.New("no code_1 … code_L columns")
	}
	if err := checkFields(s, from, prefixed(codePrefix, L), float64s(L)); err != nil {
		return 0, false, err
	}
	if scored {
		err = checkFields(s, from+L, prefixed(scorePrefix, L), float64s(L))
	}
	return L, scored, err
}

// prefixed returns prefix1 … prefixL.
func prefixed(prefix string, L int) []string {
	names := make([]string, L)
	for k := range L {
		names[k] = prefix + strconv.Itoa(k+1)
	}
	return names
}

func float64s(L int) []arrow.DataType {
	types := make([]arrow.DataType, L)
	for k := range types {
		types[k] = arrow.PrimitiveTypes.Float64
	}
	return types
}

// stringSink copies a string column into dst. The values of a batch share
// one copy of its bytes (one allocation per batch rather than one per value:
// a million barcodes), because the reader reuses the batch's buffers.
func stringSink(dst []string) sink {
	return func(a arrow.Array, row0 int) error {
		s := a.(*array.String)
		data, offs := string(s.ValueBytes()), s.ValueOffsets()
		for i := range s.Len() {
			dst[row0+i] = data[offs[i]-offs[0] : offs[i+1]-offs[0]]
		}
		return nil
	}
}

func float64Sink(dst []float64) sink {
	return func(a arrow.Array, row0 int) error {
		copy(dst[row0:], a.(*array.Float64).Float64Values())
		return nil
	}
}

func int64Sink(dst []int64) sink {
	return func(a arrow.Array, row0 int) error {
		copy(dst[row0:], a.(*array.Int64).Int64Values())
		return nil
	}
}

// matrixSinks fills the row-major rows × L matrix m from code_1 … code_L.
// Each column's sink only keeps the batch's values, and the last one
// writes the batch's rows whole: writing one column at a time would stride
// through every row L times.
func matrixSinks(m []float64, L int) []sink {
	cols := make([][]float64, L)
	sinks := make([]sink, L)
	for k := range L {
		sinks[k] = func(a arrow.Array, row0 int) error {
			cols[k] = a.(*array.Float64).Float64Values()
			if k < L-1 {
				return nil
			}
			n := len(cols[k])
			for j, c := range cols {
				if len(c) != n {
					return fmt.Errorf("%d values in code_%d, %d in code_%d", len(c), j+1, n, L)
				}
			}
			rows := m[row0*L : (row0+n)*L]
			for i := range n {
				row := rows[i*L : (i+1)*L]
				for j, c := range cols {
					row[j] = c[i]
				}
			}
			return nil
		}
	}
	return sinks
}
