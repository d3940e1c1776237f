package shard

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// benchSizes is the ladder of matrix shapes for the benchmarks; the largest
// is 64 MiB of bits per orientation.
var benchSizes = []struct{ cells, genes int }{
	{4096, 2000},
	{32768, 4000},
	{131072, 4096},
}

// fillRandom sets about density·cells·genes ones with SetRow.
func fillRandom(w *Writer, density float64) {
	l := w.Layout()
	rng := rand.New(rand.NewPCG(1, 1))
	row := make([]int32, 0, l.Genes)
	for i := range l.Cells {
		row = row[:0]
		for g := range l.Genes {
			if rng.Float64() < density {
				row = append(row, int32(g))
			}
		}
		w.SetRow(i, row)
	}
}

// BenchmarkCommit measures Commit (blocked transpose, checksums, fsync and
// rename) in bytes of X per second.
func BenchmarkCommit(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(fmt.Sprintf("%dx%d", sz.cells, sz.genes), func(b *testing.B) {
			l := Layout{Cells: sz.cells, Genes: sz.genes}
			r, _ := l.resolve()
			b.SetBytes(int64(sz.cells) * int64(r.WordsPerRow) * 8)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				dst := filepath.Join(b.TempDir(), fmt.Sprintf("b%d.shard", i))
				w, err := Create(dst, l, CreateOptions{})
				if err != nil {
					b.Fatal(err)
				}
				fillRandom(w, 0.1)
				b.StartTimer()
				if err := w.Commit(context.Background(), Manifest{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSegmentScan reads every word of Xᵀ through Segment, as the U step
// does, in bytes per second (pages are warm after the first pass).
func BenchmarkSegmentScan(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(fmt.Sprintf("%dx%d", sz.cells, sz.genes), func(b *testing.B) {
			dst := filepath.Join(b.TempDir(), "scan.shard")
			w, err := Create(dst, Layout{Cells: sz.cells, Genes: sz.genes}, CreateOptions{})
			if err != nil {
				b.Fatal(err)
			}
			fillRandom(w, 0.1)
			if err := w.Commit(context.Background(), Manifest{}); err != nil {
				b.Fatal(err)
			}
			s := openShard(b, dst)
			xt := s.XT()
			var words int64
			for seg := range len(xt.Segments()) - 1 {
				words += int64(len(xt.Segment(0, seg))) * int64(xt.Rows())
			}
			b.SetBytes(words * 8)
			b.ReportAllocs()
			var sink uint64
			for b.Loop() {
				for g := range xt.Rows() {
					for seg := range len(xt.Segments()) - 1 {
						for _, w := range xt.Segment(g, seg) {
							sink ^= w
						}
					}
				}
			}
			if sink == 1 {
				b.Log(sink)
			}
		})
	}
}

// BenchmarkTransposeTile measures the in-memory transpose kernel alone, in
// bytes of X per second, at several densities: on a square-ish block, and
// on the block ingest writes for 200 000 cells × 14 545 genes (2 240 rows of
// 228 words, 6.5% of bits set).
func BenchmarkTransposeTile(b *testing.B) {
	shapes := []struct{ rows, genes int }{{8192, 4096}, {2240, 14545}}
	kernels := []bool{false}
	if useGFNI {
		kernels = append(kernels, true)
	}
	defer func(v bool) { useGFNI = v }(useGFNI)
	for _, sh := range shapes {
		wpr := ceilDiv(sh.genes, 64)
		for _, gfni := range kernels {
			for _, p := range []float64{0.01, 0.065, 0.5} {
				useGFNI = gfni
				b.Run(fmt.Sprintf("%dx%d/gfni=%v/density=%g", sh.rows, sh.genes, gfni, p), func(b *testing.B) {
					rng := rand.New(rand.NewPCG(2, 2))
					src := make([]uint64, sh.rows*wpr)
					for r := range sh.rows {
						for g := range sh.genes {
							if rng.Float64() < p {
								src[r*wpr+g/64] |= 1 << (g % 64)
							}
						}
					}
					out := make([]uint64, sh.genes*ceilDiv(sh.rows, 64))
					b.SetBytes(int64(len(src)) * 8)
					for b.Loop() {
						clear(out)
						transposeTile(out, src, sh.rows, wpr, Range{0, sh.genes})
					}
				})
			}
		}
	}
}
