package shard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/edsrzf/mmap-go"
	"golang.org/x/sync/errgroup"

	"scpipe/internal/directio"
	"scpipe/internal/outlock"
)

// CreateOptions controls Create.
type CreateOptions struct {
	// Force replaces an existing destination at Commit instead of refusing.
	Force bool
	// Cached writes the files through the page cache instead of around it
	// with O_DIRECT (where the file system takes it): for a shard that is
	// read as soon as it is written, such as a fit's hold-out mask, which
	// would otherwise be read back from the disk, and on network file
	// systems such as NFS, where each direct write waits for the server
	// (the CLI's --no-direct-io).
	Cached bool
	// Workers bounds the goroutines that finish cell blocks at Commit and
	// the transposed tiles in flight; 0 means GOMAXPROCS.
	Workers int
	// FreeBytes tells the bytes free on the file system an output at path
	// goes to (ok false: it cannot tell); nil means outlock.FreeBytes.
	// Create refuses a layout whose data files need more (ErrNoRoom).
	// Tests pass their own, so that no verdict depends on the machine's
	// free disk.
	FreeBytes func(path string) (n int64, ok bool)
}

// ErrNoRoom is wrapped by Create's refusal of a shard folder whose data
// files need more than the free space of the file system it goes to.
var ErrNoRoom = errors.New("not enough free space")

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
	cached   bool // see CreateOptions.Cached
	workers  int  // see CreateOptions.Workers
	layout   Layout
	x, mask  []mmap.MMap // one mapping per cell block; nil once unmapped
	xw, mw   [][]uint64  // the same mappings as words; nil once unmapped
	mapMu    sync.Mutex  // held while unmapping a block, and by dropResident
	syncMu   sync.Mutex  // guards unsynced
	unsynced []string    // files written but not yet fsynced; Commit syncs them
	blocks   []finished  // per cell block, filled by finish
	tiles    chan []byte // tile buffers, reused across blocks; nil after Commit
	state    writerState
	resident residentCounter
}

// finished is what finishing a cell block yields for the manifest.
type finished struct {
	done           bool
	ones, observed int64
	files          []File
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
	if err := outlock.Refuse(dst, opts.Force); err != nil {
		return nil, fmt.Errorf("shard: %w", err)
	}
	dst = filepath.Clean(dst)
	if err := checkRoom(dst, l, opts.FreeBytes); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o777); err != nil {
		return nil, fmt.Errorf("shard: create %s: %w", dst, err)
	}
	// Named after dst (outlock.TempDir), so that the next writer of dst
	// holding its lock removes the folder a killed process left.
	tmp, err := outlock.TempDir(dst)
	if err != nil {
		return nil, fmt.Errorf("shard: create %s: %w", dst, err)
	}
	w := &Writer{dst: dst, tmp: tmp, force: opts.Force, cached: opts.Cached, layout: l, blocks: make([]finished, l.CellBlocks), workers: goroutines(opts.Workers)}
	w.tiles = make(chan []byte, w.workers)
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

// checkRoom refuses a shard folder of layout l at dst whose data files
// need more than free says its file system holds: they are allocated
// whole at Create (4.3 MB of input, 600 cells and a million empty
// barcodes, once made 1.6 GB of shards). The manifest and the side files
// are left to the writes' own ENOSPC.
func checkRoom(dst string, l Layout, free func(string) (int64, bool)) error {
	if free == nil {
		free = outlock.FreeBytes
	}
	need, err := l.DataBytes()
	if err != nil {
		return fmt.Errorf("shard: create %s: %w", dst, err)
	}
	have, ok := free(filepath.Dir(dst))
	if !ok || need <= have {
		return nil
	}
	return fmt.Errorf("shard: create %s: %w: %d cells × %d genes need %s of data files, and its file system has %s free",
		dst, ErrNoRoom, l.Cells, l.Genes, HumanBytes(need), HumanBytes(have))
}

// HumanBytes renders n bytes with a binary unit ("512 B", "1.6 GiB"), as
// messages and `scpipe info` give the sizes of shards.
func HumanBytes(n int64) string {
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
	if plane[b] == nil {
		panic(fmt.Sprintf("shard: cell %d written after FinishBlock(%d)", cell, b))
	}
	off := (cell - b*w.layout.RowsPerBlock) * w.layout.WordsPerRow
	return plane[b][off : off+w.layout.WordsPerRow : off+w.layout.WordsPerRow]
}

