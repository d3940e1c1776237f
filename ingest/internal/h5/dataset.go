package h5

import (
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"
)

// NumKind says how a dataset's numbers are stored.
type NumKind int

// The numeric kinds.
const (
	Int   NumKind = iota // signed integer
	Uint                 // unsigned integer
	Float                // IEEE floating point
)

func (k NumKind) String() string {
	switch k {
	case Int:
		return "int"
	case Uint:
		return "uint"
	case Float:
		return "float"
	}
	return fmt.Sprintf("NumKind(%d)", int(k))
}

// Dataset is an open HDF5 dataset: its shape, element type, storage layout
// and (for chunked storage) its chunk index, read once on first use.
//
// A Dataset may be used by one goroutine at a time (it caches the last decoded
// chunk); open one Dataset per goroutine to read concurrently. Large reads
// decode their chunks in parallel internally.
type Dataset struct {
	f        *File
	path     string
	shape    []int64
	n        int64
	typ      *dtype
	elemSize int
	layout   *layout
	filters  []filter
	fill     []byte

	index    *chunkGrid
	chunkLen int64 // elements per chunk

	// serial decodes every read on the calling goroutine (see View).
	serial bool

	// Cache of the last decoded chunk (chunked layout only), left
	// byte-shuffled when cacheShuffled, with the planes cacheZero known
	// to be zero (see unfilter).
	cacheK        int64
	cacheBuf      []byte
	cacheShuffled bool
	cacheZero     uint64
}

// planesFunc receives a run of a chunk left byte-shuffled: elements from …
// from+count−1 of the n elements of raw, byte j of element i at raw[j*n+i],
// destined for positions dstOff… of the caller's output. The planes set
// in zero are zero and were never written: raw holds garbage there.
type planesFunc func(dstOff int64, raw []byte, n, from, count int, zero uint64) error

// View returns a reader of the same dataset for one goroutine of several
// reading it at once: it has its own chunk cache and decodes each read on
// the calling goroutine (the callers are the parallelism). Views of a
// dataset, unlike the dataset itself, may be used concurrently; View itself
// may not, as it builds the chunk index the views share.
func (d *Dataset) View() (*Dataset, error) {
	if d.layout.class == layoutChunked && d.index == nil {
		idx, err := d.buildIndex()
		if err != nil {
			return nil, d.errorf("%w", err)
		}
		d.index = idx
	}
	v := *d
	v.serial, v.cacheK, v.cacheBuf = true, -1, nil
	return &v, nil
}

// Release hands the view's chunk cache back for other views to reuse,
// for a view that will not read again (or will decode its next chunk
// afresh): dropping views one after another, as a reader of several files
// does, would otherwise leave a chunk's buffer to the collector each time.
func (d *Dataset) Release() {
	if d.cacheBuf != nil {
		putBuf(d.cacheBuf)
	}
	d.cacheK, d.cacheBuf = -1, nil
}

// ChunkLen returns the elements per chunk of a chunked dataset, 0 for any
// other layout.
func (d *Dataset) ChunkLen() int64 {
	if d.layout.class != layoutChunked {
		return 0
	}
	return d.chunkLen
}

// Path returns the dataset's path in the file.
func (d *Dataset) Path() string { return d.path }

// Shape returns the dataset's dimensions (empty for a scalar). The caller must
// not modify the returned slice.
func (d *Dataset) Shape() []int64 { return d.shape }

// Len returns the number of elements, the product of Shape (1 for a scalar).
func (d *Dataset) Len() int64 { return d.n }

// Kind returns the numeric kind of the elements. It is meaningful only for
// numeric datasets (Dataset returns an error for others).
func (d *Dataset) Kind() NumKind {
	t, _ := d.typ.numeric()
	switch {
	case t.class == classFloat:
		return Float
	case t.signed:
		return Int
	}
	return Uint
}

// ElemSize returns the size of one stored element in bytes.
func (d *Dataset) ElemSize() int { return d.elemSize }

// errorf wraps err with the file and dataset names.
func (d *Dataset) errorf(format string, args ...any) error {
	return fmt.Errorf("h5: %s: dataset %s: "+format, append([]any{d.f.path, d.path}, args...)...)
}

