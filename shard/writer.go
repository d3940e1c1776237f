package shard

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/edsrzf/mmap-go"
	"golang.org/x/sync/errgroup"
)

// CreateOptions controls Create.
type CreateOptions struct {
	// Force replaces an existing destination at Commit instead of refusing.
	Force bool
}

// Writer builds a shard folder. Bits are set by cell into row blocks that are
// created at full size in a temporary folder beside the destination and
// memory-mapped read-write, so they may be set in any order and the Go heap
// does not grow with the number of ones; Commit derives everything else and
// renames the folder into place.
//
// Concurrency: every row of X is padded to whole words, so two rows never
// share a word. Set, SetRow, SetRowWords and their SetObserved… twins may
// therefore be called from several goroutines at once provided no two
// goroutines write the same cell (of the same plane) concurrently. Commit and Abort must not run
// concurrently with anything else.
type Writer struct {
	dst, tmp string
	force    bool
	layout   Layout
	x, mask  []mmap.MMap // one mapping per cell block; nil once unmapped
	xw, mw   [][]uint64  // the same mappings as words
	state    writerState
	resident residentCounter
}

type writerState int

const (
	writerOpen writerState = iota
	writerCommitted
	writerAborted
)

// Create starts a shard at dst. It refuses an existing dst unless opts.Force
// (the replacement then happens at Commit). The layout's Cells and Genes are
// required; RowsPerBlock and GenesPerTile may be 0 for the automatic choice.
func Create(dst string, layout Layout, opts CreateOptions) (*Writer, error) {
	l, err := layout.resolve()
	if err != nil {
		return nil, fmt.Errorf("shard: create %s: %w", dst, err)
	}
	if err := checkDst(dst, opts.Force); err != nil {
		return nil, err
	}
	dst = filepath.Clean(dst)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return nil, fmt.Errorf("shard: create %s: %w", dst, err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), filepath.Base(dst)+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("shard: create %s: %w", dst, err)
	}
	w := &Writer{dst: dst, tmp: tmp, force: opts.Force, layout: l}
	w.x, w.xw, err = w.mapBlocks(KindX)
	if err == nil && l.Masked {
		w.mask, w.mw, err = w.mapBlocks(KindMask)
	}
	if err != nil {
		w.Abort()
		return nil, err
	}
	return w, nil
}

// checkDst refuses an existing dst unless force.
func checkDst(dst string, force bool) error {
	_, err := os.Lstat(dst)
	switch {
	case err == nil && !force:
		return fmt.Errorf("shard: %s already exists; use --force to replace it", dst)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("shard: %w", err)
	}
	return nil
}

// mapBlocks creates and maps the row-block files of one plane.
func (w *Writer) mapBlocks(kind string) ([]mmap.MMap, [][]uint64, error) {
	maps := make([]mmap.MMap, w.layout.CellBlocks)
	ws := make([][]uint64, w.layout.CellBlocks)
	for b := range maps {
		m, err := mapFile(filepath.Join(w.tmp, blockName(kind, b)), w.layout.blockBytes(b), true)
		if err != nil {
			return maps, ws, err
		}
		maps[b], ws[b] = m, words(m)
	}
	return maps, ws, nil
}

// Layout returns the resolved layout (automatic sizes filled in).
func (w *Writer) Layout() Layout { return w.layout }

// row returns the words of cell's row in one plane. It panics when cell is
// out of range or the writer is no longer open.
func (w *Writer) row(plane [][]uint64, cell int) []uint64 {
	if w.state != writerOpen {
		panic("shard: Writer used after Commit or Abort")
	}
	if uint(cell) >= uint(w.layout.Cells) {
		panic(fmt.Sprintf("shard: cell %d out of range [0, %d)", cell, w.layout.Cells))
	}
	b := cell / w.layout.RowsPerBlock
	off := (cell - b*w.layout.RowsPerBlock) * w.layout.WordsPerRow
	return plane[b][off : off+w.layout.WordsPerRow : off+w.layout.WordsPerRow]
}

