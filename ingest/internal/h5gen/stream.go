package h5gen

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sync/errgroup"

	"scpipe/internal/lookup3"
)

// GenerateTenXV2Stream writes the file GenerateTenXV2 writes, with the same
// matrix, for matrices too large to hold in memory (the 1.3M-cell file has
// about 2.5e9 nonzeros): it needs O(genes + cells) memory and a few batches
// of cells per core. It draws the matrix once, batches of cells on all
// cores, shuffles and deflates the chunks of data and indices on all cores
// into two temporary files beside path, and appends them, each under a
// version-1 chunk B-tree of its own, after what scigolib writes. o.Chunk
// must be positive; chunks are whole, the last padded with zeros, as
// libhdf5 stores them. Cancelling ctx stops the drawing (minutes at the
// paper's size) and leaves neither the file nor the temporary ones.
func GenerateTenXV2Stream(ctx context.Context, path string, genes, cells int, density float64, seed uint64, o Options) (nnz int64, err error) {
	if err := checkGenerate("GenerateTenXV2Stream", genes, cells, density, o); err != nil {
		return 0, err
	}
	if o.Chunk <= 0 {
		return 0, errors.New("h5gen: GenerateTenXV2Stream: Options.Chunk must be positive")
	}
	if o.Workers < 1 {
		return 0, fmt.Errorf("h5gen: GenerateTenXV2Stream: %d workers: want at least 1", o.Workers)
	}
	o = withDefaults(o, "int32")
	st := o.storage()
	root := "/" + generatedGenome
	arrays := []*streamedDataset{
		{path: root + "/data", typ: o.DataType, o: st},
		{path: root + "/indices", typ: o.IndexType, index: true, o: st},
	}
	for _, a := range arrays {
		if a.tmp, err = os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".chunks-*"); err != nil {
			return 0, fmt.Errorf("h5gen: %w", err)
		}
		defer func() {
			a.tmp.Close()
			os.Remove(a.tmp.Name())
		}()
	}
	indptr, err := drawChunks(ctx, newModel(genes, density, seed), cells, arrays, o.Workers)
	if err != nil {
		return 0, fmt.Errorf("h5gen: %s: %w", path, err)
	}
	nnz = indptr[cells]
	if nnz < int64(o.Chunk) {
		// One chunk or less: nothing to stream.
		return GenerateTenXV2(path, genes, cells, density, seed, o)
	}
	b, err := create(path)
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			b.abort()
		}
	}()
	for _, a := range arrays {
		// A placeholder of one chunk: commit points its header at the
		// appended chunks.
		zero, err := convert(make([]float64, o.Chunk), a.typ)
		if err != nil {
			return 0, err
		}
		if err := b.numeric(a.path, zero, st); err != nil {
			return 0, err
		}
		b.streams = append(b.streams, a)
	}
	ptr, err := convertIndex(indptr, o.IndexType)
	if err != nil {
		return 0, err
	}
	if err := b.numeric(root+"/indptr", ptr, st); err != nil {
		return 0, err
	}
	if err := b.numeric(root+"/shape", []int32{int32(genes), int32(cells)}, Options{}); err != nil {
		return 0, err
	}
	ids, names, barcodes := generatedNames(genes, cells)
	for _, s := range []struct {
		name   string
		values []string
	}{{"barcodes", barcodes}, {"genes", ids}, {"gene_names", names}} {
		if err := b.strings(root+"/"+s.name, s.values, false); err != nil {
			return 0, err
		}
	}
	return nnz, b.commit()
}

// streamedDataset is a data or indices array whose filtered chunks are
// written to tmp as they are drawn; commit appends them to the file.
type streamedDataset struct {
	path  string
	typ   string // element type, as Options.DataType
	index bool   // the genes (indices), not the counts (data)
	o     Options
	tmp   *os.File
	refs  []chunkAt // in tmp
	n     int64     // elements

	raw  [][]byte // full chunks not yet filtered
	cur  []byte   // the chunk being filled
	used int      // elements in cur
	at   int64    // end of tmp
}

// drawBatch is how many cells a worker draws at a time.
const drawBatch = 256

