package ingest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"scpipe/internal/directio"
	"scpipe/internal/outlock"
)

// A spill holds the entries the writing pass needs: those above the
// threshold among the kept feature types, recorded by the counting pass.
// Reading it back costs a few nanoseconds per entry, where a second scan of
// the input would inflate HDF5 chunks or re-parse (and gunzip) Matrix Market
// text again; and the input is read exactly once, so it cannot change
// between the passes. Its first frames, up to a fixed budget (spillMemory
// for Run), stay in memory: the spill of an input of up to about 2.5e8
// entries then never touches the device, and memory stays bounded whatever
// the input. The rest go to a file, written and read through a few frame
// buffers, around the page cache where the file system allows (see
// directio), so that they occupy neither the process's memory nor the
// cache.
//
// Layout of the file: a sequence of frames, each a little-endian uint32
// payload length, a uint32 CRC-32C of the payload, the payload and zeros up
// to a multiple of directio.Align (a goroutine of its own writes them; the
// writer keeps every frame's offset and length). A frame kept in memory is
// its payload alone. The payload is whole runs, each
//
//	zigzag uvarint  cell − previous run's cell (the first run of a frame: cell − 0)
//	uvarint         number of genes, k ≥ 1
//	k × uvarint         gapCode(gene − previous gene of the run) (the first: gene − 0)
//
// Runs follow the input's order. Sources that store cells contiguously (10x
// CSC, 10x Matrix Market, AnnData CSR) give one run per cell (or two, where
// a batch or range boundary splits it) with sorted genes, so a gene costs
// about one byte whenever genes are at least 1/128 dense (see gapBias); any
// other order is still correct, only larger.

// spillFrame is the payload a frame is cut at. A variable so that tests can
// cut many frames from small inputs.
var spillFrame = 1 << 20

// spillMemory is the budget of frame buffers Run's spill keeps in memory
// (see spillWriter): with the writing pass's cell blocks (blockBudget) and
// the counting workers' ranges it keeps an ingest well under 1 GiB.
const spillMemory = 256 << 20

// spillReaders is how many frames of a sorted spill are read at once.
const spillReaders = 4

// spillQueue is how many frames may wait for the writing goroutine: a
// direct write waits for the device, and the count pass, which hands over
// the frames, should not wait with it when the device is briefly slow.
const spillQueue = 8

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// spillWriter appends runs to a spill file.
type spillWriter struct {
	f       *os.File
	buf     []byte // the frame being filled: header room, then runs
	prev    int32  // cell of the last run in buf, 0 at a frame's start
	last    int32  // cell of the last run written, -1 before any
	entries int64  // genes recorded
	// sorted says every run's cell is ≥ the previous run's. Frames are cut
	// only between runs of different cells, so the frames of a sorted
	// spill hold disjoint cells and may be applied concurrently.
	sorted bool
	frames []frameAt // every frame flushed, in order
	size   int64     // bytes flushed to the file
	// memLeft is what remains of the budget of frame buffers kept in
	// memory: a frame whose buffer fits is kept, any other goes to the file.
	memLeft int

	// The writing goroutine takes padded frames from out and hands their
	// buffers back on spare; it sets failed and stops writing at the first
	// error, which it sends on werr once out is closed.
	out    chan []byte
	spare  chan []byte
	werr   chan error
	failed atomic.Bool
	err    error // from werr, once stopped
}

// frameAt locates a frame of the spill: in memory, or in the file.
type frameAt struct {
	off int64  // of its header in the file
	n   int    // payload bytes
	mem []byte // the payload, for a frame kept in memory (off unused)
}

// spillFrameCap is the capacity of a frame buffer: a full frame and the
// segment that overflows it, rounded up for direct I/O.
func spillFrameCap() int { return directio.RoundUp(8 + spillFrame + 64<<10) }

