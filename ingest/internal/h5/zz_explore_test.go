package h5

import (
	"fmt"
	"os"
	"runtime"
	"testing"
)

func BenchmarkZZRead(b *testing.B) {
	path := os.Getenv("SCPIPE_H5")
	if path == "" {
		b.Skip()
	}
	for _, name := range []string{"/hg19/indices", "/hg19/data"} {
		for _, procs := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/procs=%d", name, procs), func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				f, err := Open(path)
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				d, err := f.Dataset(name)
				if err != nil {
					b.Fatal(err)
				}
				n := d.Len()
				buf := make([]int32, 1<<20)
				b.SetBytes(n * int64(d.ElemSize()))
				b.ResetTimer()
				for range b.N {
					for s := int64(0); s < n; s += int64(len(buf)) {
						m := min(int64(len(buf)), n-s)
						if err := d.ReadInt32(s, buf[:m]); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Melem/s")
			})
		}
	}
}