func (w *Writer) setRow(plane [][]uint64, cell int, genes []int32) {
	row := w.row(plane, cell)
	w.wrote(row)
	for _, g := range genes {
		if uint32(g) >= uint32(w.layout.Genes) {
			panic(fmt.Sprintf("shard: cell %d: gene %d out of range [0, %d)", cell, g, w.layout.Genes))
		}
		row[g>>6] |= 1 << (uint(g) & 63)
	}
}

// SetRow sets the bits (cell, g) of X for every g in genes (duplicates are
// harmless). It panics if an index is out of range: callers validate input
// indices and report them with file positions before calling.
func (w *Writer) SetRow(cell int, genes []int32) { w.setRow(w.xw, cell, genes) }

// Set sets bit (cell, gene) of X. It panics if an index is out of range.
func (w *Writer) Set(cell, gene int) {
	if uint(gene) >= uint(w.layout.Genes) {
		panic(fmt.Sprintf("shard: cell %d: gene %d out of range [0, %d)", cell, gene, w.layout.Genes))
	}
	w.row(w.xw, cell)[gene>>6] |= 1 << (uint(gene) & 63)
}

// SetObservedRow marks (cell, g) observed for every g in genes. It panics if
// the layout is not Masked or an index is out of range.
func (w *Writer) SetObservedRow(cell int, genes []int32) {
	w.mustMask()
	w.setRow(w.mw, cell, genes)
}

// SetObserved marks (cell, gene) observed. It panics if the layout is not
// Masked or an index is out of range.
func (w *Writer) SetObserved(cell, gene int) {
	w.mustMask()
	if uint(gene) >= uint(w.layout.Genes) {
		panic(fmt.Sprintf("shard: cell %d: gene %d out of range [0, %d)", cell, gene, w.layout.Genes))
	}
	w.row(w.mw, cell)[gene>>6] |= 1 << (uint(gene) & 63)
}

func (w *Writer) mustMask() {
	if !w.layout.Masked {
		panic("shard: SetObserved on a layout without Masked")
	}
}

// Commit finishes the shard: it fills m's computed fields (FormatVersion,
// Cells, Genes, Ones, Density, Observed, Layout, side-file names, Checksum,
// Files, and Created when empty), builds the Xᵀ tiles from the row blocks one
// cell block at a time in parallel, checksums and fsyncs every file, writes
// genes.tsv, barcodes.tsv (each only when annotations are given) and
// manifest.json, and renames the temporary folder to the destination. With
// Force an existing destination is moved aside, replaced and then deleted.
//
// GeneIDs, GeneNames and FeatureTypes must each be empty or hold one entry
// per gene (names and feature types need ids); Barcodes must be empty or hold
// one entry per cell; no entry may contain a tab or line break.
//
// On any error the temporary folder is removed and the destination is left as
// it was; the Writer is then unusable.
func (w *Writer) Commit(m Manifest) error {
	if w.state != writerOpen {
		return fmt.Errorf("shard: %s: Commit after Commit or Abort", w.dst)
	}
	if err := w.commit(&m); err != nil {
		w.Abort()
		return err
	}
	w.state = writerCommitted
	return nil
}