// createSpill creates a spill that keeps up to memory bytes of frame
// buffers in memory and the rest in a file beside the output, where the
// shard folder will be written, so that it is on the same file system. The
// file is created at once, so that an output folder that cannot be written
// fails before the counting pass. It is named after the output
// (.OUT.spill-<hex>, see outlock.TempFile), so that the next ingest into
// the same output removes the file a killed one left. Its frames go
// around the page cache (O_DIRECT) unless cached is set.
func createSpill(output string, memory int, cached bool) (*spillWriter, error) {
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(output)), 0o777); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	f, err := outlock.TempFile(output, "spill")
	if err != nil {
		return nil, fmt.Errorf("ingest: creating the temporary entry file: %w", err)
	}
	if !cached {
		directio.Set(f, true) // or through the page cache where refused
	}
	s := &spillWriter{
		f: f, buf: directio.Aligned(spillFrameCap())[:8], last: -1, sorted: true, memLeft: memory,
		out: make(chan []byte, spillQueue), spare: make(chan []byte, spillQueue+1), werr: make(chan error, 1),
	}
	go s.write()
	return s, nil
}

// write writes the frames sent on out, in order.
func (s *spillWriter) write() {
	var err error
	var off int64
	for b := range s.out {
		if err == nil {
			if err = directio.WriteAt(s.f, b, off); err != nil {
				err = fmt.Errorf("ingest: writing the temporary entry file %s: %w", s.f.Name(), err)
				s.failed.Store(true)
			}
		}
		off += int64(len(b))
		select {
		case s.spare <- b:
		default:
		}
	}
	s.werr <- err
}

// stop ends the writing goroutine, once all frames sent are written, and
// returns its error.
func (s *spillWriter) stop() error {
	if s.out != nil {
		close(s.out)
		s.err, s.out = <-s.werr, nil
	}
	return s.err
}

// addSegment appends the runs of g after those already recorded. Frames
// are cut only between runs of different cells, so a cell continued from
// one segment to the next stays in one frame: a full frame is cut before
// g, or, when g continues the last cell, after g's first run.
func (s *spillWriter) addSegment(g *spillSegment) error {
	if len(g.buf) == 0 {
		return nil
	}
	body, first := g.buf, g.first
	if first == s.last && len(s.buf) >= spillFrame && g.cut > 0 {
		s.appendRuns(body[:g.cut], first, first)
		body, first = body[g.cut:], g.second
	}
	if first != s.last {
		if len(s.buf) >= spillFrame {
			if err := s.flush(); err != nil {
				return err
			}
		}
		s.sorted = s.sorted && first > s.last
	}
	s.sorted = s.sorted && g.sorted
	s.appendRuns(body, first, g.last)
	s.entries += g.entries
	return nil
}

// appendRuns appends encoded runs from cell first to cell last, recoding
// the first run's cell relative to the frame's previous run.
func (s *spillWriter) appendRuns(body []byte, first, last int32) {
	_, m := binary.Varint(body)
	s.buf = binary.AppendVarint(s.buf, int64(first)-int64(s.prev))
	s.buf = append(s.buf, body[m:]...)
	s.prev, s.last = last, last
}

// spillSegment holds runs encoded in the spill's run format, the first
// run's cell relative to 0, for spillWriter.addSegment: workers encode
// the runs of their ranges of a batch concurrently, and the segments are
// appended in range order.
type spillSegment struct {
	buf         []byte
	first, last int32 // cells of the first and last runs (when buf holds any)
	entries     int64 // genes recorded
	sorted      bool  // no run's cell is below the previous run's
	// cut is the offset in buf of the first run whose cell differs from
	// the run before it (0: none), and second its cell: where a frame may
	// be cut.
	cut    int
	second int32
}

func (g *spillSegment) reset() {
	g.buf, g.entries, g.sorted, g.cut = g.buf[:0], 0, true, 0
}

// addRun records genes (at least one) of cell.
func (g *spillSegment) addRun(cell int32, genes []int32) {
	n := g.openRun(len(genes))
	out := g.buf[:cap(g.buf)]
	prev := int32(0)
	for _, gene := range genes {
		n = putGap(out, n, gene-prev)
		prev = gene
	}
	g.closeRun(cell, len(genes), n)
}

