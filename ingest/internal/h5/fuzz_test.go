package h5

// Fuzz targets for the metadata path, one per structure (spec section in
// brackets), each seeded from the files under ../shared/data (read at test
// time; nothing copied) and from files built here:
//
//	FuzzSuperblock    the superblock [II.A]
//	FuzzObjectHeader  object headers, versions 1 and 2, with continuations [IV.A]
//	FuzzGroup         a group's members: symbol tables (version-1 group
//	                  B-trees, symbol nodes, local heaps) [III.A.1, III.B-D],
//	                  link messages, dense links (fractal heaps [III.G],
//	                  version-2 B-trees [III.A.2])
//	FuzzAttributes    attribute messages, compact and dense, and their values
//	FuzzGlobalHeap    global heap collections [III.E]
//	FuzzDatatype      datatype messages [IV.A.2.d]
//	FuzzLayout        data layout messages [IV.A.2.i]
//	FuzzFilters       filter pipeline messages [IV.A.2.l], and undoing the
//	                  pipeline on a stored chunk
//	FuzzDataset       a dataset's header, chunk index (version-1 chunk
//	                  B-trees, fixed arrays, implicit) and reads
//	FuzzOpen          a whole file: open, then every attribute and dataset
//
// Every target bounds its own memory, so that the fuzzer reports the
// reader's faults rather than the harness's: it reads at most a few
// hundred thousand elements of a dataset, whatever its shape; it fails an
// input whose processing allocated more than a bound proportional to the
// input's size (see bounded); and, while fuzzing, the worker's address
// space is capped (limitMemory), so that an allocation the bounds missed
// fails at once, as a crash the fuzzer records, instead of taking a
// shared machine's memory.

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/metrics"
	"sort"
	"testing"

	"github.com/scigolib/hdf5"
)

// seedFile is a well-formed file and the structures found in it.
type seedFile struct {
	data     []byte
	f        *File
	objects  []uint64 // object header addresses
	groups   []uint64
	datasets []uint64
	heaps    []uint64 // global heap collections
}

// maxSeedFile is the size of the largest file used whole as a seed: the
// fuzzer mutates larger inputs slowly.
const maxSeedFile = 130 << 10

// seedFiles returns the HDF5 files of ../shared/data (when present; small
// ones only unless all) and files built in code: dense storage, soft
// links, scigolib-written version-2 headers with every filter, a chunked
// matrix (the only two-dimensional dataset of a small file), and the
// version-4 chunk indexes and fill values of chunkIndexFile.
func seedFiles(tb testing.TB, all bool) []seedFile {
	tb.Helper()
	var images [][]byte
	if dir, ok := sharedDir(); ok {
		var paths []string
		filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() && (filepath.Ext(p) == ".h5" || filepath.Ext(p) == ".h5ad") {
				paths = append(paths, p)
			}
			return nil
		})
		sort.Strings(paths)
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				tb.Fatal(err)
			}
			if all || len(b) <= maxSeedFile {
				images = append(images, b)
			}
		}
	}
	images = append(images, denseFile(3, groupHeap(0)), denseFile(30, groupHeap(2)), softLinkFile())
	tmp := tb.TempDir()
	for _, opts := range [][]hdf5.DatasetOption{
		{hdf5.WithChunkDims([]uint64{64}), hdf5.WithShuffle(), hdf5.WithGZIPCompression(1), hdf5.WithFletcher32()},
		nil,
	} {
		p := filepath.Join(tmp, "v2.h5")
		writeFile(tb, p, hdf5.Int32, fill(300, func(i int) int32 { return int32(i * i) }), 300, opts...)
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		images = append(images, b)
	}
	images = append(images, matrixFile(tb, filepath.Join(tmp, "m.h5")),
		chunkIndexFile(fill(100, func(i int) int32 { return int32(i - 50) })))
	var out []seedFile
	for _, b := range images {
		f, err := newFile("seed", &meta{r: bytes.NewReader(b), size: uint64(len(b))})
		if err != nil {
			tb.Fatalf("seed file: %v", err)
		}
		s := seedFile{data: b, f: f}
		for addr, o := range f.objs {
			s.objects = append(s.objects, addr)
			switch {
			case o.group:
				s.groups = append(s.groups, addr)
			case o.has(msgLayout):
				s.datasets = append(s.datasets, addr)
			}
		}
		for i := 0; ; i++ {
			j := bytes.Index(b[i:], []byte("GCOL"))
			if j < 0 {
				break
			}
			i += j
			s.heaps = append(s.heaps, uint64(i))
		}
		for _, l := range [][]uint64{s.objects, s.groups, s.datasets} {
			sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
		}
		out = append(out, s)
	}
	return out
}

