package shard

import (
	"sync/atomic"

	"github.com/edsrzf/mmap-go"
)

// residentLimit bounds how many bytes of rows a Writer lets accumulate in
// its process's resident set. The planes are shared file mappings: every
// row written stays resident (as dirty page cache mapped into the process)
// until unmapped, so a 1.3M-cell × 11k-gene shard would hold 1.8 GiB. Past
// the limit the mappings' pages are dropped from the process with
// MADV_DONTNEED; for shared file mappings the page cache keeps the data
// (dirty pages are written back as usual) and a later write faults the page
// back in. Rows written in order therefore cost about one fault per page,
// and memory stays bounded whatever the write order.
var residentLimit int64 = 256 << 20 // a variable so that tests can lower it

// residentCounter counts the bytes of the memory rows were written to since the planes were last
// dropped from the resident set.
type residentCounter struct{ n atomic.Int64 }

// add records a row write of n bytes and reports whether the caller should
// drop the mappings now; of the writers that see the limit passed, the one
// that resets the count does it.
func (c *residentCounter) add(n int64) bool {
	v := c.n.Add(n)
	return v >= residentLimit && c.n.CompareAndSwap(v, 0)
}

// dropResident releases the mapped pages of both planes from the process's
// resident set (see residentLimit). It is safe while other goroutines write
// rows: the kernel keeps a page's modifications whether the write lands
// before or after the drop.
func (w *Writer) dropResident() {
	w.mapMu.Lock()
	defer w.mapMu.Unlock()
	for _, plane := range [][]mmap.MMap{w.x, w.mask} {
		for _, m := range plane {
			if m != nil {
				dontNeed(m)
			}
		}
	}
}

// wrote records a write to row and drops the planes from the resident set
// when the limit is reached. Setting bits reads the row first, and a read
// fault on a file mapping maps the neighbouring pages already in the page
// cache too (Linux's fault-around, 64 KiB by default). So a write of b bytes
// can make up to ⌈b/window⌉ + 1 windows resident, which is what is counted:
// the bound then holds however scattered the writes are, at the price of
// more frequent (cheap) drops when rows arrive in order.
func (w *Writer) wrote(row []uint64) {
	const window = 64 << 10
	touched := (int64(8*len(row)) + 2*window - 1) / window * window
	if w.resident.add(touched) {
		w.dropResident()
	}
}
