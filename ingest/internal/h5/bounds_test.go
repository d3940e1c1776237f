package h5

import (
	"bytes"
	"encoding/binary"
	"scpipe/internal/lookup3"
	"slices"
	"strings"
	"testing"
)

// boundsFile is a small well-formed file: a group "g" of a chunked int32
// dataset "c" (values 0..99 in chunks of 16), a contiguous one "d" and a
// dataset of variable-length strings "s", under a symbol-table root.
// at records where the structures the cases corrupt lie.
type boundsFile struct {
	b  []byte
	at map[string]uint64
}

func newBoundsFile() *boundsFile {
	im := &image{}
	im.alloc(48)
	vals := make([]int32, 100)
	for i := range vals {
		vals[i] = int32(i)
	}
	c, tree := im.chunkedInt32(vals, 16)
	data := im.put(le(8, 0x0102030405060708))
	d := im.ohdr(hdrMsg{msgDataspace, space1(2)}, hdrMsg{msgDatatype, int32Type},
		hdrMsg{msgLayout, cat([]byte{3, layoutContiguous}, le(8, data), le(8, 8))})
	s := im.vlenStrings("alpha", "beta")
	g := im.group(link{"c", c}, link{"d", d}, link{"s", s})
	root := im.symbolTableGroup([]symbolEntry{{"g", g, false}})
	// An object header continuation block continuing to itself, which no
	// header refers to until a case makes one.
	ochk := im.alloc(28)
	copy(im.b[ochk:], withChecksum(cat([]byte("OCHK"), []byte{msgContinuation, 16, 0, 0}, le(8, ochk), le(8, 28))))
	b := im.superblock(root)
	return &boundsFile{b: b, at: map[string]uint64{"c": c, "tree": tree, "d": d, "s": s, "g": g, "root": root, "ochk": ochk}}
}

// find returns the offset of the first sig at or after from.
func (bf *boundsFile) find(sig string, from uint64) uint64 {
	i := bytes.Index(bf.b[from:], []byte(sig))
	if i < 0 {
		panic("bounds test: no " + sig)
	}
	return from + uint64(i)
}

// put64 and put32 overwrite little-endian fields.
func (bf *boundsFile) put64(at, v uint64) { binary.LittleEndian.PutUint64(bf.b[at:], v) }
func (bf *boundsFile) put32(at, v uint64) { binary.LittleEndian.PutUint32(bf.b[at:], uint32(v)) }

// sum rewrites the checksum of the version-2 object header at addr after
// a change to its messages.
func (bf *boundsFile) sum(addr uint64) {
	end := addr + 10 + uint64(binary.LittleEndian.Uint32(bf.b[addr+6:]))
	bf.put32(end, uint64(lookup3.Sum(bf.b[addr:end])))
}

// message returns the offset of the data of the first message of type typ
// in the version-2 object header at addr (this builder's: 4-byte chunk
// size, no optional fields).
func (bf *boundsFile) message(addr uint64, typ byte) uint64 {
	for p := addr + 10; ; {
		size := uint64(binary.LittleEndian.Uint16(bf.b[p+1:]))
		if bf.b[p] == typ {
			return p + 4
		}
		p += 4 + size
	}
}