// maxInflate bounds how many times larger than its stored bytes data can
// decode to: DEFLATE's limit (a 258-byte match coded in two bits); LZF's
// is 88 and the other filters do not expand. No dataset can hold more than
// maxInflate times the file's size but as never-written fill values, which
// this package does not materialise beyond that bound either.
const maxInflate = 1032

// maxChunk is HDF5's limit on the size of a chunk, 4 GiB less a byte.
const maxChunk = 1<<32 - 1

// openDataset parses a dataset's object header messages, and checks every
// size they give against the file's size before anything is allocated
// for them.
func (f *File) openDataset(path string, msgs []message) (*Dataset, error) {
	d := &Dataset{f: f, path: path, cacheK: -1}
	var haveSpace, haveType bool
	var err error
	for _, m := range msgs {
		if m.flags&0x02 != 0 && (m.typ == msgDatatype || m.typ == msgDataspace || m.typ == msgFilters || m.typ == msgLayout) {
			return nil, d.errorf("shared object header message (type %d) is not supported", m.typ)
		}
		switch m.typ {
		case msgDataspace:
			if d.shape, err = parseDataspace(m.data, f.m.lengthSize); err != nil {
				return nil, d.errorf("%w", err)
			}
			haveSpace = true
		case msgDatatype:
			if d.typ, _, err = parseDatatype(m.data); err != nil {
				return nil, d.errorf("%w", err)
			}
			haveType = true
		case msgFill:
			if d.fill, err = parseFill(m.data, true); err != nil {
				return nil, d.errorf("%w", err)
			}
		case msgFillOld:
			if d.fill == nil {
				if d.fill, err = parseFill(m.data, false); err != nil {
					return nil, d.errorf("%w", err)
				}
			}
		case msgFilters:
			if d.filters, err = parseFilters(m.data); err != nil {
				return nil, d.errorf("%w", err)
			}
		}
	}
	if !haveSpace || !haveType {
		return nil, d.errorf("%w: object header lacks a dataspace or datatype message", errFormat)
	}
	if d.elemSize = d.typ.size; d.elemSize < 1 {
		return nil, d.errorf("%w: elements of %d bytes", errFormat, d.elemSize)
	}
	limit := maxInflate * min(f.m.size, 1<<52) / uint64(d.elemSize) // elements the file can hold
	var ok bool
	if d.n, ok = elements(d.shape, limit); !ok {
		return nil, d.errorf("%w: shape %v of %d-byte elements is more than a file of %d bytes can hold",
			errFormat, d.shape, d.elemSize, f.m.size)
	}
	for _, m := range msgs {
		// The layout is parsed last: its chunk dimensions depend on the rank.
		if m.typ == msgLayout {
			if d.layout, err = f.m.parseLayout(m.data, len(d.shape)); err != nil {
				return nil, d.errorf("%w", err)
			}
		}
	}
	if d.layout == nil {
		return nil, d.errorf("%w: object header lacks a layout message", errFormat)
	}
	if err := checkFilters(d.filters, d.elemSize); err != nil {
		return nil, d.errorf("%w", err)
	}
	if d.fill != nil && len(d.fill) != d.elemSize {
		d.fill = nil // a fill value of another size is not usable; libhdf5 would convert
	}
	if err := d.checkStorage(limit); err != nil {
		return nil, d.errorf("%w", err)
	}
	return d, nil
}

// elements returns the product of dims, false when it exceeds limit.
func elements(dims []int64, limit uint64) (int64, bool) {
	if slices.Contains(dims, 0) {
		return 0, true
	}
	n := uint64(1)
	for _, x := range dims {
		if uint64(x) > limit/n {
			return 0, false
		}
		n *= uint64(x)
	}
	return int64(n), true
}