// addCounted records those genes gene[i] of cell whose value val[i] is
// above thr, above the entry's ambient limit where amb is not nil, and whose
// type is kept (all are if allKept), counting each in cpg, and returns how
// many it recorded: the counting pass's loop, which so encodes each gene as
// it counts it. Where the CPU has AVX2, all types are kept and no ambient
// limit applies, addCountedAVX2 does the loop's work, and this loop what it
// leaves.
func (g *spillSegment) addCounted(cell int32, val []float64, gene []int32, thr float64, typeKept []bool, allKept bool, amb *ambientLevels, cpg []int32) int {
	n := g.openRun(len(val))
	out := g.buf[:cap(g.buf)]
	gene = gene[:len(val)]
	r := gapRun{n: n}
	if allKept && useAVX2 && amb == nil {
		i := addCountedAVX2(val, gene, thr, cpg, out, &r)
		val, gene = val[i:], gene[i:]
	}
	var scale float64
	var total []float64
	if amb != nil {
		scale, total = amb.cellScale[cell], amb.totals(cell)
	}
	prev, k, n := r.prev, r.k, r.n
	for i, v := range val {
		if x := gene[i]; v > thr && typeKept[x] && (amb == nil || v > scale*total[x]) {
			cpg[x]++
			n = putGap(out, n, x-prev)
			prev = x
			k++
		}
	}
	if k > 0 {
		g.closeRun(cell, k, n)
	}
	return k
}

// gapRun is what addCountedAVX2 carries from one entry to the next: the
// last gene recorded, the bytes of out written and the genes recorded.
type gapRun struct {
	prev int32
	n, k int
}

// runHeaderMax is the longest run header: the cell's gap and the count.
const runHeaderMax = 2 * binary.MaxVarintLen32

// openRun makes room for a run of up to m genes, so that they are stored
// without growing the buffer, and returns where its genes start: after
// room for the longest header, which closeRun fills.
func (g *spillSegment) openRun(m int) int {
	g.buf = slices.Grow(g.buf, runHeaderMax+binary.MaxVarintLen32*m)
	return len(g.buf) + runHeaderMax
}

// gapBias moves the gaps that one byte holds from [−64, 63], zigzag's
// window, to [0, 127]. Runs of sorted genes, the common case, only rise:
// at the 4–5% density of single-cell data one gap in 13 to 25 passes 63,
// which cost a second byte and, in the assembly loops, sent the whole
// group of eight gaps holding it the slow way (nearly half the groups);
// fewer than one in 150 passes 127.
const gapBias = 64

// gapCode is the spill's code of the gap d between two genes: d − gapBias
// zigzag-encoded, in 32 bits and wrapping, so that every int32 gap has a
// code and gapOf inverts it. Codes below 0x7f are the rising gaps of one
// byte (1 to 127), 0x7f a repeated gene.
func gapCode(d int32) uint32 {
	x := d - gapBias
	return uint32(x<<1) ^ uint32(x>>31)
}

// gapOf returns the gap whose code is z.
func gapOf(z uint32) int32 { return (int32(z>>1) ^ -int32(z&1)) + gapBias }

// putGap stores the gap d between two genes at out[n:], as the uvarint of
// its code, and returns the position after it.
func putGap(out []byte, n int, d int32) int {
	z := gapCode(d)
	if z < 0x80 {
		out[n] = byte(z)
		return n + 1
	}
	return n + binary.PutUvarint(out[n:], uint64(z))
}

// closeRun ends the run opened by openRun, of k ≥ 1 genes of cell encoded
// up to n: its header goes before the genes, which move down to meet it.
func (g *spillSegment) closeRun(cell int32, k, n int) {
	start := len(g.buf)
	prevCell := int64(0)
	if start == 0 {
		g.first = cell
	} else {
		prevCell = int64(g.last)
		g.sorted = g.sorted && cell >= g.last
		if g.cut == 0 && cell != g.last {
			g.cut, g.second = start, cell
		}
	}
	var h [runHeaderMax]byte
	hn := binary.PutVarint(h[:], int64(cell)-prevCell)
	hn += binary.PutUvarint(h[hn:], uint64(k))
	out := g.buf[:n]
	copy(out[start+hn:], out[start+runHeaderMax:])
	copy(out[start:], h[:hn])
	g.buf, g.last = out[:n-runHeaderMax+hn], cell
	g.entries += int64(k)
}