// matrixFile writes, with scigolib's writer, a 30 × 20 float32 matrix in
// shuffled, deflated 6 × 5 chunks (whole ones: its writer stores edge
// chunks clipped, which this package reads only in one dimension) and
// returns the file's bytes.
func matrixFile(tb testing.TB, path string) []byte {
	tb.Helper()
	fw, err := hdf5.CreateForWrite(path, hdf5.CreateTruncate)
	if err != nil {
		tb.Fatal(err)
	}
	dw, err := fw.CreateDataset("/m", hdf5.Float32, []uint64{30, 20},
		hdf5.WithChunkDims([]uint64{6, 5}), hdf5.WithShuffle(), hdf5.WithGZIPCompression(1))
	if err != nil {
		tb.Fatal(err)
	}
	if err := dw.Write(fill(600, func(i int) float32 { return float32(i) / 4 })); err != nil {
		tb.Fatal(err)
	}
	if err := dw.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// sharedDir returns ../shared/data beside the repository, if present.
func sharedDir() (string, bool) {
	dir := filepath.Join("..", "..", "..", "..", "shared", "data")
	_, err := os.Stat(dir)
	return dir, err == nil
}

// softLinkFile is the image of TestSoftLinks.
func softLinkFile() []byte {
	im := &image{}
	im.alloc(48)
	d := im.int32Dataset(5)
	sub := im.ohdr(hdrMsg{msgLink, linkMessage("x", d)},
		hdrMsg{msgLink, cat([]byte{1, 0x08, 1, 4}, []byte("soft"), le(2, 2), []byte("/a"))})
	root := im.symbolTableGroup([]symbolEntry{{"a", d, false}, {"s", undef, true}, {"sub", sub, false}})
	return im.superblock(root)
}

// fuzzFile is a File over data whose superblock (if it parses) gives the
// sizes of addresses and lengths; checksums are not verified, so that
// mutations reach the parsers behind them.
func fuzzFile(data []byte) *File {
	m := &meta{r: bytes.NewReader(data), size: uint64(len(data)), offsetSize: 8, lengthSize: 8, skipChecksums: true}
	if sb, err := parseSuperblock(data[:min(len(data), 256)], true); err == nil {
		m.offsetSize, m.lengthSize = sb.offsetSize, sb.lengthSize
	}
	return &File{path: "fuzz", m: m, workers: 1, objs: map[uint64]*object{}, heaps: map[uint64]map[uint16][]byte{}}
}

// allocated returns the bytes allocated on the heap so far.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// bounded runs fn, the processing of an n-byte input, and fails the input
// if fn allocated more than 64 MiB plus twice what n bytes can inflate to.
// A reader that sizes anything by a number read from the input, unchecked,
// fails here.
func bounded(t *testing.T, n int, fn func()) {
	limitMemory()
	bound := uint64(64<<20 + 2*maxInflate*n)
	before := allocated()
	fn()
	if got := allocated() - before; got > bound {
		t.Fatalf("allocated %d bytes for a %d-byte input (bound %d)", got, n, bound)
	}
}

// maxRead is the most elements the harness reads of a dataset, at each
// end: enough to cross several chunks, bounded whatever the shape says.
const maxRead = 1 << 16

// readDataset reads d's values (its first and last maxRead elements, as
// numbers of each output type, or its strings), as ingest would.
func readDataset(f *File, d *Dataset) {
	switch {
	case d.typ.class == classString || d.typ.vlenStr:
		if d.n <= maxRead {
			if raw, err := d.rawAll(); err == nil {
				f.decodeStrings(d.typ, raw, d.elemSize, 0, int(d.n))
			}
		}
		return
	case d.typ.class == classCompound:
		if d.n <= maxRead {
			d.rawAll()
		}
		return
	}
	if _, ok := d.typ.numeric(); !ok {
		return
	}
	k := min(d.n, maxRead)
	f64 := make([]float64, k)
	i32 := make([]int32, k)
	for _, start := range []int64{0, d.n - k} {
		if d.ReadFloat64(start, f64) != nil {
			return
		}
		d.ReadInt32(start, i32)
	}
	if v, err := d.View(); err == nil {
		v.ReadFloat64(d.n-k, f64)
	}
}

// readAttributes decodes every attribute of the object whose header holds
// msgs.
func readAttributes(f *File, msgs []message) {
	raw, err := f.m.attributeMessages(msgs)
	if err != nil {
		return
	}
	for _, b := range raw {
		m, err := parseAttribute(b, f.m.lengthSize)
		if err != nil {
			continue
		}
		a, ok, err := f.findAttribute(msgs, m.name)
		if err != nil || !ok {
			continue
		}
		if _, err := f.strings(a); err != nil {
			a.int64s()
		}
	}
}

func FuzzSuperblock(f *testing.F) {
	for _, s := range seedFiles(f, true) {
		f.Add(s.data[:min(len(s.data), 256)])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		bounded(t, len(b), func() {
			for _, skip := range []bool{false, true} {
				if sb, err := parseSuperblock(b, skip); err == nil && (!validSize(sb.offsetSize) || !validSize(sb.lengthSize)) {
					t.Fatalf("accepted offset size %d, length size %d", sb.offsetSize, sb.lengthSize)
				}
			}
		})
	})
}

