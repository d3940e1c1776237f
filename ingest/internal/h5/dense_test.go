package h5

import (
	"bytes"
	"fmt"
	"scpipe/internal/lookup3"
	"slices"
	"testing"
)

// denseFile builds a file whose root group holds n links in dense storage
// (each to one of two datasets, "a" for even i) and n string attributes
// in dense storage too, with the heaps laid out as p says.
func denseFile(n int, p heapParams) []byte {
	im := &image{}
	im.alloc(48) // the superblock
	a, b := im.int32Dataset(1, 2, 3), im.int32Dataset(-7)
	var links, attrs [][]byte
	for i := range n {
		target := a
		if i%2 == 1 {
			target = b
		}
		links = append(links, linkMessage(fmt.Sprintf("link%03d", i), target))
		attrs = append(attrs, stringAttribute(fmt.Sprintf("attr%03d", i), fmt.Sprintf("value %d", i)))
	}
	lheap, lids := im.fractalHeap(p, links)
	aheap, aids := im.fractalHeap(p, attrs)
	var lrecs, arecs [][]byte
	for i := range n {
		name := fmt.Sprintf("link%03d", i)
		lrecs = append(lrecs, cat(le(4, uint64(lookup3.Sum([]byte(name)))), lids[i]))
		arecs = append(arecs, cat(aids[i], []byte{0, 0}, le(4, uint64(i)), le(4, uint64(lookup3.Sum([]byte(name))))))
	}
	lbt := im.btree2(btree2LinkName, 512, 11, lrecs)
	abt := im.btree2(btree2AttrName, 512, 17, arecs)
	root := im.ohdr(
		hdrMsg{msgLinkInfo, cat([]byte{0, 0}, le(8, lheap), le(8, lbt))},
		hdrMsg{msgGroupInfo, []byte{0, 0}},
		hdrMsg{msgAttrInfo, cat([]byte{0, 0}, le(8, aheap), le(8, abt))},
	)
	return im.superblock(root)
}

// groupHeap is libhdf5's doubling table for group and attribute heaps;
// with rows 0 the root is a direct block.
func groupHeap(rows int) heapParams {
	return heapParams{width: 4, start: 512, maxDirect: 65536, heapBits: 32, rootRows: rows}
}

// openBytes opens a file image held in memory.
func openBytes(t testing.TB, b []byte) *File {
	t.Helper()
	f, err := newFile("image.h5", &meta{r: bytes.NewReader(b), size: uint64(len(b))})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestDenseStorage reads groups and attributes in dense storage, as
// libhdf5 writes them past eight links or attributes (and always with
// creation order tracked): fractal heaps whose root is a direct block or
// an indirect block over several, indexed by version-2 B-trees of depth 0
// and 1.
func TestDenseStorage(t *testing.T) {
	big := groupHeap(0)
	big.start = 8192
	for _, tc := range []struct {
		n    int
		heap heapParams
	}{
		{3, groupHeap(0)},   // one direct block, one leaf
		{20, big},           // a larger direct block, a leaf full but for a few records
		{20, groupHeap(2)},  // direct blocks under an indirect root
		{60, groupHeap(2)},  // a B-tree of depth 1
		{150, groupHeap(4)}, // blocks in rows 0 to 3, several leaves
	} {
		t.Run(fmt.Sprintf("%d links, %+v", tc.n, tc.heap), func(t *testing.T) {
			f := openBytes(t, denseFile(tc.n, tc.heap))
			kids, err := f.Children("/")
			if err != nil {
				t.Fatal(err)
			}
			var got, want []string
			for i := range tc.n {
				want = append(want, fmt.Sprintf("link%03d", i))
			}
			for _, c := range kids {
				got = append(got, c.Name)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("root lists %v, want %v", got, want)
			}
			for i := range tc.n {
				d, err := f.Dataset(fmt.Sprintf("/link%03d", i))
				if err != nil {
					t.Fatal(err)
				}
				v := make([]int64, d.Len())
				if err := d.ReadInt64(0, v); err != nil {
					t.Fatal(err)
				}
				if w := []int64{1, 2, 3}; i%2 == 1 && !slices.Equal(v, []int64{-7}) || i%2 == 0 && !slices.Equal(v, w) {
					t.Fatalf("link%03d reads %v", i, v)
				}
				s, ok, err := f.AttrString("/", fmt.Sprintf("attr%03d", i))
				if s != fmt.Sprintf("value %d", i) || !ok || err != nil {
					t.Fatalf("attribute attr%03d = %q %v %v", i, s, ok, err)
				}
			}
			if _, ok, err := f.AttrString("/", "absent"); ok || err != nil {
				t.Errorf("absent attribute: %v %v", ok, err)
			}
		})
	}
}

// TestSoftLinks: soft links, in a symbol table or as link messages, are
// not members the reader can follow, and do not stop it.
func TestSoftLinks(t *testing.T) {
	im := &image{}
	im.alloc(48)
	d := im.int32Dataset(5)
	sub := im.ohdr(hdrMsg{msgLink, linkMessage("x", d)},
		hdrMsg{msgLink, cat([]byte{1, 0x08, 1, 4}, []byte("soft"), le(2, 2), []byte("/a"))})
	root := im.symbolTableGroup([]symbolEntry{{"a", d, false}, {"s", undef, true}, {"sub", sub, false}})
	f := openBytes(t, im.superblock(root))
	for _, tc := range []struct {
		group string
		want  []Child
	}{
		{"/", []Child{{"a", false}, {"sub", true}}},
		{"/sub", []Child{{"x", false}}},
	} {
		got, err := f.Children(tc.group)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Children(%s) = %v, %v; want %v", tc.group, got, err, tc.want)
		}
	}
	v := make([]int32, 1)
	if d, err := f.Dataset("/sub/x"); err != nil || d.ReadInt32(0, v) != nil || v[0] != 5 {
		t.Errorf("/sub/x = %v, %v", v, err)
	}
}
