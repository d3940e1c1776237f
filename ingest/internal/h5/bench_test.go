package h5

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/scigolib/hdf5"
)

// BenchmarkReadInt32 reads a 1e7-element chunked, shuffled, deflated int32
// dataset (10x `indices`-like values, chunks of 16384 as CellRanger writes)
// in 1 Mi-element pieces, on one core and on all cores. Bytes/s counts the
// decoded int32 output, so elements/s = MB/s / 4 × 1e6.
func BenchmarkReadInt32(b *testing.B) {
	const n = 10_000_000
	path := filepath.Join(b.TempDir(), "bench.h5")
	rng := rand.New(rand.NewSource(3))
	vals := make([]int32, n)
	for i := range vals {
		vals[i] = int32(rng.Intn(30000))
	}
	writeFile(b, path, hdf5.Int32, vals, n, hdf5.WithChunkDims([]uint64{16384}), hdf5.WithShuffle(), hdf5.WithGZIPCompression(1))
	for _, procs := range []int{1, runtime.NumCPU()} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			d := openV(b, path, procs)
			buf := make([]int32, 1<<20)
			b.SetBytes(4 * n)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for s := int64(0); s < n; s += int64(len(buf)) {
					m := min(int64(len(buf)), n-s)
					if err := d.ReadInt32(s, buf[:m]); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.StopTimer()
			if buf[0] != vals[(n-1)/len(buf)*len(buf)] {
				b.Fatal("wrong value read")
			}
		})
	}
}