func (w *Writer) commit(m *Manifest) error {
	l := w.layout
	genes, barcodes, err := w.encodeSideFiles(m)
	if err != nil {
		return err
	}
	type result struct {
		ones, observed int64
		files          []File
	}
	res := make([]result, l.CellBlocks)
	var g errgroup.Group
	workers := runtime.GOMAXPROCS(0)
	g.SetLimit(workers)
	// One tile buffer per concurrent block, dropped after the commit.
	bufs := make(chan []byte, workers)
	for range workers {
		bufs <- nil
	}
	for b := 0; b < l.CellBlocks; b++ {
		g.Go(func() error {
			buf := <-bufs
			defer func() { bufs <- buf }()
			r := &res[b]
			var err error
			r.ones, r.files, err = w.finishBlock(b, KindX, KindXT, w.x, r.files, &buf)
			if err == nil && l.Masked {
				r.observed, r.files, err = w.finishBlock(b, KindMask, KindMaskT, w.mask, r.files, &buf)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	m.FormatVersion = FormatVersion
	m.Cells, m.Genes, m.Layout = l.Cells, l.Genes, l
	m.Ones, m.Observed, m.Files = 0, 0, nil
	for _, r := range res {
		m.Ones += r.ones
		m.Observed += r.observed
		m.Files = append(m.Files, r.files...)
	}
	m.Density = float64(m.Ones) / (float64(l.Cells) * float64(l.Genes))
	m.Checksum = ChecksumAlgorithm
	if m.Created == "" {
		m.Created = time.Now().UTC().Format(time.RFC3339)
	}
	m.GenesFile, m.GeneColumns, m.BarcodesFile = "", nil, ""
	if genes != nil {
		crc, err := writeFileAtomic(w.tmp, GenesName, genes)
		if err != nil {
			return err
		}
		m.GenesFile, m.GeneColumns = GenesName, geneColumns(m)
		m.Files = append(m.Files, File{Name: GenesName, Kind: KindGenes, Bytes: int64(len(genes)), CRC32C: crcHex(crc)})
	}
	if barcodes != nil {
		crc, err := writeFileAtomic(w.tmp, BarcodesName, barcodes)
		if err != nil {
			return err
		}
		m.BarcodesFile = BarcodesName
		m.Files = append(m.Files, File{Name: BarcodesName, Kind: KindBarcodes, Bytes: int64(len(barcodes)), CRC32C: crcHex(crc)})
	}
	if err := m.validate(); err != nil {
		return fmt.Errorf("shard: %s: internal error: manifest fails validation: %w", w.dst, err)
	}
	js, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("shard: %s: encoding manifest: %w", w.dst, err)
	}
	if _, err := writeFileAtomic(w.tmp, ManifestName, append(js, '\n')); err != nil {
		return err
	}
	if err := syncPath(w.tmp); err != nil {
		return err
	}
	return w.install()
}

// geneColumns lists the columns genes.tsv holds for m's annotations.
func geneColumns(m *Manifest) []string {
	cols := []string{ColumnID}
	if len(m.GeneNames) > 0 {
		cols = append(cols, ColumnName)
	}
	if len(m.FeatureTypes) > 0 {
		cols = append(cols, ColumnFeatureType)
	}
	return cols
}

// encodeSideFiles validates the annotations and renders genes.tsv and
// barcodes.tsv (nil when there is nothing to store).
func (w *Writer) encodeSideFiles(m *Manifest) (genes, barcodes []byte, err error) {
	l := w.layout
	for _, c := range []struct {
		name string
		s    []string
		want int
	}{
		{"GeneIDs", m.GeneIDs, l.Genes},
		{"GeneNames", m.GeneNames, l.Genes},
		{"FeatureTypes", m.FeatureTypes, l.Genes},
		{"Barcodes", m.Barcodes, l.Cells},
	} {
		if len(c.s) != 0 && len(c.s) != c.want {
			return nil, nil, fmt.Errorf("shard: %s: manifest has %d %s, want %d or none", w.dst, len(c.s), c.name, c.want)
		}
	}
	if len(m.GeneIDs) == 0 && (len(m.GeneNames) > 0 || len(m.FeatureTypes) > 0) {
		return nil, nil, fmt.Errorf("shard: %s: gene names or feature types given without gene ids", w.dst)
	}
	if len(m.GeneIDs) > 0 {
		cols := [][]string{m.GeneIDs}
		if len(m.GeneNames) > 0 {
			cols = append(cols, m.GeneNames)
		}
		if len(m.FeatureTypes) > 0 {
			cols = append(cols, m.FeatureTypes)
		}
		if genes, err = encodeTSV(GenesName, l.Genes, cols...); err != nil {
			return nil, nil, err
		}
	}
	if len(m.Barcodes) > 0 {
		if barcodes, err = encodeTSV(BarcodesName, l.Cells, m.Barcodes); err != nil {
			return nil, nil, err
		}
	}
	return genes, barcodes, nil
}

// finishBlock transposes cell block b of one plane into its tiles, counts its
// ones, and checksums, flushes, unmaps and fsyncs the block and its tiles. It
// appends the files' entries (block first, then tiles in order) to files.
// Tiles are transposed into *buf (grown as needed) and written with
// write(2): a buffer reused from tile to tile costs no page faults, where a
// fresh mapping of each new file faulted in every page, zero-filled first.
func (w *Writer) finishBlock(b int, kind, kindT string, maps []mmap.MMap, files []File, buf *[]byte) (int64, []File, error) {
	l := w.layout
	src := words(maps[b])
	var ones int64
	for _, x := range src {
		ones += int64(bits.OnesCount64(x))
	}
	rows := l.Block(b).Len()
	tiles := make([]File, 0, l.GeneTiles)
	for t := 0; t < l.GeneTiles; t++ {
		name := tileName(kindT, b, t)
		size := l.tileBytes(b, t)
		if int64(cap(*buf)) < size {
			*buf = make([]byte, size)
		}
		tile := (*buf)[:size]
		clear(tile)
		transposeTile(words(tile), src, rows, l.WordsPerRow, l.Tile(t))
		crc := crc32.Checksum(tile, castagnoli)
		if err := writeSynced(filepath.Join(w.tmp, name), tile); err != nil {
			return 0, nil, err
		}
		tiles = append(tiles, File{Name: name, Kind: kindT, Block: b, Tile: t, Bytes: size, CRC32C: crcHex(crc)})
	}
	name := blockName(kind, b)
	crc := crc32.Checksum(maps[b], castagnoli)
	err := unmapSync(filepath.Join(w.tmp, name), maps[b])
	maps[b] = nil
	if err != nil {
		return 0, nil, err
	}
	files = append(files, File{Name: name, Kind: kind, Block: b, Bytes: l.blockBytes(b), CRC32C: crcHex(crc)})
	return ones, append(files, tiles...), nil
}

// unmapSync writes a read-write mapping back, unmaps it and fsyncs its file.
func unmapSync(path string, mm mmap.MMap) error {
	if err := mm.Flush(); err != nil {
		mm.Unmap()
		return fmt.Errorf("shard: %s: msync: %w", path, err)
	}
	if err := mm.Unmap(); err != nil {
		return fmt.Errorf("shard: %s: munmap: %w", path, err)
	}
	return syncPath(path)
}

// install renames the finished temporary folder to the destination,
// replacing an existing one only with Force.
func (w *Writer) install() error {
	if err := checkDst(w.dst, w.force); err != nil {
		return err
	}
	var old string
	if _, err := os.Lstat(w.dst); err == nil {
		old = w.dst + ".old-" + randomSuffix()
		if err := os.Rename(w.dst, old); err != nil {
			return fmt.Errorf("shard: moving %s aside: %w", w.dst, err)
		}
	}
	if err := os.Rename(w.tmp, w.dst); err != nil {
		if old != "" {
			os.Rename(old, w.dst)
		}
		return fmt.Errorf("shard: renaming %s to %s: %w", w.tmp, w.dst, err)
	}
	w.tmp = ""
	if err := syncPath(filepath.Dir(w.dst)); err != nil {
		return err
	}
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("shard: %s replaced, but removing the old copy %s failed: %w", w.dst, old, err)
		}
	}
	return nil
}

// Abort discards the shard being written: it unmaps the blocks and removes
// the temporary folder. It is a no-op after a successful Commit or a previous
// Abort, so it is safe to defer.
func (w *Writer) Abort() error {
	if w.state == writerCommitted || w.state == writerAborted {
		return nil
	}
	w.state = writerAborted
	var first error
	for _, maps := range [][]mmap.MMap{w.x, w.mask} {
		for i, m := range maps {
			if m != nil {
				if err := m.Unmap(); err != nil && first == nil {
					first = fmt.Errorf("shard: %s: munmap: %w", w.tmp, err)
				}
				maps[i] = nil
			}
		}
	}
	w.xw, w.mw = nil, nil
	if w.tmp != "" {
		if err := os.RemoveAll(w.tmp); err != nil && first == nil {
			first = fmt.Errorf("shard: removing %s: %w", w.tmp, err)
		}
		w.tmp = ""
	}
	return first
}