// checkStorage checks the layout against the shape and the file: the
// contiguous bytes lie in the file, compact storage holds every element,
// and a chunk is within HDF5's limit (and, beyond one dimension, where
// fill-value chunks are made whole, within what the file can hold).
func (d *Dataset) checkStorage(limit uint64) error {
	es := uint64(d.elemSize)
	switch d.layout.class {
	case layoutChunked:
		n, ok := elements(nonZero(d.layout.chunk), maxChunk/es)
		if !ok {
			return fmt.Errorf("%w: chunks of %v elements of %d bytes exceed HDF5's limit of 4 GiB", errFormat, d.layout.chunk, es)
		}
		if len(d.shape) > 1 && uint64(n) > limit {
			return fmt.Errorf("%w: chunks of %v elements of %d bytes are more than a file of %d bytes can hold",
				errFormat, d.layout.chunk, es, d.f.m.size)
		}
		d.chunkLen = n
	case layoutContiguous:
		bytes := uint64(d.n) * es
		if d.layout.size == 0 {
			d.layout.size = bytes
		}
		if undefinedAddr(d.layout.addr, d.f.m.offsetSize) {
			return nil // never written: fill values
		}
		if d.layout.size < bytes {
			return fmt.Errorf("%w: contiguous storage of %d bytes for %d elements of %d bytes", errFormat, d.layout.size, d.n, es)
		}
		if err := d.f.m.inFile(d.layout.addr, bytes); err != nil {
			return fmt.Errorf("%w: contiguous storage: %w", errFormat, err)
		}
	case layoutCompact:
		if uint64(len(d.layout.compact)) < uint64(d.n)*es {
			return fmt.Errorf("%w: compact storage of %d bytes for %d elements", errFormat, len(d.layout.compact), d.n)
		}
	}
	return nil
}

// nonZero converts chunk dimensions (at least 1 each, see parseLayout)
// for elements.
func nonZero(chunk []uint64) []int64 {
	out := make([]int64, len(chunk))
	for i, c := range chunk {
		out[i] = int64(min(c, 1<<62))
	}
	return out
}

// parallelMin is the number of elements below which a read is decoded on the
// calling goroutine.
const parallelMin = 1 << 16

// visit calls fn(dstOff, raw) for consecutive runs of raw element bytes that
// together cover elements [start, start+n) in row-major order; run raw holds
// len(raw)/ElemSize elements destined for positions dstOff… of the caller's
// output. When planes is not nil, runs of byte-shuffled chunks of a 1-D
// dataset go to planes instead, still shuffled. fn and planes may be called
// concurrently for disjoint runs, and must not retain raw.
func (d *Dataset) visit(start, n int64, fn func(dstOff int64, raw []byte) error, planes planesFunc) error {
	if start < 0 || n < 0 || start+n > d.n {
		return d.errorf("range [%d, %d) outside the %d elements", start, start+n, d.n)
	}
	if n == 0 {
		return nil
	}
	es := int64(d.elemSize)
	switch d.layout.class {
	case layoutCompact:
		return fn(0, d.layout.compact[start*es:(start+n)*es])
	case layoutContiguous:
		if undefinedAddr(d.layout.addr, d.f.m.offsetSize) {
			return d.fillRuns(n, fn)
		}
		const block = 1 << 20
		per := max(block/es, 1)
		buf := getBuf(int(min(n, per) * es))
		defer putBuf(buf)
		for done := int64(0); done < n; {
			k := min(n-done, per)
			b := buf[:k*es]
			if _, err := d.f.m.r.ReadAt(b, int64(d.layout.addr)+(start+done)*es); err != nil {
				return d.errorf("reading contiguous data at element %d: %w", start+done, err)
			}
			if err := fn(done, b); err != nil {
				return err
			}
			done += k
		}
		return nil
	}
	if d.index == nil {
		idx, err := d.buildIndex()
		if err != nil {
			return d.errorf("%w", err)
		}
		d.index = idx
	}
	if len(d.shape) == 1 {
		return d.visit1D(start, n, fn, planes)
	}
	return d.visitND(start, n, fn)
}