// TestSizeBounds corrupts each size the reader takes from a file, as the
// three crashes of issue 19 did and beyond, and checks that reading the
// file gives an error naming the fault, or (where the format allows what
// the corruption made) the data, and in every case allocates far less
// than the corrupted size asked for.
func TestSizeBounds(t *testing.T) {
	cases := []struct {
		name    string
		corrupt func(bf *boundsFile)
		want    string // in the error; "" for a read that succeeds
	}{
		{"intact", func(*boundsFile) {}, ""},
		{"local heap of 1 TiB", func(bf *boundsFile) {
			bf.put64(bf.find("HEAP", 0)+8, 1<<40)
		}, "local heap"},
		{"symbol node of 65535 entries", func(bf *boundsFile) {
			binary.LittleEndian.PutUint16(bf.b[bf.find("SNOD", 0)+6:], 0xffff)
		}, "symbol table larger than the file"},
		{"group B-tree node that is its own child", func(bf *boundsFile) {
			tree := bf.find("TREE", bf.at["tree"]+4) // the group's, after the chunk B-tree
			bf.b[tree+5] = 1                         // level 1: its entry is a node
			bf.put64(tree+8+16+8, tree)
		}, "visited twice"},
		{"object header continuations in a loop", func(bf *boundsFile) {
			// The root's symbol table message becomes a continuation to
			// the block that continues to itself.
			at := bf.message(bf.at["root"], msgSymbolTable)
			bf.b[at-4] = msgContinuation
			bf.put64(at, bf.at["ochk"])
			bf.put64(at+8, 28)
			bf.sum(bf.at["root"])
		}, "continuations loop"},
		{"dataspace of 2^40 elements", func(bf *boundsFile) {
			bf.put64(bf.message(bf.at["c"], msgDataspace)+8, 1<<40)
			bf.sum(bf.at["c"])
		}, "more than a file of"},
		{"chunk of 2^31 elements", func(bf *boundsFile) {
			bf.put32(bf.message(bf.at["c"], msgLayout)+3+8, 1<<31)
			bf.sum(bf.at["c"])
		}, "limit of 4 GiB"},
		{"chunk of 2^28 elements, stored short", func(bf *boundsFile) {
			// One chunk of 1 GiB, stored as the 16 elements that are the
			// dataset (as scigolib's writer stores a last chunk).
			bf.put32(bf.message(bf.at["c"], msgLayout)+3+8, 1<<28)
			bf.put64(bf.message(bf.at["c"], msgDataspace)+8, 16)
			binary.LittleEndian.PutUint16(bf.b[bf.at["tree"]+6:], 1)
			bf.sum(bf.at["c"])
		}, ""},
		{"chunk stored beyond the file", func(bf *boundsFile) {
			bf.put32(bf.at["tree"]+24, 1<<31) // the first key's chunk size
		}, "runs past the end of the file"},
		{"contiguous data beyond the file", func(bf *boundsFile) {
			bf.put64(bf.message(bf.at["d"], msgLayout)+2, uint64(len(bf.b))-4)
			bf.sum(bf.at["d"])
		}, "contiguous storage"},
		{"global heap collection of 1 TiB", func(bf *boundsFile) {
			bf.put64(bf.find("GCOL", 0)+8, 1<<40)
		}, "global heap"},
		{"global heap object of 2^62 bytes", func(bf *boundsFile) {
			bf.put64(bf.find("GCOL", 0)+16+8, 1<<62)
		}, "overruns the collection"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bf := newBoundsFile()
			tc.corrupt(bf)
			before := allocated()
			err := readBoundsFile(bf.b)
			if got := allocated() - before; got > 16<<20 {
				t.Errorf("allocated %d bytes reading a %d-byte file", got, len(bf.b))
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			t.Log(err)
		})
	}
}

// readBoundsFile opens the file and reads all of it.
func readBoundsFile(b []byte) error {
	f, err := newFile("bounds.h5", &meta{r: bytes.NewReader(b), size: uint64(len(b))})
	if err != nil {
		return err
	}
	c, err := f.Dataset("/g/c")
	if err != nil {
		return err
	}
	v := make([]int64, c.Len())
	if err := c.ReadInt64(0, v); err != nil {
		return err
	}
	for i, x := range v {
		if x != int64(i) {
			return errFormat // wrong data: no case may give it
		}
	}
	d, err := f.Dataset("/g/d")
	if err != nil {
		return err
	}
	if err := d.ReadInt64(0, make([]int64, 2)); err != nil {
		return err
	}
	s, err := f.Strings("/g/s")
	if err != nil {
		return err
	}
	if !slices.Equal(s, []string{"alpha", "beta"}) {
		return errFormat
	}
	return nil
}

// TestChunkIndexes reads datasets under version-4 layout messages, as
// libhdf5 writes them with libver="latest": a single chunk, an implicit
// index and a fixed array of filtered chunks; and one never written,
// read as its fill value.
func TestChunkIndexes(t *testing.T) {
	vals := make([]int32, 100)
	for i := range vals {
		vals[i] = int32(i*i) - 50
	}
	f := openBytes(t, chunkIndexFile(vals))
	for _, name := range []string{"/single", "/implicit", "/fixed"} {
		d, err := f.Dataset(name)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]int32, d.Len())
		if err := d.ReadInt32(0, got); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, vals) {
			t.Errorf("%s = %v", name, got)
		}
	}
	d, err := f.Dataset("/unwritten")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]int64, d.Len())
	if err := d.ReadInt64(0, got); err != nil || len(got) != len(vals) || slices.ContainsFunc(got, func(v int64) bool { return v != 7 }) {
		t.Errorf("/unwritten = %v, %v", got, err)
	}
}