// flush keeps the buffered runs in memory as one frame, where the budget
// allows, or hands them to the writing goroutine.
func (s *spillWriter) flush() error {
	if s.failed.Load() {
		return s.stop()
	}
	n := len(s.buf) - 8
	if n == 0 {
		return nil
	}
	if cap(s.buf) <= s.memLeft {
		s.memLeft -= cap(s.buf)
		s.frames = append(s.frames, frameAt{n: n, mem: s.buf[8:]})
		s.buf, s.prev = directio.Aligned(spillFrameCap())[:8], 0
		return nil
	}
	binary.LittleEndian.PutUint32(s.buf, uint32(n))
	binary.LittleEndian.PutUint32(s.buf[4:], crc32.Checksum(s.buf[8:], castagnoli))
	padded := directio.RoundUp(len(s.buf))
	frame := s.buf
	if cap(frame) < padded || !directio.IsAligned(frame) { // grown by a long segment
		frame = directio.Aligned(padded)
		copy(frame, s.buf)
	}
	clear(frame[len(s.buf):padded])
	s.out <- frame[:padded]
	s.frames = append(s.frames, frameAt{off: s.size, n: n})
	s.size += int64(padded)
	select {
	case b := <-s.spare:
		s.buf = b[:8]
	default:
		s.buf = directio.Aligned(spillFrameCap())[:8]
	}
	s.prev = 0
	return nil
}

// finish flushes the last frame and waits until every frame is written.
func (s *spillWriter) finish() error {
	if err := s.flush(); err != nil {
		return err
	}
	return s.stop()
}

// remove stops writing, closes and deletes the file.
func (s *spillWriter) remove() {
	s.stop()
	s.f.Close()
	os.Remove(s.f.Name())
}

// readFrame returns frame i's payload: the one in memory, with buf, or
// the one read into buf (reallocated when too small or unaligned), with
// the buffer.
func (s *spillWriter) readFrame(i int, buf []byte) (whole, payload []byte, err error) {
	at := s.frames[i]
	if at.mem != nil {
		return buf, at.mem, nil
	}
	size := directio.RoundUp(8 + at.n)
	if cap(buf) < size || !directio.IsAligned(buf) {
		buf = directio.Aligned(max(size, spillFrameCap()))
	}
	buf = buf[:size]
	if err := directio.ReadAt(s.f, buf, at.off); err != nil {
		return buf, nil, fmt.Errorf("ingest: reading the temporary entry file %s: %w", s.f.Name(), err)
	}
	payload = buf[8 : 8+at.n]
	switch {
	case int(binary.LittleEndian.Uint32(buf)) != at.n:
		return buf, nil, fmt.Errorf("ingest: %s: %w: frame %d length changed", s.f.Name(), errSpill, i)
	case crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(buf[4:]):
		return buf, nil, fmt.Errorf("ingest: %s: %w: frame checksum mismatch", s.f.Name(), errSpill)
	}
	return buf, payload, nil
}

// errSpill marks a spill file that does not read back as written.
var errSpill = errors.New("temporary entry file corrupt")

