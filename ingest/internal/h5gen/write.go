package h5gen

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/scigolib/hdf5"
)

// RawDataset is one dataset for WriteRaw.
type RawDataset struct {
	// Path is the dataset's full path ("/matrix/data"); missing parent
	// groups are created.
	Path string
	// Values holds the elements: []int32, []int64, []float32, []float64
	// or []string. An empty slice writes a dataset of shape [0].
	Values any
	// Options sets chunking and filters of a numeric dataset; its DataType
	// and IndexType are ignored (the type of Values decides).
	Options Options
	// VLen writes a []string as variable-length strings (as h5py writes
	// object strings) instead of fixed-length, null-padded |S<n>.
	VLen bool
}

// RawAttr is one attribute for WriteRaw.
type RawAttr struct {
	// Path names the group or dataset that carries the attribute; it must
	// be one that WriteRaw creates (scigolib v0.14.0 cannot put attributes
	// on the root group).
	Path string
	// Name is the attribute's name.
	Name string
	// Value is a string (fixed-length), []string (variable-length strings),
	// a signed or unsigned integer, a float, or a non-empty slice of them.
	Value any
}

// builder writes one HDF5 file through scigolib's writer and records the
// byte-level corrections (see fixup.go) to apply once the writer is closed.
type builder struct {
	path   string // final path
	tmp    string // path being written
	fw     *hdf5.FileWriter
	groups map[string]*hdf5.GroupWriter
	sets   map[string]*hdf5.DatasetWriter
	fixes  []fixup

	// streams are datasets whose chunks commit appends once the writer
	// is closed (see GenerateTenXV2Stream).
	streams []*streamedDataset
}

// create starts a file that commit renames to path.
func create(path string) (*builder, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("h5gen: %w", err)
	}
	name := tmp.Name()
	if err := tmp.Close(); err != nil {
		_ = os.Remove(name)
		return nil, fmt.Errorf("h5gen: %w", err)
	}
	fw, err := hdf5.CreateForWrite(name, hdf5.CreateTruncate)
	if err != nil {
		_ = os.Remove(name)
		return nil, fmt.Errorf("h5gen: create %s: %w", path, err)
	}
	return &builder{
		path:   path,
		tmp:    name,
		fw:     fw,
		groups: map[string]*hdf5.GroupWriter{},
		sets:   map[string]*hdf5.DatasetWriter{},
	}, nil
}

// abort closes and removes the temporary file.
func (b *builder) abort() {
	if b.fw != nil {
		_ = b.fw.Close()
		b.fw = nil
	}
	_ = os.Remove(b.tmp)
}

// commit closes the writer, applies the recorded fixes and renames the file
// into place. On error the temporary file is removed.
func (b *builder) commit() error {
	err := b.fw.Close()
	b.fw = nil
	if err != nil {
		b.abort()
		return fmt.Errorf("h5gen: close %s: %w", b.path, err)
	}
	if err := b.appendStreams(); err != nil {
		b.abort()
		return fmt.Errorf("h5gen: %s: %w", b.path, err)
	}
	if err := applyFixups(b.tmp, b.fixes); err != nil {
		b.abort()
		return fmt.Errorf("h5gen: %s: %w", b.path, err)
	}
	if err := os.Rename(b.tmp, b.path); err != nil {
		b.abort()
		return fmt.Errorf("h5gen: %w", err)
	}
	return nil
}