// setRow sets bits (cell, g) of one plane and returns how many were not
// set before.
func (w *Writer) setRow(plane [][]uint64, cell int, genes []int32) int {
	row := w.row(plane, cell)
	w.wrote(row)
	n := 0
	for _, g := range genes {
		if uint32(g) >= uint32(w.layout.Genes) {
			panic(fmt.Sprintf("shard: cell %d: gene %d out of range [0, %d)", cell, g, w.layout.Genes))
		}
		old := row[g>>6]
		row[g>>6] = old | 1<<(uint(g)&63)
		n += int(^old >> (uint(g) & 63) & 1)
	}
	return n
}

// SetRow sets the bits (cell, g) of X for every g in genes and returns how
// many of them were not set before, so that a caller can tell input that
// stores an entry twice. It panics if an index is out of range: callers
// validate input indices and report them with file positions before
// calling.
func (w *Writer) SetRow(cell int, genes []int32) int { return w.setRow(w.xw, cell, genes) }

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
// it was; the Writer is then unusable. Once ctx is done Commit stops, with
// an error that wraps ctx's, and installs nothing: finishing the blocks
// and syncing gigabytes of files takes seconds.
func (w *Writer) Commit(ctx context.Context, m Manifest) error {
	if w.state != writerOpen {
		return fmt.Errorf("shard: %s: Commit after Commit or Abort", w.dst)
	}
	if err := w.commit(ctx, &m); err != nil {
		w.Abort()
		return err
	}
	w.state = writerCommitted
	return nil
}

// Ones returns the bits set in the cell blocks finished so far: after
// Commit, the shard's ones as its manifest records them.
func (w *Writer) Ones() int64 {
	var n int64
	for _, r := range w.blocks {
		n += r.ones
	}
	return n
}

func (w *Writer) commit(ctx context.Context, m *Manifest) error {
	stopped := func() error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("shard: %s: %w", w.dst, err)
		}
		return nil
	}
	l := w.layout
	genes, barcodes, err := w.encodeSideFiles(m)
	if err != nil {
		return err
	}
	var g errgroup.Group
	g.SetLimit(w.workers)
	for b := range w.blocks {
		if !w.blocks[b].done {
			g.Go(func() error {
				if err := stopped(); err != nil {
					return err
				}
				return w.FinishBlock(b)
			})
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}
	w.tiles = nil
	m.FormatVersion = FormatVersion
	m.Cells, m.Genes, m.Layout = l.Cells, l.Genes, l
	m.Ones, m.Observed, m.Files = 0, 0, nil
	for _, r := range w.blocks {
		m.Ones += r.ones
		m.Observed += r.observed
		m.Files = append(m.Files, r.files...)
	}
	m.Density = float64(m.Ones) / (float64(l.Cells) * float64(l.Genes))
	m.Checksum = checksumAlgorithm
	if m.Created == "" {
		m.Created = time.Now().UTC().Format(time.RFC3339)
	}
	m.GenesFile, m.GeneColumns, m.BarcodesFile = "", nil, ""
	if genes != nil {
		crc, err := w.writeSide(GenesName, genes)
		if err != nil {
			return err
		}
		m.GenesFile, m.GeneColumns = GenesName, geneColumns(m)
		m.Files = append(m.Files, File{Name: GenesName, Kind: KindGenes, Bytes: int64(len(genes)), CRC32C: crcHex(crc)})
	}
	if barcodes != nil {
		crc, err := w.writeSide(barcodesName, barcodes)
		if err != nil {
			return err
		}
		m.BarcodesFile = barcodesName
		m.Files = append(m.Files, File{Name: barcodesName, Kind: KindBarcodes, Bytes: int64(len(barcodes)), CRC32C: crcHex(crc)})
	}
	if err := m.validate(); err != nil {
		return fmt.Errorf("shard: %s: internal error: manifest fails validation: %w", w.dst, err)
	}
	js, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("shard: %s: encoding manifest: %w", w.dst, err)
	}
	if _, err := w.writeSide(ManifestName, append(js, '\n')); err != nil {
		return err
	}
	// One round of fsyncs for every file, then Install syncs the folder:
	// nothing is visible at dst before its rename.
	if err := stopped(); err != nil {
		return err
	}
	if err := w.syncWritten(); err != nil {
		return err
	}
	if err := stopped(); err != nil {
		return err
	}
	if err := outlock.Install(w.tmp, w.dst, w.force); err != nil {
		return fmt.Errorf("shard: %s: %w", w.dst, err)
	}
	w.tmp = ""
	return nil
}

