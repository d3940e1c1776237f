package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"sync"

	"scpipe/ingest/internal/h5"
)

// h5Batch is about the number of entries a dense HDF5 matrix is read in at
// a time.
const h5Batch = 1 << 20

func isHDF5(path string) (bool, error) {
	ok, err := h5.IsHDF5(path)
	if err != nil {
		return false, fmt.Errorf("ingest: %w", err)
	}
	return ok, nil
}

// detectHDF5 tells 10x v3 (/matrix), 10x v2 (genome groups holding indptr)
// and AnnData (X, obs or an anndata encoding-type) apart.
func detectHDF5(path string) (Format, error) {
	f, err := h5.Open(path, 1) // the metadata only
	if err != nil {
		return FormatUnknown, fmt.Errorf("ingest: %w", err)
	}
	defer f.Close()
	return classifyHDF5(f)
}

func classifyHDF5(f *h5.File) (Format, error) {
	if enc, ok, _ := f.AttrString("/", "encoding-type"); ok && enc == "anndata" {
		return FormatH5AD, nil
	}
	if f.Exists("/obs") && f.Exists("/var") {
		return FormatH5AD, nil // anndata before 0.8 has no root encoding-type
	}
	if f.IsGroup("/matrix") && f.Exists("/matrix/indptr") {
		return FormatTenXH5V3, nil
	}
	if len(tenxGenomes(f)) > 0 {
		return FormatTenXH5V2, nil
	}
	if f.Exists("/X") || f.Exists("/obs") || f.Exists("/raw.X") {
		return FormatH5AD, nil
	}
	return FormatUnknown, fmt.Errorf("ingest: %s: HDF5 file is neither 10x (no /matrix or genome group with indptr) nor AnnData (no X, obs or encoding-type anndata)", f.Path())
}

// fileHasher hashes a file in a goroutine while the matrix is read through
// random access, so the manifest's SHA-256 needs no pass of its own over
// the file. Run starts it when the counting pass ends (startHash): the
// counting pass keeps both cores busy, the write pass, which also waits on
// the disk, about three quarters of them, so the hash (about 0.1 s of CPU
// per 150 MB here, reading a file just read, from the page cache) costs
// less wall time there (2e8 nonzeros: 2.63 → 2.54 s, see BENCHMARKS.md).
// result starts it if nothing has.
type fileHasher struct {
	path  string
	begin sync.Once // starts the goroutine, or marks a hash never started done
	stop  chan struct{}
	done  chan struct{}
	sum   string
	err   error
	once  sync.Once // closes stop
}

// hashBufs recycles the hashers' read buffers: the inputs of several
// samples are hashed one after another.
var hashBufs = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

func hashFile(path string) *fileHasher {
	return &fileHasher{path: path, stop: make(chan struct{}), done: make(chan struct{})}
}

// start starts hashing, once.
func (h *fileHasher) start() { h.begin.Do(func() { go h.run() }) }

func (h *fileHasher) run() {
	defer close(h.done)
	f, err := os.Open(h.path)
	if err != nil {
		h.err = fmt.Errorf("ingest: %w", err)
		return
	}
	defer f.Close()
	s := sha256.New()
	bp := hashBufs.Get().(*[]byte)
	defer hashBufs.Put(bp)
	buf := *bp
	for {
		select {
		case <-h.stop:
			h.err = h.stopped()
			return
		default:
		}
		n, err := f.Read(buf)
		s.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			h.err = fmt.Errorf("ingest: hashing %s: %w", h.path, err)
			return
		}
	}
	h.sum = hex.EncodeToString(s.Sum(nil))
}

// stopped is the error of a hash cancelled before it completed.
func (h *fileHasher) stopped() error { return fmt.Errorf("ingest: %s: hashing stopped", h.path) }

// result waits for the hash, starting it if need be.
func (h *fileHasher) result() (string, error) {
	h.start()
	<-h.done
	return h.sum, h.err
}

// cancel stops the hash and waits for the goroutine, if it was started.
func (h *fileHasher) cancel() {
	h.once.Do(func() { close(h.stop) })
	h.begin.Do(func() {
		h.err = h.stopped()
		close(h.done)
	})
	<-h.done
}

// compressed is a CSR or CSC matrix in an HDF5 group: indptr is held in
// memory (one int64 per row or column: O(cells + genes)), indices and data
// are streamed.
type compressed struct {
	file          string // for errors
	group         string
	data, indices *h5.Dataset
	indptr        []int64
	major, minor  int  // indptr has major+1 entries; indices are < minor
	majorIsCell   bool // the compressed axis is the cell axis
}