// appendStreams appends the chunks and B-trees of the streamed datasets to
// the closed file, records the fixes that point their headers at them, and
// moves the superblock's end of file past them.
func (b *builder) appendStreams() (err error) {
	if len(b.streams) == 0 {
		return nil
	}
	f, err := os.OpenFile(b.tmp, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	for _, s := range b.streams {
		fx, err := s.write(f)
		if err != nil {
			return fmt.Errorf("streaming %s: %w", s.path, err)
		}
		b.fixes = append(b.fixes, fx)
	}
	return setEOF(f)
}

// group returns the writer of the group at path, creating it and its
// parents as needed. The root group has no writer and yields nil.
func (b *builder) group(path string) (*hdf5.GroupWriter, error) {
	path = strings.TrimSuffix(path, "/")
	if path == "" {
		return nil, nil
	}
	if g, ok := b.groups[path]; ok {
		return g, nil
	}
	if _, ok := b.sets[path]; ok {
		return nil, fmt.Errorf("h5gen: group %s: a dataset has that path", path)
	}
	if _, err := b.group(parentOf(path)); err != nil {
		return nil, err
	}
	g, err := b.fw.CreateGroup(path)
	if err != nil {
		return nil, fmt.Errorf("h5gen: group %s: %w", path, err)
	}
	b.groups[path] = g
	return g, nil
}

// parentOf returns the parent group of an absolute path ("" for the root).
func parentOf(path string) string {
	return path[:strings.LastIndexByte(path, '/')]
}

// attr writes an attribute on the group or dataset at path.
func (b *builder) attr(path, name string, value any) error {
	path = strings.TrimSuffix(path, "/")
	var err error
	switch {
	case path == "":
		return fmt.Errorf("h5gen: attribute %s on the root group: scigolib v0.14.0 cannot write root attributes", name)
	case b.sets[path] != nil:
		err = b.sets[path].WriteAttribute(name, value)
	case b.groups[path] != nil:
		err = b.groups[path].WriteAttribute(name, value)
	default:
		return fmt.Errorf("h5gen: attribute %s: no group or dataset %s", name, path)
	}
	if err != nil {
		return fmt.Errorf("h5gen: attribute %s of %s: %w", name, path, err)
	}
	return nil
}

// numeric writes a 1-D numeric dataset ([]int32, []int64, []float32 or
// []float64) with the chunking and filters of o.
func (b *builder) numeric(path string, values any, o Options) error {
	if err := o.validate(); err != nil {
		return err
	}
	var dt hdf5.Datatype
	var n int
	switch v := values.(type) {
	case []int32:
		dt, n = hdf5.Int32, len(v)
	case []int64:
		dt, n = hdf5.Int64, len(v)
	case []float32:
		dt, n = hdf5.Float32, len(v)
	case []float64:
		dt, n = hdf5.Float64, len(v)
	default:
		return fmt.Errorf("h5gen: dataset %s: unsupported values %T", path, values)
	}
	if n == 0 {
		return b.empty(path, dt, 0)
	}
	var opts []hdf5.DatasetOption
	if o.Chunk > 0 {
		opts = append(opts, hdf5.WithChunkDims([]uint64{uint64(min(o.Chunk, n))}))
		if o.Shuffle {
			opts = append(opts, hdf5.WithShuffle())
		}
		if o.Deflate > 0 {
			opts = append(opts, hdf5.WithGZIPCompression(o.Deflate))
		}
		if o.Shuffle || o.Deflate > 0 {
			b.fixes = append(b.fixes, fixup{path: path, kind: fixFilters, deflate: o.Deflate, shuffle: o.Shuffle})
		}
	}
	ds, err := b.create(path, dt, uint64(n), opts...)
	if err != nil {
		return err
	}
	if err := ds.Write(values); err != nil {
		return fmt.Errorf("h5gen: write %s: %w", path, err)
	}
	return nil
}

// empty writes a dataset of shape [0]. scigolib refuses zero dimensions, so
// it writes one element into a resizable chunked dataset and the fixup sets
// the extent to 0 (the chunk then lies outside the extent, which HDF5
// allows).
func (b *builder) empty(path string, dt hdf5.Datatype, strSize int) error {
	opts := []hdf5.DatasetOption{hdf5.WithChunkDims([]uint64{1}), hdf5.WithMaxDims([]uint64{hdf5.Unlimited})}
	var one any
	switch dt {
	case hdf5.Int32:
		one = []int32{0}
	case hdf5.Int64:
		one = []int64{0}
	case hdf5.Float32:
		one = []float32{0}
	case hdf5.Float64:
		one = []float64{0}
	case hdf5.String:
		opts = append(opts, hdf5.WithStringSize(uint32(max(strSize, 1))))
		one = []string{""}
		b.fixes = append(b.fixes, fixup{path: path, kind: fixNullPad})
	default:
		return fmt.Errorf("h5gen: dataset %s: cannot write an empty dataset of this type", path)
	}
	ds, err := b.create(path, dt, 1, opts...)
	if err != nil {
		return err
	}
	if err := ds.Write(one); err != nil {
		return fmt.Errorf("h5gen: write %s: %w", path, err)
	}
	b.fixes = append(b.fixes, fixup{path: path, kind: fixEmpty})
	return nil
}

// strings writes a 1-D string dataset: fixed-length null-padded |S<n> with
// n the longest string (at least 1), or variable-length strings when vlen.
func (b *builder) strings(path string, values []string, vlen bool) error {
	if vlen {
		if len(values) == 0 {
			return fmt.Errorf("h5gen: dataset %s: scigolib v0.14.0 cannot write an empty variable-length string dataset", path)
		}
		ds, err := b.create(path, hdf5.VLenString, uint64(len(values)))
		if err != nil {
			return err
		}
		if err := ds.Write(values); err != nil {
			return fmt.Errorf("h5gen: write %s: %w", path, err)
		}
		return nil
	}
	size := 1
	for _, s := range values {
		size = max(size, len(s))
	}
	if len(values) == 0 {
		return b.empty(path, hdf5.String, size)
	}
	ds, err := b.create(path, hdf5.String, uint64(len(values)), hdf5.WithStringSize(uint32(size)))
	if err != nil {
		return err
	}
	if err := ds.Write(values); err != nil {
		return fmt.Errorf("h5gen: write %s: %w", path, err)
	}
	b.fixes = append(b.fixes, fixup{path: path, kind: fixNullPad})
	return nil
}

// create makes the parent groups of path and the dataset itself.
func (b *builder) create(path string, dt hdf5.Datatype, n uint64, opts ...hdf5.DatasetOption) (*hdf5.DatasetWriter, error) {
	if !strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/") {
		return nil, fmt.Errorf("h5gen: dataset path %q is not absolute", path)
	}
	if _, dup := b.sets[path]; dup {
		return nil, fmt.Errorf("h5gen: dataset %s written twice", path)
	}
	if _, dup := b.groups[path]; dup {
		return nil, fmt.Errorf("h5gen: dataset %s: a group has that path", path)
	}
	if _, err := b.group(parentOf(path)); err != nil {
		return nil, err
	}
	ds, err := b.fw.CreateDataset(path, dt, []uint64{n}, opts...)
	if err != nil {
		return nil, fmt.Errorf("h5gen: create %s: %w", path, err)
	}
	b.sets[path] = ds
	return ds, nil
}

