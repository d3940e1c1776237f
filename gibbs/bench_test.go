package gibbs

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"testing"
)

// sparsePlanted returns n × d data from the OrMachine with L codes whose
// Boolean product has density density, with bits flipped with probability
// noise; it works a word at a time so that 10⁸-entry fixtures are quick.
func sparsePlanted(seed uint64, n, d, L int, density, noise float64) Data {
	r := &testRNG{s: seed}
	q := math.Sqrt(1 - math.Pow(1-density, 1/float64(L)))
	dw := (d + 63) / 64
	u := make([][]uint64, L)
	for l := range u {
		u[l] = make([]uint64, dw)
		for j := range d {
			if r.bern(q) {
				u[l][j/64] |= 1 << uint(j%64)
			}
		}
	}
	x := NewMatrix(n, d)
	logKeep := math.Log1p(-noise)
	for i := range n {
		row := x.Segment(i, 0)
		for l := range L {
			if r.bern(q) {
				for k := range row {
					row[k] |= u[l][k]
				}
			}
		}
		// Flip bits at geometric gaps.
		for j := -1; ; {
			j += 1 + int(math.Log(1-r.float())/logKeep)
			if j >= d {
				break
			}
			row[j/64] ^= 1 << uint(j%64)
		}
	}
	data, err := NewData(x, nil, 0)
	if err != nil {
		panic(err)
	}
	return data
}

// BenchmarkSweep measures one sweep (Z step, U step, λ update) on a single
// worker after ten warm-up sweeps from data-seeded codes, on planted data of density 7% with 1%
// noise; entries/s/core is N·D per second of sweep.
//
// The last entries run on every core (GOMAXPROCS workers) and report
// entries/s/core as the total rate divided by the number of workers.
func BenchmarkSweep(b *testing.B) {
	type size struct{ n, d, L, workers int }
	var sizes []size
	for _, nd := range [][2]int{{10000, 1000}, {100000, 2000}} {
		for _, L := range []int{2, 5, 10} {
			sizes = append(sizes, size{nd[0], nd[1], L, 1})
		}
	}
	for _, L := range []int{2, 5} {
		sizes = append(sizes, size{100000, 2000, L, runtime.GOMAXPROCS(0)})
	}
	for _, sz := range sizes {
		L := sz.L
		{
			b.Run(fmt.Sprintf("N%d/D%d/L%d/workers%d", sz.n, sz.d, L, sz.workers), func(b *testing.B) {
				data := sparsePlanted(uint64(sz.n+L), sz.n, sz.d, L, 0.07, 0.01)
				cfg := DefaultConfig()
				cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers = L, 1<<30, 1, 1, sz.workers
				cfg.PriorZ, cfg.PriorU = EmpiricalPrior(), EmpiricalPrior()
				cfg.Init = InitData // a random start collapses to the empty state, which is unrealistically fast
				s, err := NewSampler(context.Background(), data, cfg)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(2 * sz.n * ((sz.d + 63) / 64) * 8)) // X and Xᵀ words streamed
				b.ReportAllocs()
				timeSweeps(b, s, 10, sz.n, sz.d, sz.workers)
			})
		}
	}
}