// readSpill hands every run of the spill to a runFunc, checking cells
// against the shape (runGenes checks genes), and returns the number of
// genes read. It stops when ctx is done. It reads a spill once: frames
// held in memory are released as they are decoded, for the memory the
// caller builds from them. When the spill is sorted, frames
// are decoded on workers goroutines and the runFuncs are called concurrently for
// runs of different cells (newFn gives each worker, with its decoder, its
// own), and written (when not nil) is told, in increasing order and never
// concurrently, each cell such that every run of it and of the cells
// before it has been through a runFunc; otherwise one runFunc sees every
// run in order and written is not called.
func readSpill(ctx context.Context, s *spillWriter, cells, genes, workers int, newFn func(d *spillDecoder) runFunc, written func(cell int32)) (int64, error) {
	if !s.sorted {
		workers, written = 1, nil
	}
	// Sorted frames may arrive in any order, so several readers keep the
	// device busy: a direct read waits for it.
	readers := 1
	if s.sorted {
		readers = spillReaders
	}
	type frame struct {
		seq          int
		buf, payload []byte
	}
	g, ctx := errgroup.WithContext(ctx)
	frames := make(chan frame, workers)
	free := make(chan []byte, 2*workers+readers)
	for range cap(free) {
		free <- nil
	}
	prefix := framePrefix{pending: map[int]int32{}, fn: written}
	totals := make([]int64, workers)
	for w := range workers {
		d := &spillDecoder{name: s.f.Name(), cells: cells, genes: genes, run: make([]int32, 0, 1024)}
		fn := newFn(d)
		g.Go(func() error {
			for f := range frames {
				n, last, err := d.runs(f.payload, fn)
				totals[w] += n
				if err != nil {
					return err
				}
				s.frames[f.seq].mem = nil
				prefix.done(f.seq, last)
				free <- f.buf
			}
			return nil
		})
	}
	var next atomic.Int64 // the next frame to read
	var reading sync.WaitGroup
	for range readers {
		reading.Add(1)
		g.Go(func() error {
			defer reading.Done()
			for {
				var buf []byte
				select {
				case buf = <-free:
				case <-ctx.Done():
					return ctx.Err()
				}
				seq := int(next.Add(1) - 1)
				if seq >= len(s.frames) {
					return nil
				}
				buf, payload, err := s.readFrame(seq, buf)
				if err != nil {
					return err
				}
				select {
				case frames <- frame{seq, buf, payload}:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		})
	}
	go func() {
		reading.Wait()
		close(frames)
	}()
	err := g.Wait()
	var total int64
	for _, n := range totals {
		total += n
	}
	return total, err
}

// framePrefix tells fn the last cell of the longest run of frames 0, 1, …
// that have all been decoded, whenever that run grows. Frames of a sorted
// spill hold increasing, disjoint cells, so every cell up to that one is
// then complete.
type framePrefix struct {
	mu      sync.Mutex
	next    int              // the first frame not yet done
	pending map[int]int32    // last cells of frames done after a gap
	fn      func(cell int32) // nil: nothing to tell
}

// done records that frame seq, whose last run was of cell last, is decoded.
func (p *framePrefix) done(seq int, last int32) {
	if p.fn == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if seq != p.next {
		p.pending[seq] = last
		return
	}
	for {
		p.next++
		next, ok := p.pending[p.next]
		if !ok {
			break
		}
		delete(p.pending, p.next)
		last = next
	}
	p.fn(last)
}

// spillDecoder decodes frames of one spill.
type spillDecoder struct {
	name         string
	cells, genes int
	run          []int32
}

// A runFunc takes a run of k genes of cell as the spill encodes them, at
// the start of enc, and returns the bytes they take: it may decode them
// itself or have the decoder list them (spillDecoder.list).
type runFunc func(cell int32, enc []byte, k int) (int, error)

// runs calls fn for each run of frame and returns the genes read and the
// cell of the last run.
func (d *spillDecoder) runs(frame []byte, fn runFunc) (int64, int32, error) {
	var total int64
	cell := int64(0)
	for p := 0; p < len(frame); {
		dc, m := binary.Varint(frame[p:])
		p += max(m, 0)
		k, m2 := binary.Uvarint(frame[p:])
		p += max(m2, 0)
		cell += dc
		if m <= 0 || m2 <= 0 || k == 0 || k > uint64(len(frame)) || uint64(cell) >= uint64(d.cells) {
			return total, -1, d.corrupt("bad run header")
		}
		n, err := fn(int32(cell), frame[p:], int(k))
		if err != nil {
			return total, -1, err
		}
		p += n
		total += int64(k)
	}
	return total, int32(cell), nil
}

// list decodes the k genes encoded at the start of enc, the first gap
// from base, into a slice reused by the next call, and returns the bytes
// they take.
func (d *spillDecoder) list(enc []byte, k int, base int32) ([]int32, int, error) {
	run := slices.Grow(d.run[:0], k)[:k]
	d.run = run
	n, err := d.runGenes(enc, base, run)
	return run, n, err
}

// corrupt reports the spill file corrupt, saying what was found.
func (d *spillDecoder) corrupt(what string) error {
	return fmt.Errorf("ingest: %s: %w: %s", d.name, errSpill, what)
}

// runGenes decodes the genes of run from their gaps in frame, the first
// from base, and returns the bytes they take.
func (d *spillDecoder) runGenes(frame []byte, base int32, run []int32) (int, error) {
	g, p := int64(base), 0
	for i := range run {
		// Most gaps fit one byte: decode those inline.
		var z uint64
		if p < len(frame) && frame[p] < 0x80 {
			z = uint64(frame[p])
			p++
		} else {
			var m int
			if z, m = binary.Uvarint(frame[p:]); m <= 0 || z > math.MaxUint32 {
				return p, d.corrupt("truncated run")
			}
			p += m
		}
		g += int64(gapOf(uint32(z)))
		if uint64(g) >= uint64(d.genes) {
			return p, d.corrupt(fmt.Sprintf("gene %d out of range", g))
		}
		run[i] = int32(g)
	}
	return p, nil
}