// fillRuns reports n elements of the fill value.
func (d *Dataset) fillRuns(n int64, fn func(int64, []byte) error) error {
	es := int64(d.elemSize)
	per := max((1<<16)/es, 1)
	buf := make([]byte, min(n, per)*es)
	if d.fill != nil {
		for i := int64(0); i < int64(len(buf)); i += es {
			copy(buf[i:], d.fill)
		}
	}
	for done := int64(0); done < n; done += per {
		k := min(n-done, per)
		if err := fn(done, buf[:k*es]); err != nil {
			return err
		}
	}
	return nil
}

// chunk returns the decoded bytes of chunk k and whether the caller owns them
// (and must putBuf them). With planes, a final byte shuffle may be left
// undone, which shuffled reports (see unfilter). The cached chunk is
// returned unowned; visit1D replaces it (setCache).
func (d *Dataset) chunk(k int64, planes bool) (out []byte, owned, shuffled bool, zero uint64, err error) {
	if k == d.cacheK && (planes || !d.cacheShuffled) {
		return d.cacheBuf, false, d.cacheShuffled, d.cacheZero, nil
	}
	want := int(d.chunkLen) * d.elemSize
	// Of a 1-D dataset's chunk only the part within the extent is read: a
	// shorter buffer serves, which a chunk far larger than the dataset
	// needs (see unfilter).
	inExtent := want
	if len(d.shape) == 1 {
		inExtent = int(min(d.chunkLen, d.n-k*d.chunkLen)) * d.elemSize
	}
	ref := d.index.ref(k)
	if ref.size == 0 {
		out = getBuf(inExtent)
		if d.fill == nil {
			clear(out)
		} else {
			for i := 0; i < inExtent; i += d.elemSize {
				copy(out[i:], d.fill)
			}
		}
		return out, true, false, 0, nil
	}
	if err := d.f.m.inFile(ref.addr, ref.size); err != nil {
		return nil, false, false, 0, d.errorf("%w: chunk %d: %w", errFormat, k, err)
	}
	raw := getBuf(int(ref.size))
	if _, err := d.f.m.r.ReadAt(raw, int64(ref.addr)); err != nil {
		putBuf(raw)
		return nil, false, false, 0, d.errorf("reading chunk %d (%d bytes at offset %d): %w", k, ref.size, ref.addr, err)
	}
	if out, shuffled, zero, err = unfilter(d.filters, ref.mask, raw, want, planes); err != nil {
		return nil, false, false, 0, d.errorf("chunk %d at offset %d: %w", k, ref.addr, err)
	}
	// Only a 1-D edge chunk may be stored short (scigolib/hdf5's writer
	// does this; libhdf5 always stores whole chunks), and only if it still
	// covers the dataset's extent; the tail beyond that is never read.
	if len(out) < inExtent || len(out) < want && len(d.shape) != 1 {
		putBuf(out)
		return nil, false, false, 0, d.errorf("%w: chunk %d decoded to %d bytes, want %d", errFormat, k, len(out), want)
	}
	return out, true, shuffled, zero, nil
}

// setCache makes the decoded chunk k, b, the cached one, taking ownership
// of b.
func (d *Dataset) setCache(k int64, b []byte, shuffled bool, zero uint64) {
	putBuf(d.cacheBuf)
	d.cacheK, d.cacheBuf, d.cacheShuffled, d.cacheZero = k, b, shuffled, zero
}