// writeSide writes a side file of the shard (see writeFile) and returns
// its CRC-32C.
func (w *Writer) writeSide(name string, data []byte) (uint32, error) {
	if err := w.writeFile(filepath.Join(w.tmp, name), data, true); err != nil {
		return 0, err
	}
	return crc32.Checksum(data, castagnoli), nil
}

// geneColumns lists the columns genes.tsv holds for m's annotations.
func geneColumns(m *Manifest) []string {
	cols := []string{columnID}
	if len(m.GeneNames) > 0 {
		cols = append(cols, columnName)
	}
	if len(m.FeatureTypes) > 0 {
		cols = append(cols, columnFeatureType)
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
		if barcodes, err = encodeTSV(barcodesName, l.Cells, m.Barcodes); err != nil {
			return nil, nil, err
		}
	}
	return genes, barcodes, nil
}

// FinishBlock completes cell block b before Commit, so that a caller
// writing blocks in order can overlap their completion with the writing of
// later blocks: it builds the block's Xᵀ tiles (and the mask's), counts and
// checksums, unmaps the block and writes its files (Commit fsyncs them
// all, after their writeback was started here). Nothing may write
// to the block's cells afterwards (that panics), nor while FinishBlock runs;
// FinishBlock may run concurrently for different blocks and with writes to
// other blocks. Commit finishes the blocks not finished before it;
// finishing a block twice is an error. After an error the Writer must be
// aborted.
func (w *Writer) FinishBlock(b int) error {
	return w.finish(b, nil, nil)
}

// WriteBlock is FinishBlock for a caller that built cell block b's rows
// itself: x holds them (Layout().Block(b).Len() rows of WordsPerRow words,
// padding bits zero), replacing whatever was set in the block, and mask
// the observed mask's likewise (nil unless the layout is Masked). Building
// rows in a reused buffer and writing them whole spares the page fault per
// 4 KiB that setting bits in the mapped file takes (about five times the
// cost of writing the same bytes into recycled page-cache pages).
func (w *Writer) WriteBlock(b int, x, mask []uint64) error {
	switch {
	case x == nil:
		return fmt.Errorf("shard: %s: WriteBlock(%d): no rows", w.dst, b)
	case (mask != nil) != w.layout.Masked:
		return fmt.Errorf("shard: %s: WriteBlock(%d): mask given %v, layout masked %v", w.dst, b, mask != nil, w.layout.Masked)
	}
	for _, words := range [][]uint64{x, mask} {
		if words != nil {
			if err := w.checkBlockWords(b, words); err != nil {
				return err
			}
		}
	}
	return w.finish(b, x, mask)
}

// checkBlockWords checks the length and zero padding of rows for block b.
func (w *Writer) checkBlockWords(b int, words []uint64) error {
	l := w.layout
	if b >= 0 && b < l.CellBlocks && len(words) != l.Block(b).Len()*l.WordsPerRow {
		return fmt.Errorf("shard: %s: WriteBlock(%d): %d words, want %d rows of %d", w.dst, b, len(words), l.Block(b).Len(), l.WordsPerRow)
	}
	if tail := l.Genes % 64; tail != 0 {
		for i := l.WordsPerRow - 1; i < len(words); i += l.WordsPerRow {
			if words[i]>>tail != 0 {
				return fmt.Errorf("shard: %s: WriteBlock(%d): padding bits set in row %d", w.dst, b, i/l.WordsPerRow)
			}
		}
	}
	return nil
}

// finish finishes block b from its mappings, or from x and mask when x is
// not nil.
func (w *Writer) finish(b int, x, mask []uint64) error {
	if w.state != writerOpen {
		return fmt.Errorf("shard: %s: block finished after Commit or Abort", w.dst)
	}
	if b < 0 || b >= len(w.blocks) {
		return fmt.Errorf("shard: %s: block %d: no such block (%d blocks)", w.dst, b, len(w.blocks))
	}
	r := &w.blocks[b]
	if r.done {
		return fmt.Errorf("shard: %s: block %d finished twice", w.dst, b)
	}
	var buf []byte
	select {
	case buf = <-w.tiles:
	default:
	}
	var err error
	r.ones, r.files, err = w.finishPlane(b, KindX, KindXT, w.x, w.xw, x, nil, &buf)
	if err == nil && w.layout.Masked {
		r.observed, r.files, err = w.finishPlane(b, KindMask, KindMaskT, w.mask, w.mw, mask, r.files, &buf)
	}
	r.done = err == nil
	select {
	case w.tiles <- buf:
	default: // more blocks than cores finishing at once
	}
	return err
}