// openCompressed opens group's data, indices and indptr and checks them
// against each other and against the shape major × minor.
func openCompressed(f *h5.File, group string, major, minor int, majorIsCell bool, majorName string) (*compressed, error) {
	c := &compressed{file: f.Path(), group: group, major: major, minor: minor, majorIsCell: majorIsCell}
	var err error
	if c.data, err = f.Dataset(group + "/data"); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	if c.indices, err = f.Dataset(group + "/indices"); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	ip, err := f.Dataset(group + "/indptr")
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	for _, d := range []*h5.Dataset{c.data, c.indices, ip} {
		if len(d.Shape()) != 1 {
			return nil, fmt.Errorf("ingest: %s: %s has shape %v, want one dimension", c.file, d.Path(), d.Shape())
		}
	}
	if ip.Len() != int64(major)+1 {
		return nil, fmt.Errorf("ingest: %s: %s has %d entries but the shape's %d %s need %d: indptr inconsistent with shape",
			c.file, ip.Path(), ip.Len(), major, majorName, major+1)
	}
	c.indptr = make([]int64, ip.Len())
	if err := ip.ReadInt64(0, c.indptr); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	if c.indptr[0] != 0 {
		return nil, fmt.Errorf("ingest: %s: %s[0] = %d, want 0", c.file, ip.Path(), c.indptr[0])
	}
	for i := 1; i < len(c.indptr); i++ {
		if c.indptr[i] < c.indptr[i-1] {
			return nil, fmt.Errorf("ingest: %s: %s decreases at %d (%d after %d)", c.file, ip.Path(), i, c.indptr[i], c.indptr[i-1])
		}
	}
	nnz := c.indptr[major]
	if c.indices.Len() != nnz || c.data.Len() != nnz {
		return nil, fmt.Errorf("ingest: %s: %s ends at %d but %s has %d and %s has %d entries",
			c.file, ip.Path(), nnz, c.indices.Path(), c.indices.Len(), c.data.Path(), c.data.Len())
	}
	return c, nil
}

func (c *compressed) entries() int64 { return c.indptr[c.major] }

// scan streams the entries in storage order, a range at a time (see
// ranges) on the calling goroutine: the counting pass, which reads ranges
// on all cores (countRanges), is the only reader that needs more.
func (c *compressed) scan(ctx context.Context, fn func(*batch) error) error {
	n, open := c.ranges()
	read, err := open()
	if err != nil {
		return err
	}
	var b batch
	for r := range n {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := read(r, &b); err != nil {
			return err
		}
		if err := fn(&b); err != nil {
			return err
		}
	}
	return nil
}

// cellRuns appends to runs the cells of the n entries read from position
// start on, from indptr (the major axis is the cell axis).
func (c *compressed) cellRuns(runs []cellRun, start int64, n int) []cellRun {
	end := start + int64(n)
	// The last major whose entries start at or before start.
	maj := sort.Search(len(c.indptr), func(i int) bool { return c.indptr[i] > start }) - 1
	for ; ; maj++ {
		e := min(c.indptr[maj+1], end)
		if e > max(c.indptr[maj], start) {
			runs = append(runs, cellRun{cell: int32(maj), end: int32(e - start)})
		}
		if e == end {
			return runs
		}
	}
}

// orient checks the minor indices and values of b's entries, read from
// position start on, and, unless b lists its cells in runs, fills their
// major axis from indptr. It reports the first bad entry.
func (c *compressed) orient(b *batch, start int64) error {
	if b.runs != nil {
		return c.check(b.gene, b.val, start)
	}
	majorDst, minorSrc := b.cell, b.gene
	if !c.majorIsCell {
		majorDst, minorSrc = b.gene, b.cell
	}
	// The last major whose entries start at or before start: empty majors
	// before it are skipped, as a walk from 0 would.
	maj := sort.Search(len(c.indptr), func(i int) bool { return c.indptr[i] > start }) - 1
	for k, v := range b.val {
		pos := start + int64(k)
		for pos >= c.indptr[maj+1] {
			maj++
		}
		majorDst[k] = int32(maj)
		// One inlined comparison pair admits every count (it fails for
		// negatives, NaN and +Inf); badEntry then says what is wrong.
		if uint32(minorSrc[k]) >= uint32(c.minor) || !(v >= 0 && v <= math.MaxFloat64) {
			return c.badEntry(pos, minorSrc[k], v)
		}
	}
	return nil
}

// check checks the minor indices and values of entries read from position
// start on.
func (c *compressed) check(minor []int32, val []float64, start int64) error {
	val = val[:len(minor)]
	k := 0
	if useAVX2 && c.minor > 0 && checkEntriesAVX2(minor, val, uint32(c.minor)) {
		k = len(minor) &^ 7 // all good before; the rest is looked at below
	}
	for ; k < len(minor); k++ {
		if m, v := minor[k], val[k]; uint32(m) >= uint32(c.minor) || !(v >= 0 && v <= math.MaxFloat64) {
			return c.badEntry(start+int64(k), m, v)
		}
	}
	return nil
}

// badEntry describes what is wrong with the entry at pos, of minor index m
// and value v.
func (c *compressed) badEntry(pos int64, m int32, v float64) error {
	if uint32(m) >= uint32(c.minor) {
		return fmt.Errorf("ingest: %s: %s[%d] = %d out of range 0..%d", c.file, c.indices.Path(), pos, m, c.minor-1)
	}
	return fmt.Errorf("ingest: %s: %s[%d]: %w", c.file, c.data.Path(), pos, checkValue(v))
}