func FuzzObjectHeader(f *testing.F) {
	for _, s := range seedFiles(f, false) {
		for _, a := range s.objects {
			f.Add(s.data, a)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, addr uint64) {
		bounded(t, len(data), func() {
			fuzzFile(data).m.objectHeader(addr)
		})
	})
}

func FuzzGroup(f *testing.F) {
	for _, s := range seedFiles(f, false) {
		for _, a := range s.groups {
			f.Add(s.data, a)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, addr uint64) {
		bounded(t, len(data), func() {
			m := fuzzFile(data).m
			if msgs, err := m.objectHeader(addr); err == nil {
				m.groupLinks(msgs)
			}
		})
	})
}

func FuzzAttributes(f *testing.F) {
	for _, s := range seedFiles(f, false) {
		for _, a := range s.objects {
			if o := s.f.objs[a]; o.has(msgAttribute) || o.has(msgAttrInfo) {
				f.Add(s.data, a)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, addr uint64) {
		bounded(t, len(data), func() {
			ff := fuzzFile(data)
			if msgs, err := ff.m.objectHeader(addr); err == nil {
				readAttributes(ff, msgs)
			}
		})
	})
}

func FuzzGlobalHeap(f *testing.F) {
	for _, s := range seedFiles(f, false) {
		for _, a := range s.heaps {
			f.Add(s.data, a, uint16(1))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, addr uint64, idx uint16) {
		bounded(t, len(data), func() {
			fuzzFile(data).heapObject(addr, idx)
		})
	})
}

// messagesOfType returns the messages of type typ in the seed files'
// object headers, with the dataspace rank of their object.
func messagesOfType(tb testing.TB, typ uint16) (msgs [][]byte, ranks []int) {
	for _, s := range seedFiles(tb, true) {
		for _, a := range s.objects {
			o := s.f.objs[a]
			rank := 0
			for _, m := range o.msgs {
				if m.typ == msgDataspace {
					if dims, err := parseDataspace(m.data, s.f.m.lengthSize); err == nil {
						rank = len(dims)
					}
				}
			}
			for _, m := range o.msgs {
				if m.typ == typ {
					msgs, ranks = append(msgs, m.data), append(ranks, rank)
				}
			}
		}
	}
	return msgs, ranks
}

func FuzzDatatype(f *testing.F) {
	msgs, _ := messagesOfType(f, msgDatatype)
	for _, m := range msgs {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		bounded(t, len(b), func() {
			typ, n, err := parseDatatype(b)
			if err != nil {
				return
			}
			if n > len(b) {
				t.Fatalf("datatype of %d bytes parsed from %d", n, len(b))
			}
			_ = typ.String()
			if nt, ok := typ.numeric(); ok && nt.size > 0 {
				dec, _ := newDecoder[float64](typ)
				raw := make([]byte, 4*nt.size)
				dec(make([]float64, 4), raw)
			}
		})
	})
}