// finishPlane transposes cell block b of one plane (src, or the mapping
// when src is nil) into its tiles, counts its ones, checksums and writes
// the block and its tiles, and unmaps the block. It appends the files'
// entries (block first, then tiles in order) to files. Tiles are transposed
// into *buf (grown as needed, page-aligned) and written with write(2),
// directly where the file system allows (see writeStarted): a buffer
// reused from tile to tile costs no page faults, where a fresh mapping of
// each new file faulted in every page, zero-filled first.
func (w *Writer) finishPlane(b int, kind, kindT string, maps []mmap.MMap, ws [][]uint64, src []uint64, files []File, buf *[]byte) (int64, []File, error) {
	l := w.layout
	name := blockName(kind, b)
	path := filepath.Join(w.tmp, name)
	mapped := src == nil
	var written chan error
	var crc uint32
	if mapped {
		src = ws[b]
	} else {
		// Written from the caller's rows while the tiles are transposed:
		// a direct write waits for the device, not the CPU.
		data := wordBytes(src)
		crc = crc32.Checksum(data, castagnoli)
		written = make(chan error, 1)
		go func() {
			// The mapped file was never touched or is replaced whole:
			// drop the mapping and write the file anew.
			err := w.unmap(path, maps, ws, b)
			if err == nil {
				if err = os.Remove(path); err == nil {
					err = w.writeFile(path, data, true)
				}
			}
			written <- err
		}()
	}
	var ones int64
	for _, x := range src {
		ones += int64(bits.OnesCount64(x))
	}
	rows := l.Block(b).Len()
	tiles := make([]File, 0, l.GeneTiles)
	var err error
	for t := 0; t < l.GeneTiles && err == nil; t++ {
		name := tileName(kindT, b, t)
		size := l.tileBytes(b, t)
		if int64(cap(*buf)) < size {
			*buf = directio.Aligned(int(size))
		}
		tile := (*buf)[:size]
		clear(tile)
		transposeTile(words(tile), src, rows, l.WordsPerRow, l.Tile(t))
		crc := crc32.Checksum(tile, castagnoli)
		err = w.writeFile(filepath.Join(w.tmp, name), tile, true)
		tiles = append(tiles, File{Name: name, Kind: kindT, Block: b, Tile: t, Bytes: size, CRC32C: crcHex(crc)})
	}
	if mapped {
		if err == nil {
			crc = crc32.Checksum(maps[b], castagnoli)
			err = w.unmapWrite(path, maps, ws, b)
		}
	} else if werr := <-written; err == nil {
		err = werr
	}
	if err != nil {
		return 0, nil, err
	}
	files = append(files, File{Name: name, Kind: kind, Block: b, Bytes: l.blockBytes(b), CRC32C: crcHex(crc)})
	return ones, append(files, tiles...), nil
}

// writeFile writes data to path (see writeStarted), recording it for
// Commit's fsync when its writeback was only started.
func (w *Writer) writeFile(path string, data []byte, create bool) error {
	unsynced, err := writeStarted(path, data, create, !w.cached)
	if unsynced {
		w.syncMu.Lock()
		w.unsynced = append(w.unsynced, path)
		w.syncMu.Unlock()
	}
	return err
}

// syncWritten fsyncs the files whose writeback writeFile only started, on
// several goroutines: each mostly waits for the disk.
func (w *Writer) syncWritten() error {
	var g errgroup.Group
	g.SetLimit(8)
	for _, path := range w.unsynced {
		g.Go(func() error {
			if err := outlock.Sync(path); err != nil {
				return fmt.Errorf("shard: %w", err)
			}
			return nil
		})
	}
	w.unsynced = nil
	return g.Wait()
}

// unmapWrite unmaps block b's read-write mapping, whose dirty pages stay in
// the page cache, and starts writing its file back.
func (w *Writer) unmapWrite(path string, maps []mmap.MMap, ws [][]uint64, b int) error {
	if err := w.unmap(path, maps, ws, b); err != nil {
		return err
	}
	return w.writeFile(path, nil, false)
}

// unmap unmaps block b of one plane. It holds mapMu, so that dropResident
// never advises an address range that is no longer this mapping.
func (w *Writer) unmap(path string, maps []mmap.MMap, ws [][]uint64, b int) error {
	w.mapMu.Lock()
	defer w.mapMu.Unlock()
	err := maps[b].Unmap()
	maps[b], ws[b] = nil, nil
	if err != nil {
		return fmt.Errorf("shard: %s: munmap: %w", path, err)
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