// drawChunks draws every cell once, in rounds of batches on workers
// goroutines, and
// writes each array's chunks to its temporary file; it returns the column
// pointers.
func drawChunks(ctx context.Context, m *model, cells int, arrays []*streamedDataset, workers int) ([]int64, error) {
	// Twice as many batches as workers, each on a goroutine of its own,
	// balance uneven cells.
	drawers := make([]*drawer, 2*workers)
	for i := range drawers {
		drawers[i] = m.drawer()
	}
	type batch struct {
		genes  []int32
		counts []float64
		ends   []int // per cell, the end of its entries
	}
	batches := make([]batch, len(drawers))
	indptr := make([]int64, cells+1)
	for lo := 0; lo < cells; lo += len(drawers) * drawBatch {
		if err := ctx.Err(); err != nil {
			return nil, err // a file of the paper's size takes minutes to draw
		}
		var wg sync.WaitGroup
		for i := range batches {
			from := lo + i*drawBatch
			wg.Go(func() {
				bt := &batches[i]
				bt.genes, bt.counts, bt.ends = bt.genes[:0], bt.counts[:0], bt.ends[:0]
				for c := from; c < min(from+drawBatch, cells); c++ {
					bt.genes, bt.counts = drawers[i].cell(c, bt.genes, bt.counts)
					bt.ends = append(bt.ends, len(bt.genes))
				}
			})
		}
		wg.Wait()
		for i, bt := range batches {
			from := lo + i*drawBatch
			prev := 0
			for k, end := range bt.ends {
				indptr[from+k+1] = int64(end - prev)
				prev = end
			}
			for _, a := range arrays {
				a.add(bt.genes, bt.counts)
			}
		}
		for _, a := range arrays {
			if err := a.flush(false); err != nil {
				return nil, err
			}
		}
	}
	for _, a := range arrays {
		if err := a.flush(true); err != nil {
			return nil, err
		}
	}
	for c := range cells {
		indptr[c+1] += indptr[c]
	}
	for _, a := range arrays {
		if want := (indptr[cells] + int64(a.o.Chunk) - 1) / int64(a.o.Chunk); int64(len(a.refs)) != want {
			return nil, fmt.Errorf("%s: %d chunks written for %d elements", a.path, len(a.refs), indptr[cells])
		}
	}
	return indptr, nil
}

// add appends the entries (genes or counts) to the array's chunks.
func (a *streamedDataset) add(genes []int32, counts []float64) {
	es := elemSize(a.typ)
	for i, g := range genes {
		if a.cur == nil {
			a.cur = make([]byte, a.o.Chunk*es)
		}
		v := counts[i]
		if a.index {
			v = float64(g)
		}
		putElem(a.cur[a.used*es:], a.typ, v)
		if a.used++; a.used == a.o.Chunk {
			a.raw = append(a.raw, a.cur)
			a.cur, a.used = nil, 0
		}
	}
	a.n += int64(len(genes))
}