// visit1D covers [start, start+n) of a chunked 1-D dataset; chunk k holds
// elements [k*c, (k+1)*c). Ranges spanning several chunks are decoded on
// the file's workers goroutines (a View's on the calling goroutine); the chunk
// holding the range's end is cached, since
// the next sequential read starts there.
func (d *Dataset) visit1D(start, n int64, fn func(int64, []byte) error, planes planesFunc) error {
	c := d.chunkLen
	es := int64(d.elemSize)
	first, last := start/c, (start+n-1)/c
	// The last chunk is kept for the cache, which the other chunks may be
	// read from concurrently: it is replaced once all are done.
	var keep struct {
		b           []byte
		shuffled    bool
		zero        uint64
		owned, done bool
	}
	piece := func(k int64) error {
		lo, hi := max(start, k*c), min(start+n, (k+1)*c)
		b, owned, shuffled, zero, err := d.chunk(k, planes != nil)
		if err != nil {
			return err
		}
		if shuffled {
			err = planes(lo-start, b, int(c), int(lo-k*c), int(hi-lo), zero)
		} else {
			err = fn(lo-start, b[(lo-k*c)*es:(hi-k*c)*es])
		}
		switch {
		case k == last && err == nil:
			keep.b, keep.shuffled, keep.zero, keep.owned, keep.done = b, shuffled, zero, owned, true
		case owned:
			putBuf(b)
		}
		return err
	}
	var err error
	if d.serial || n < parallelMin || last-first < 2 || d.f.workers == 1 {
		for k := first; k <= last && err == nil; k++ {
			err = piece(k)
		}
	} else {
		// Every chunk at once, the last too: decoding it after the others
		// would leave all cores but one idle meanwhile.
		var g errgroup.Group
		g.SetLimit(d.f.workers)
		for k := first; k <= last; k++ {
			g.Go(func() error { return piece(k) })
		}
		err = g.Wait()
	}
	if keep.done && keep.owned {
		d.setCache(last, keep.b, keep.shuffled, keep.zero)
	}
	return err
}

// visitND covers a row-major range of a chunked N-dimensional dataset: every
// chunk whose element box meets the range is decoded and its rows (runs along
// the last dimension) clipped to the range.
func (d *Dataset) visitND(start, n int64, fn func(int64, []byte) error) error {
	rank := len(d.shape)
	chunk := d.layout.chunk
	es := int64(d.elemSize)
	// strides[i] is the row-major stride of dimension i.
	strides := make([]int64, rank)
	s := int64(1)
	for i := rank - 1; i >= 0; i-- {
		strides[i] = s
		s *= d.shape[i]
	}
	end := start + n
	// Only chunk rows covering the first-dimension range can intersect.
	row0, row1 := start/strides[0], (end-1)/strides[0]
	g := d.index.grid
	cidx := make([]int64, rank)
	lo := make([]int64, rank)
	hi := make([]int64, rank)
	pos := make([]int64, rank)
	// Only the chunk rows meeting the first-dimension range are visited.
	perRow := d.index.n / max(g[0], 1) // chunks per chunk row
	kLo := row0 / int64(chunk[0]) * perRow
	kHi := min((row1/int64(chunk[0])+1)*perRow, d.index.n)
	for k := kLo; k < kHi; k++ {
		r := k
		for i := rank - 1; i >= 0; i-- {
			cidx[i] = r % g[i]
			r /= g[i]
		}
		lo[0] = cidx[0] * int64(chunk[0])
		if lo[0] > row1 || lo[0]+int64(chunk[0]) <= row0 {
			continue
		}
		first, last := int64(0), int64(0)
		for i := 0; i < rank; i++ {
			lo[i] = cidx[i] * int64(chunk[i])
			hi[i] = min(lo[i]+int64(chunk[i]), d.shape[i])
			first += lo[i] * strides[i]
			last += (hi[i] - 1) * strides[i]
		}
		if last < start || first >= end {
			continue
		}
		b, owned, _, _, err := d.chunk(k, false)
		if err != nil {
			return err
		}
		// Walk the chunk's rows: pos iterates over all dims but the last.
		copy(pos, lo)
		rowLen := hi[rank-1] - lo[rank-1]
		for {
			lin := int64(0)
			coff := int64(0) // element offset inside the chunk
			for i := 0; i < rank; i++ {
				lin += pos[i] * strides[i]
				coff = coff*int64(chunk[i]) + (pos[i] - lo[i])
			}
			a, z := max(lin, start), min(lin+rowLen, end)
			if a < z {
				o := coff + (a - lin)
				if err := fn(a-start, b[o*es:(o+z-a)*es]); err != nil {
					if owned {
						putBuf(b)
					}
					return err
				}
			}
			i := rank - 2
			for ; i >= 0; i-- {
				pos[i]++
				if pos[i] < hi[i] {
					break
				}
				pos[i] = lo[i]
			}
			if i < 0 {
				break
			}
		}
		if owned {
			putBuf(b)
		}
	}
	return nil
}