// BenchmarkCondSums measures the kernel alone on one row of a Z step (32
// words: 2 000 genes; L = 3 is the single-cell model's L = 2) and of a U step (1 563 words: 100 000 cells), with
// codes of density 10%, x of density 7% and every entry observed, with the
// Go kernel and, where the build and CPU have it, the vector kernel.
// entries/s counts the row's columns once per call (every code summed).
func BenchmarkCondSums(b *testing.B) {
	for _, words := range []int{32, 1563} {
		for _, L := range []int{2, 3, 5, 10} {
			r := &testRNG{s: uint64(words*L + 1)}
			sparse := func(p float64) uint64 {
				var w uint64
				for k := range 64 {
					if r.bern(p) {
						w |= 1 << uint(k)
					}
				}
				return w
			}
			codes := make([]uint64, words*L)
			for i := range codes {
				codes[i] = sparse(0.1)
			}
			x, obs := make([]uint64, words), make([]uint64, words)
			for i := range x {
				x[i], obs[i] = sparse(0.07), ^uint64(0)
			}
			planes := codeMajor(nil, codes, L)
			active := uint64(0b1011) & (1<<uint(L) - 1)
			// Three level planes of random bits, as a U step's cell levels.
			liftBlock := make([]uint64, MaxCellLevelBits*words+8)
			lift := make([][]uint64, MaxCellLevelBits)
			for j := range lift {
				lift[j] = liftBlock[j*words : (j+1)*words]
				for i := range lift[j] {
					lift[j][i] = sparse(0.5)
				}
			}
			for _, k := range Kernels() {
				b.Run(fmt.Sprintf("words%d/L%d/%s/lift", words, L, k), func(b *testing.B) {
					var acc, lev [MaxL]uint64
					var buf vecScratch
					var row vecRow
					kern := vectorKernelNamed(k)
					for b.Loop() {
						if k == goKernel {
							condSumsLift(&acc, &lev, active, codesFrom(0, L), L, codes, x, obs, lift)
						} else {
							row.prepare(active, codesFrom(0, L), words)
							row.scanLift(kern, &buf, planes, x, nil, liftBlock, words)
							row.add(&acc, &lev)
						}
					}
					b.ReportMetric(float64(64*words)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
				})
				b.Run(fmt.Sprintf("words%d/L%d/%s", words, L, k), func(b *testing.B) {
					var acc, lev [MaxL]uint64
					var buf vecScratch
					var row vecRow
					kern := vectorKernelNamed(k)
					for b.Loop() {
						if k == goKernel {
							condSums(&acc, active, codesFrom(0, L), L, codes, x, obs)
						} else {
							row.prepare(active, codesFrom(0, L), words)
							row.scan(kern, &buf, planes, x, nil)
							row.add(&acc, &lev)
						}
					}
					b.ReportMetric(float64(64*words)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
				})
			}
		}
	}
}

// vectorKernelNamed returns the vector kernel of that name (the zero
// kernel for the Go one).
func vectorKernelNamed(name string) vectorKernel {
	for _, v := range vectorKernels {
		if v.name == name {
			return v
		}
	}
	return vectorKernel{}
}

// BenchmarkDetection measures the genes' tables against ten codes' cells
// (the scores a fit writes once, after its sweeps) on one worker, as
// entries/s/core like BenchmarkSweep: N·D per second.
func BenchmarkDetection(b *testing.B) {
	const n, d, L = 20000, 4000, 10
	data := sparsePlanted(3, n, d, L, 0.07, 0.01)
	r := &testRNG{s: 5}
	uses := make([][]uint64, L)
	for k := range uses {
		uses[k] = make([]uint64, (n+63)/64)
		for i := range uses[k] {
			uses[k][i] = r.next() & r.next() // a quarter of the cells
		}
		uses[k][len(uses[k])-1] &= 1<<(n%64) - 1
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := data.Detection(uses, 0, n, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(d)*float64(b.N)/b.Elapsed().Seconds(), "entries/s/core")
}

// BenchmarkSweepHeld measures a sweep of the single-cell model that
// scpipe fit uses for counts (dropout noise, 8 cell and 8 gene levels, a
// housekeeping code) on one worker, with its parameters estimated after
// the sweep (estimating) and held since the warm-up (held: the sampling
// sweeps of a default fit, which follow the exact log-likelihood through
// the flips instead).
func BenchmarkSweepHeld(b *testing.B) {
	const n, d, L, warm = 100000, 2000, 5, 10
	data := sparsePlanted(n+L, n, d, L, 0.07, 0.01)
	for _, held := range []bool{false, true} {
		b.Run(map[bool]string{false: "estimating", true: "held"}[held], func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.L, cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.Workers = L, warm, 1<<20, 1, 1
			cfg.Noise, cfg.CellLevels, cfg.GeneLevels, cfg.Housekeeping, cfg.Init = Dropout, 8, 8, true, InitData
			if held {
				cfg.HoldFrom = warm
			} else {
				cfg.BurnIn = 1 << 20
			}
			s, err := NewSampler(context.Background(), data, cfg)
			if err != nil {
				b.Fatal(err)
			}
			timeSweeps(b, s, warm+1, n, d, 1)
		})
	}
}

// timeSweeps runs warm sweeps of s untimed, then times a sweep per
// iteration, reporting entries/s/core: n·d per second of sweep over
// workers cores.
func timeSweeps(b *testing.B, s interface{ Step() (SweepStats, error) }, warm, n, d, workers int) {
	b.Helper()
	for range warm {
		if _, err := s.Step(); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Step(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(d)*float64(b.N)/b.Elapsed().Seconds()/float64(workers), "entries/s/core")
}
