package simulate

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkDraw measures drawing rows (observed, noise-free and counts) of
// 10,000 genes per kind; bytes are matrix entries, so MB/s reads as millions
// of entries per second.
func BenchmarkDraw(b *testing.B) {
	for _, p := range []Params{
		{Kind: OrMachine, Cells: 1000, Genes: 10000, L: 10, CodeDensity: 0.03, UsageDensity: 0.2, FlipOn: 0.01, FlipOff: 0.2, Seed: 1},
		{Kind: SingleCell, Cells: 1000, Genes: 10000, L: 10, Seed: 1, SingleCell: DefaultSingleCell()},
	} {
		b.Run(fmt.Sprint(p.Kind), func(b *testing.B) {
			tr, err := New(context.Background(), p)
			if err != nil {
				b.Fatal(err)
			}
			buf := tr.newRowBuf()
			b.SetBytes(int64(p.Genes))
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				tr.draw(n%p.Cells, buf)
				n++
			}
		})
	}
}