// WriteRaw writes the given datasets and then the given attributes to a new
// file at path, checking nothing about their meaning: it is how tests craft
// files with a shape that disagrees with indptr, negative or NaN values,
// out-of-range indices or missing datasets. Groups named by dataset paths
// are created; attributes may name any group or dataset written.
func WriteRaw(path string, datasets []RawDataset, attrs []RawAttr) (err error) {
	b, err := create(path)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			b.abort()
		}
	}()
	// Groups named only by attributes would otherwise be missing.
	var extra []string
	for _, a := range attrs {
		p := strings.TrimSuffix(a.Path, "/")
		if p != "" && !hasDataset(datasets, p) {
			extra = append(extra, p)
		}
	}
	sort.Strings(extra)
	for _, p := range extra {
		if _, err := b.group(p); err != nil {
			return err
		}
	}
	for _, d := range datasets {
		if err := b.raw(d); err != nil {
			return err
		}
	}
	for _, a := range attrs {
		if err := b.attr(a.Path, a.Name, a.Value); err != nil {
			return err
		}
	}
	return b.commit()
}

// raw writes one RawDataset.
func (b *builder) raw(d RawDataset) error {
	if s, ok := d.Values.([]string); ok {
		return b.strings(d.Path, s, d.VLen)
	}
	if d.Values == nil {
		return errors.New("h5gen: dataset " + d.Path + " has no values")
	}
	return b.numeric(d.Path, d.Values, d.Options.storage())
}

// hasDataset reports whether datasets include one at path.
func hasDataset(datasets []RawDataset, path string) bool {
	for _, d := range datasets {
		if d.Path == path {
			return true
		}
	}
	return false
}