// flush filters the full chunks on all cores and writes them to tmp; with
// last, the partial chunk too, padded with zeros.
func (a *streamedDataset) flush(last bool) error {
	if last && a.used > 0 {
		clear(a.cur[a.used*elemSize(a.typ):])
		a.raw = append(a.raw, a.cur)
		a.cur, a.used = nil, 0
	}
	out := make([][]byte, len(a.raw))
	var g errgroup.Group
	g.SetLimit(a.o.Workers)
	for i := range out {
		g.Go(func() (err error) {
			out[i], err = filterChunk(a.raw[i], elemSize(a.typ), a.o)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, z := range out {
		if _, err := a.tmp.WriteAt(z, a.at); err != nil {
			return err
		}
		a.refs = append(a.refs, chunkAt{addr: uint64(a.at), size: uint32(len(z))})
		a.at += int64(len(z))
	}
	a.raw = a.raw[:0]
	return nil
}

// write appends the array's chunks from tmp to f, then their B-tree, and
// returns the fix that points the placeholder's header at them.
func (a *streamedDataset) write(f *os.File) (fixup, error) {
	base, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return fixup{}, err
	}
	if _, err := io.Copy(f, io.NewSectionReader(a.tmp, 0, a.at)); err != nil {
		return fixup{}, err
	}
	refs := make([]chunkAt, len(a.refs))
	for i, r := range a.refs {
		refs[i] = chunkAt{addr: r.addr + uint64(base), size: r.size}
	}
	root, err := writeChunkBTree(f, base+a.at, refs, uint64(a.o.Chunk))
	if err != nil {
		return fixup{}, err
	}
	return fixup{path: a.path, kind: fixStream, extent: uint64(a.n), btree: root}, nil
}

// filterChunk applies the shuffle and deflate filters of o to the raw
// chunk p of es-byte elements, as HDF5's pipeline does.
func filterChunk(p []byte, es int, o Options) ([]byte, error) {
	if o.Shuffle {
		n := len(p) / es
		sh := make([]byte, len(p))
		for i := range n {
			for j := range es {
				sh[j*n+i] = p[i*es+j]
			}
		}
		p = sh
	}
	if o.Deflate == 0 {
		return bytes.Clone(p), nil
	}
	var buf bytes.Buffer
	w, _ := zlibWriters[o.Deflate].Get().(*zlib.Writer)
	if w == nil {
		var err error
		if w, err = zlib.NewWriterLevel(&buf, o.Deflate); err != nil {
			return nil, err
		}
	} else {
		w.Reset(&buf)
	}
	defer zlibWriters[o.Deflate].Put(w)
	w.Write(p)
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// zlibWriters recycles compressors by level: a new one allocates about a
// megabyte, which would dominate a small chunk.
var zlibWriters [10]sync.Pool

// elemSize returns the bytes of an element of type typ (as
// Options.DataType).
func elemSize(typ string) int {
	if typ == "int32" || typ == "float32" {
		return 4
	}
	return 8
}

// putElem stores v, integral where typ is an integer type, little-endian.
func putElem(b []byte, typ string, v float64) {
	switch typ {
	case "int32":
		binary.LittleEndian.PutUint32(b, uint32(int32(v)))
	case "int64":
		binary.LittleEndian.PutUint64(b, uint64(int64(v)))
	case "float32":
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(v)))
	default:
		binary.LittleEndian.PutUint64(b, math.Float64bits(v))
	}
}

// chunkAt is where a stored chunk lies.
type chunkAt struct {
	addr uint64
	size uint32
}

// btreeK is the "indexed storage K" of a superblock that does not give one
// (versions 2 and 3): a chunk B-tree node holds up to 2K children.
const btreeK = 32

// writeChunkBTree writes a version-1 B-tree (nodes of type 1) over the
// chunks of a 1-D dataset, chunk i holding elements from i·chunk, starting
// at at, and returns its root's address. Each node takes the size libhdf5
// allocates for 2K children; keys are (chunk bytes, filter mask, offset,
// 0), each node's last key the offset past its last chunk.
func writeChunkBTree(f *os.File, at int64, refs []chunkAt, chunk uint64) (uint64, error) {
	const keySize = 4 + 4 + 2*8
	nodeSize := 24 + 2*btreeK*(keySize+8) + keySize
	type entry struct {
		size  uint32
		off   uint64 // first element covered
		child uint64
	}
	level := make([]entry, len(refs))
	for i, r := range refs {
		level[i] = entry{size: r.size, off: uint64(i) * chunk, child: r.addr}
	}
	end := uint64(len(refs)) * chunk // the offset past the last chunk
	undefined := uint64(math.MaxUint64)
	for depth := 0; ; depth++ {
		nodes := (len(level) + 2*btreeK - 1) / (2 * btreeK)
		up := make([]entry, nodes)
		for k := range nodes {
			kids := level[k*2*btreeK : min((k+1)*2*btreeK, len(level))]
			node := make([]byte, nodeSize)
			copy(node, "TREE")
			node[4], node[5] = 1, byte(depth)
			binary.LittleEndian.PutUint16(node[6:], uint16(len(kids)))
			left, right := undefined, undefined
			if k > 0 {
				left = uint64(at) - uint64(nodeSize)
			}
			if k < nodes-1 {
				right = uint64(at) + uint64(nodeSize)
			}
			binary.LittleEndian.PutUint64(node[8:], left)
			binary.LittleEndian.PutUint64(node[16:], right)
			pos := 24
			for _, e := range kids {
				binary.LittleEndian.PutUint32(node[pos:], e.size)
				binary.LittleEndian.PutUint64(node[pos+8:], e.off)
				binary.LittleEndian.PutUint64(node[pos+keySize:], e.child)
				pos += keySize + 8
			}
			last := end
			if (k+1)*2*btreeK < len(level) {
				last = level[(k+1)*2*btreeK].off
			}
			binary.LittleEndian.PutUint64(node[pos+8:], last)
			if _, err := f.WriteAt(node, at); err != nil {
				return 0, err
			}
			up[k] = entry{size: kids[0].size, off: kids[0].off, child: uint64(at)}
			at += int64(nodeSize)
		}
		if nodes == 1 {
			return up[0].child, nil
		}
		level = up
	}
}

// setEOF records the file's size as the end-of-file address of its
// version-2 or -3 superblock and recomputes the superblock's checksum.
func setEOF(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	var sb [48]byte
	if _, err := f.ReadAt(sb[:], 0); err != nil {
		return fmt.Errorf("superblock: %w", err)
	}
	if string(sb[:8]) != "\x89HDF\r\n\x1a\n" || (sb[8] != 2 && sb[8] != 3) || sb[9] != 8 || sb[10] != 8 {
		return fmt.Errorf("superblock version %d with %d-byte offsets: not the version 2 or 3 with 8-byte offsets expected", sb[8], sb[9])
	}
	if got, want := lookup3.Sum(sb[:44]), binary.LittleEndian.Uint32(sb[44:]); got != want {
		return fmt.Errorf("superblock checksum %#x, computed %#x", want, got)
	}
	binary.LittleEndian.PutUint64(sb[28:], uint64(fi.Size()))
	binary.LittleEndian.PutUint32(sb[44:], lookup3.Sum(sb[:44]))
	_, err = f.WriteAt(sb[:], 0)
	return err
}