func FuzzLayout(f *testing.F) {
	msgs, ranks := messagesOfType(f, msgLayout)
	for i, m := range msgs {
		f.Add(m, uint8(ranks[i]))
	}
	f.Fuzz(func(t *testing.T, b []byte, rank uint8) {
		bounded(t, len(b), func() {
			m := &meta{offsetSize: 8, lengthSize: 8}
			l, err := m.parseLayout(b, int(rank))
			if err != nil || l.class != layoutChunked {
				return
			}
			if len(l.chunk) != int(rank) {
				t.Fatalf("chunk rank %d, dataspace rank %d", len(l.chunk), rank)
			}
			for _, c := range l.chunk {
				if c == 0 {
					t.Fatalf("chunk dimensions %v", l.chunk)
				}
			}
		})
	})
}

func FuzzFilters(f *testing.F) {
	for _, s := range seedFiles(f, true) {
		for _, a := range s.datasets {
			d, err := s.f.openDataset("/seed", s.f.objs[a].msgs)
			if err != nil || d.layout.class != layoutChunked || len(d.filters) == 0 {
				continue
			}
			idx, err := d.buildIndex()
			if err != nil {
				continue
			}
			ref := idx.ref(0)
			var pipeline []byte
			for _, m := range s.f.objs[a].msgs {
				if m.typ == msgFilters {
					pipeline = m.data
				}
			}
			if ref.size > 0 && ref.size <= 1<<16 {
				// The chunk's size, and the largest HDF5 allows: a decode
				// buffer sized by it rather than by the stored bytes fails.
				for _, want := range []uint32{uint32(d.chunkLen) * uint32(d.elemSize), maxChunk} {
					f.Add(pipeline, s.data[ref.addr:ref.addr+ref.size], want, uint8(0), uint8(d.elemSize))
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, pipeline, chunk []byte, want uint32, mask, elemSize uint8) {
		bounded(t, len(pipeline)+len(chunk), func() {
			fs, err := parseFilters(pipeline)
			if err != nil || checkFilters(fs, int(elemSize)) != nil {
				return
			}
			for _, planes := range []bool{false, true} {
				raw := getBuf(len(chunk))
				copy(raw, chunk)
				out, _, _, err := unfilter(fs, uint32(mask), raw, int(want), planes)
				if err != nil {
					continue
				}
				if len(out) > int(want) {
					t.Fatalf("decoded %d bytes, want at most %d", len(out), want)
				}
				putBuf(out)
			}
		})
	})
}

func FuzzDataset(f *testing.F) {
	for _, s := range seedFiles(f, false) {
		for _, a := range s.datasets {
			f.Add(s.data, a)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, addr uint64) {
		bounded(t, len(data), func() {
			ff := fuzzFile(data)
			msgs, err := ff.m.objectHeader(addr)
			if err != nil {
				return
			}
			if d, err := ff.openDataset("/fuzz", msgs); err == nil {
				readDataset(ff, d)
			}
		})
	})
}

func FuzzOpen(f *testing.F) {
	for _, s := range seedFiles(f, false) {
		f.Add(s.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		bounded(t, len(data), func() {
			ff := fuzzFile(data)
			ff, err := newFile("fuzz", ff.m)
			if err != nil {
				return
			}
			ff.Children("/")
			addrs := make([]uint64, 0, len(ff.objs))
			for a := range ff.objs {
				addrs = append(addrs, a)
			}
			sort.Slice(addrs, func(i, j int) bool { return addrs[i] < addrs[j] })
			for _, a := range addrs {
				o := ff.objs[a]
				readAttributes(ff, o.msgs)
				if o.has(msgLayout) {
					if d, err := ff.openDataset("/fuzz", o.msgs); err == nil {
						readDataset(ff, d)
					}
				}
			}
		})
	})
}
