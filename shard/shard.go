package shard

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"

	"github.com/edsrzf/mmap-go"
	"golang.org/x/sync/errgroup"

	"scpipe/internal/infile"
)

// Shard is an open, memory-mapped shard folder. Its methods other than Close
// are safe for concurrent use.
type Shard struct {
	dir      string
	m        *Manifest
	maps     map[string]mmap.MMap // data files by name
	x, xt    *Matrix
	mask, mt *Matrix
	// blocks are the cell blocks mapped: all (Open) or a range
	// (OpenBlocks).
	blocks Range
}

// Open reads and validates dir/manifest.json, checks that every listed file
// exists with its stated size, loads the genes' annotations (genes.tsv; the
// barcodes are read by Barcodes) and maps the data files read-only.
// Checksums are not read: call Verify for that. Errors about the folder's
// contents wrap errFormat and name the file and the problem.
func Open(dir string) (*Shard, error) { return open(dir, 0, -1) }

// OpenVerified opens dir (Open) and checks every one of its checksums on
// up to workers goroutines (Verify), for a reader that must not trust a
// changed bit.
func OpenVerified(ctx context.Context, dir string, workers int) (*Shard, error) {
	s, err := Open(dir)
	if err != nil {
		return nil, err
	}
	if err := s.Verify(ctx, workers); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// OpenBlocks is Open that maps the data files of cell blocks first …
// last−1 only (of every plane, X's blocks and their Xᵀ tiles): a process
// that works on those cells (a rank of scpipe fit --mpi) maps nothing of
// the others. The matrices keep their full shapes; reading a row or
// segment of another block panics, and Verify refuses.
func OpenBlocks(dir string, first, last int) (*Shard, error) {
	if first < 0 || last <= first {
		return nil, fmt.Errorf("shard: %s: cell blocks %d … %d: want a non-empty range", dir, first, last-1)
	}
	return open(dir, first, last)
}

// open opens dir mapping cell blocks first … last−1 (last −1: all).
func open(dir string, first, last int) (*Shard, error) {
	if !littleEndian() {
		return nil, fmt.Errorf("shard: %s: this host is big-endian; the format stores little-endian words", dir)
	}
	mpath := filepath.Join(dir, ManifestName)
	data, err := infile.ReadFile(mpath)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s: missing (is %s a shard folder?)", errFormat, mpath, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("shard: %w", err)
	}
	m, err := parseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, dir)
	}
	for _, f := range m.Files {
		p := filepath.Join(dir, f.Name)
		fi, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s: listed in %s but missing", errFormat, p, ManifestName)
		}
		if err != nil {
			return nil, fmt.Errorf("shard: %w", err)
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%w: %s: not a regular file", errFormat, p)
		}
		if fi.Size() != f.Bytes {
			return nil, fmt.Errorf("%w: %s: %d bytes, %s says %d (truncated or overwritten?)", errFormat, p, fi.Size(), ManifestName, f.Bytes)
		}
	}
	if err := m.loadSideFiles(dir); err != nil {
		return nil, err
	}
	if last < 0 {
		last = m.Layout.CellBlocks
	}
	if last > m.Layout.CellBlocks {
		return nil, fmt.Errorf("shard: %s has %d cell blocks, not the %d asked for", dir, m.Layout.CellBlocks, last)
	}
	s := &Shard{dir: dir, m: m, maps: make(map[string]mmap.MMap), blocks: Range{first, last}}
	if err := s.mapAll(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// mapAll maps every data file and assembles the matrices.
func (s *Shard) mapAll() error {
	l := s.m.Layout
	plane := func(kind, kindT string) (*Matrix, *Matrix, error) {
		blocks := make([][]uint64, l.CellBlocks)
		tiles := make([][][]uint64, l.CellBlocks)
		get := func(name string, size int64) ([]uint64, error) {
			mm, err := mapFile(filepath.Join(s.dir, name), size, false)
			if err != nil {
				return nil, err
			}
			s.maps[name] = mm
			return words(mm), nil
		}
		var err error
		for b := range tiles {
			tiles[b] = make([][]uint64, l.GeneTiles) // nil tiles: blocks not mapped
		}
		for b := s.blocks.Lo; b < s.blocks.Hi; b++ {
			if blocks[b], err = get(blockName(kind, b), l.blockBytes(b)); err != nil {
				return nil, nil, err
			}
			for t := range tiles[b] {
				if tiles[b][t], err = get(tileName(kindT, b, t), l.tileBytes(b, t)); err != nil {
					return nil, nil, err
				}
			}
		}
		return rowMajor(l, blocks), colMajor(l, tiles), nil
	}
	var err error
	if s.x, s.xt, err = plane(KindX, KindXT); err != nil {
		return err
	}
	if l.Masked {
		s.mask, s.mt, err = plane(KindMask, KindMaskT)
	}
	return err
}

// loadSideFiles reads genes.tsv into m. barcodes.tsv is read on demand
// (Shard.Barcodes): a million barcodes take 50 MB of memory that a fit
// needs only when it writes its cells' table, and each rank of an MPI fit
// would hold them all.
func (m *Manifest) loadSideFiles(dir string) error {
	if m.GenesFile != "" {
		cols, err := readSideFile(dir, m.GenesFile, m.Genes, len(m.GeneColumns))
		if err != nil {
			return err
		}
		for j, c := range m.GeneColumns {
			switch c {
			case columnID:
				m.GeneIDs = cols[j]
			case columnName:
				m.GeneNames = cols[j]
			case columnFeatureType:
				m.FeatureTypes = cols[j]
			}
		}
	}
	return nil
}

// readSideFile reads the n rows of ncol columns of the side file name.
func readSideFile(dir, name string, n, ncol int) ([][]string, error) {
	p := filepath.Join(dir, name)
	f, err := infile.Open(p)
	if err != nil {
		return nil, fmt.Errorf("shard: %w", err)
	}
	defer f.Close()
	return decodeTSV(p, f, n, ncol)
}

// Barcodes reads the cells' barcodes, one per cell, or returns nil when
// the shards store none.
func (s *Shard) Barcodes() ([]string, error) {
	if s.m.BarcodesFile == "" {
		return nil, nil
	}
	cols, err := readSideFile(s.dir, s.m.BarcodesFile, s.m.Cells, 1)
	if err != nil {
		return nil, err
	}
	return cols[0], nil
}

// Dir returns the folder the shard was opened from.
func (s *Shard) Dir() string { return s.dir }

// Manifest returns the manifest, with the genes' annotations loaded (not
// the barcodes: Barcodes). It must not be modified.
func (s *Shard) Manifest() *Manifest { return s.m }

// X returns the cells × genes matrix (one segment).
func (s *Shard) X() *Matrix { return s.x }

// XT returns the genes × cells matrix Xᵀ, with one segment per cell block.
func (s *Shard) XT() *Matrix { return s.xt }

// Mask returns the cells × genes observed mask, or nil when the shard is not
// masked (every entry observed).
func (s *Shard) Mask() *Matrix { return s.mask }

// MaskT returns the transposed observed mask, or nil when the shard is not
// masked.
func (s *Shard) MaskT() *Matrix { return s.mt }

// ObservedRow writes the observed entries of cell n into dst (a row's
// words): the mask's row, or every entry when the shard is not masked.
func (s *Shard) ObservedRow(n int, dst []uint64) {
	if s.mask != nil {
		copy(dst, s.mask.Segment(n, 0))
		return
	}
	for i := range dst {
		dst[i] = ^uint64(0)
	}
	if g := s.m.Genes % 64; g != 0 {
		dst[len(dst)-1] = 1<<g - 1
	}
}

// CellBlocks returns the cell range of every cell block. Block b of X and
// segment b of Xᵀ cover the same cells, so a worker that owns a range of
// blocks reads only its own files in both orientations.
func (s *Shard) CellBlocks() []Range {
	l := s.m.Layout
	r := make([]Range, l.CellBlocks)
	for b := range r {
		r[b] = l.Block(b)
	}
	return r
}

// Verify recomputes the CRC-32C of every file, on up to workers
// goroutines (0: GOMAXPROCS), and checks that padding bits are zero,
// returning the first problem found (wrapping errFormat and naming the
// file) or ctx's error.
func (s *Shard) Verify(ctx context.Context, workers int) error {
	if s.blocks.Len() != s.m.Layout.CellBlocks {
		return fmt.Errorf("shard: %s: Verify needs every cell block mapped (Open), not blocks %d … %d (OpenBlocks)", s.dir, s.blocks.Lo, s.blocks.Hi-1)
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(goroutines(workers))
	for _, f := range s.m.Files {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			p := filepath.Join(s.dir, f.Name)
			crc, err := s.checksum(ctx, f.Name)
			if err != nil {
				return err
			}
			if got := crcHex(crc); got != f.CRC32C {
				return fmt.Errorf("%w: %s: crc32c %s, %s says %s (file corrupted)", errFormat, p, got, ManifestName, f.CRC32C)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, m := range []*Matrix{s.x, s.xt, s.mask, s.mt} {
		if m == nil {
			continue
		}
		if err := checkPadding(m); err != nil {
			return fmt.Errorf("%w: %s: %w", errFormat, s.dir, err)
		}
	}
	return nil
}

// checksum computes the CRC-32C of a mapped data file or reads a side file,
// in chunks so that cancellation is prompt.
func (s *Shard) checksum(ctx context.Context, name string) (uint32, error) {
	const chunk = 4 << 20
	var crc uint32
	if mm, ok := s.maps[name]; ok {
		for off := 0; off < len(mm); off += chunk {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			crc = crc32.Update(crc, castagnoli, mm[off:min(off+chunk, len(mm))])
		}
		return crc, nil
	}
	p := filepath.Join(s.dir, name)
	f, err := infile.Open(p)
	if err != nil {
		return 0, fmt.Errorf("shard: %w", err)
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	if _, err := io.Copy(h, f); err != nil {
		return 0, fmt.Errorf("shard: reading %s: %w", p, err)
	}
	return h.Sum32(), nil
}

// checkPadding reports a set bit past the last column of any segment row.
func checkPadding(m *Matrix) error {
	for s := range len(m.bounds) - 1 {
		width := m.bounds[s+1] - m.bounds[s]
		if width%64 == 0 {
			continue
		}
		pad := ^uint64(0) << (width % 64)
		for i := range m.rows {
			seg := m.Segment(i, s)
			if w := seg[len(seg)-1] & pad; w != 0 {
				return fmt.Errorf("row %d segment %d: padding bit %d set", i, s, m.bounds[s]+(len(seg)-1)*64+bits.TrailingZeros64(w))
			}
		}
	}
	return nil
}

// Close unmaps every file. Slices obtained from the matrices must not be used
// afterwards. Close is idempotent.
func (s *Shard) Close() error {
	var first error
	for name, mm := range s.maps {
		if err := mm.Unmap(); err != nil && first == nil {
			first = fmt.Errorf("shard: %s: munmap: %w", filepath.Join(s.dir, name), err)
		}
		delete(s.maps, name)
	}
	s.x, s.xt, s.mask, s.mt = nil, nil, nil, nil
	return first
}

// goroutines is a Workers setting as a count: n, or GOMAXPROCS when n is
// 0, the default of a caller that names none.
func goroutines(n int) int {
	if n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}
