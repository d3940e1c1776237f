package ingest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/klauspost/compress/gzip"
	"golang.org/x/sync/errgroup"

	"scpipe/ingest/internal/h5gen"
)

// benchSize is one rung of the benchmark ladder: genes × cells at density.
type benchSize struct {
	genes, cells int
	density      float64
	big          bool // only with SCPIPE_BIG=1
}

var benchLadder = []benchSize{
	{2000, 5000, 0.05, false},   // 5e5 nonzeros
	{5000, 40000, 0.05, false},  // 1e7
	{20000, 100000, 0.05, true}, // 1e8
	{25000, 200000, 0.04, true}, // 2e8
}

func (s benchSize) String() string {
	return fmt.Sprintf("%dx%d", s.genes, s.cells)
}

// writeBenchMTX writes a genes × cells Matrix Market file in 10x order
// (column by column) with each entry present with probability density and
// counts 1 + a geometric-ish draw; it returns the entry count.
func writeBenchMTX(b *testing.B, path string, s benchSize, gz bool) int64 {
	b.Helper()
	// Draw the entries twice with the same seed: once to count (the header
	// comes first), once to write, so nothing is held in memory.
	draw := func(emit func(g, c, v int)) {
		rng := rand.New(rand.NewPCG(1, 2))
		for c := 1; c <= s.cells; c++ {
			for g := 1; g <= s.genes; g++ {
				if rng.Float64() < s.density {
					emit(g, c, 1+int(rng.ExpFloat64()*2))
				}
			}
		}
	}
	var n int64
	draw(func(int, int, int) { n++ })
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	var w *bufio.Writer
	var zw *gzip.Writer
	if gz {
		zw, _ = gzip.NewWriterLevel(f, gzip.BestSpeed)
		w = bufio.NewWriterSize(zw, 1<<20)
	} else {
		w = bufio.NewWriterSize(f, 1<<20)
	}
	fmt.Fprintf(w, "%%%%MatrixMarket matrix coordinate integer general\n%%metadata_json: {}\n%d %d %d\n", s.genes, s.cells, n)
	buf := make([]byte, 0, 64)
	draw(func(g, c, v int) {
		buf = strconv.AppendInt(buf[:0], int64(g), 10)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, int64(c), 10)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, int64(v), 10)
		buf = append(buf, '\n')
		w.Write(buf)
	})
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return n
}

// benchInput returns the path of the generated benchmark input named key
// and its number of stored entries. Generating the 1e8-entry inputs takes
// minutes and gigabytes, so when SCPIPE_BENCH_CACHE names a folder the input
// is kept there across runs, with its entry count in key+".nnz"; the key
// must name every parameter of gen, and the folder must be emptied when the
// generators change. Without it the input goes to b.TempDir().
func benchInput(b *testing.B, key string, gen func(path string) (int64, error)) (string, int64) {
	b.Helper()
	dir := os.Getenv("SCPIPE_BENCH_CACHE")
	if dir == "" {
		path := filepath.Join(b.TempDir(), key)
		nnz, err := gen(path)
		if err != nil {
			b.Fatal(err)
		}
		return path, nnz
	}
	path := filepath.Join(dir, key)
	if txt, err := os.ReadFile(path + ".nnz"); err == nil {
		if nnz, err := strconv.ParseInt(string(txt), 10, 64); err == nil {
			if _, err := os.Stat(path); err == nil {
				return path, nnz
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	// Generate under a temporary name, so an interrupted run leaves no
	// truncated input behind a valid count file.
	tmp := path + ".tmp"
	nnz, err := gen(tmp)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = os.WriteFile(path+".nnz", []byte(strconv.FormatInt(nnz, 10)), 0o644)
	}
	if err != nil {
		os.Remove(tmp)
		b.Fatal(err)
	}
	return path, nnz
}

// procStatus returns a field of /proc/self/status (a size in kB) in bytes,
// or -1 where unavailable.
func procStatus(field string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		if v, ok := bytes.CutPrefix(line, []byte(field+":")); ok {
			kb, err := strconv.ParseFloat(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 64)
			if err != nil {
				return -1
			}
			return kb * 1024
		}
	}
	return -1
}

// vmHWM returns the process's peak resident set size in bytes, or -1
// where unavailable.
func vmHWM() float64 { return procStatus("VmHWM") }

// resetHWM frees what input generation used and resets the kernel's peak
// RSS counter (Linux: write 5 to clear_refs), so that VmHWM afterwards
// measures ingest alone.
func resetHWM() {
	runtime.GC()
	debug.FreeOSMemory()
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// benchIngest runs Run b.N times on in and reports nonzeros per second (of
// wall time and of CPU time), the last run's pass times (count: the one
// read of the input; write: setting the kept bits; commit: the shard's Xᵀ,
// checksums and fsync), the peak RSS, which includes the shard's
// memory-mapped blocks (shard-X-MiB, the size of X), and the anonymous
// memory left at the end. Between runs, with the timer stopped, the
// previous output is deleted and the disks synced, as a user's run starts
// with no output to replace and no deletion for its fsyncs to flush.
func benchIngest(b *testing.B, in string, nnz int64, tune ...func(*Options)) {
	out := filepath.Join(b.TempDir(), "shards")
	opt := DefaultOptions()
	opt.Input, opt.Output = in, out
	for _, f := range tune {
		f(&opt)
	}
	resetHWM()
	b.ReportAllocs()
	b.ResetTimer()
	var cpu float64
	var rep *Report
	for b.Loop() {
		b.StopTimer()
		if err := os.RemoveAll(out); err != nil {
			b.Fatal(err)
		}
		syncDisks()
		cpu0 := cpuSeconds()
		b.StartTimer()
		var err error
		if rep, err = Run(context.Background(), opt); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += cpuSeconds() - cpu0
		b.StartTimer()
	}
	b.StopTimer()
	if rep.NNZ != nnz {
		b.Fatalf("read %d nonzeros, generated %d", rep.NNZ, nnz)
	}
	b.ReportMetric(float64(nnz)*float64(b.N)/b.Elapsed().Seconds(), "nnz/s")
	// Entries per CPU-second: the throughput per core when every core is
	// busy, and a figure that other processes on a shared machine disturb
	// less than wall time.
	if cpu > 0 {
		b.ReportMetric(float64(nnz)*float64(b.N)/cpu, "nnz/cpu-s")
	}
	b.ReportMetric(rep.Count.Seconds(), "count-s")
	if opt.SelectGenes > 0 {
		b.ReportMetric(rep.Select.Seconds(), "select-s")
	}
	b.ReportMetric(rep.Write.Seconds(), "write-s")
	b.ReportMetric(rep.Commit.Seconds(), "commit-s")
	b.ReportMetric(vmHWM()/(1<<20), "peak-rss-MiB")
	// Anonymous memory (the Go heap and stacks) at the end, as opposed to
	// file-backed pages such as the shard's mapped blocks: the part of the
	// peak that does not scale with the output.
	b.ReportMetric(procStatus("RssAnon")/(1<<20), "rss-anon-MiB")
	b.ReportMetric(float64(rep.CellsOut)*float64(rep.GenesOut)/8/(1<<20), "shard-X-MiB")
}

func skipBig(b *testing.B, s benchSize) {
	if s.big && os.Getenv("SCPIPE_BIG") != "1" {
		b.Skipf("%v: set SCPIPE_BIG=1 for inputs of ≥ 1e8 nonzeros", s)
	}
}

// BenchmarkIngestMTX ingests generated 10x-style Matrix Market files, gzip
// and plain, with the default filter.
func BenchmarkIngestMTX(b *testing.B) {
	for _, s := range benchLadder {
		for _, gz := range []bool{true, false} {
			name := s.String() + "/plain"
			if gz {
				name = s.String() + "/gzip"
			}
			b.Run(name, func(b *testing.B) {
				skipBig(b, s)
				key := fmt.Sprintf("mtx-%v-d%g-gz%v.mtx", s, s.density, gz)
				path, nnz := benchInput(b, key, func(path string) (int64, error) {
					return writeBenchMTX(b, path, s, gz), nil
				})
				benchIngest(b, path, nnz)
			})
		}
	}
}

// benchChunks are the chunk lengths of the generated HDF5 inputs: 65 536
// elements; 8 192, as PyTables chunks the 1.3M-cell file (hundreds of
// thousands of chunks); and CellRanger's 80 000.
var benchChunks = []int{1 << 16, 1 << 13, 80000}

// BenchmarkIngestHDF5 ingests generated CellRanger v2 HDF5 files stored as
// CellRanger writes them (chunked, shuffle + deflate) with the default
// filter, in chunks of each of benchChunks.
func BenchmarkIngestHDF5(b *testing.B) {
	for _, s := range benchLadder {
		for _, chunk := range benchChunks {
			name := s.String()
			if chunk != 1<<16 {
				name += fmt.Sprintf("/chunk%d", chunk)
			}
			b.Run(name, func(b *testing.B) {
				skipBig(b, s)
				key := fmt.Sprintf("tenxv2-%v-d%g-seed1-chunk%d-deflate4-shuffle.h5", s, s.density, chunk)
				path, nnz := benchInput(b, key, func(path string) (int64, error) {
					return h5gen.GenerateTenXV2(path, s.genes, s.cells, s.density, 1,
						h5gen.Options{Chunk: chunk, Deflate: 4, Shuffle: true})
				})
				benchIngest(b, path, nnz)
			})
		}
	}
}

// BenchmarkIngestHDF5Select is BenchmarkIngestHDF5 (chunks of 65 536)
// with --select-genes: the deviance's sums in the counting pass, the runs
// cut by range edges and the ranking. It asks for as many genes as the
// input has, so that every gene the 1% filter keeps is kept and the write
// pass is the same: its ratio to BenchmarkIngestHDF5 is the selection's
// cost.
func BenchmarkIngestHDF5Select(b *testing.B) {
	benchIngestVariant(b, func(o *Options, s benchSize) { o.SelectGenes = s.genes })
}

// BenchmarkIngestHDF5NoAmbient is BenchmarkIngestHDF5 (chunks of 65 536)
// with --ambient 0, the paper's count > 0: its ratio to BenchmarkIngestHDF5
// is the cost of the ambient RNA's levels (ambient.go).
func BenchmarkIngestHDF5NoAmbient(b *testing.B) {
	benchIngestVariant(b, func(o *Options, _ benchSize) { o.Ambient = 0 })
}

// benchIngestVariant is BenchmarkIngestHDF5 (chunks of 65 536) with the
// options tune changes.
func benchIngestVariant(b *testing.B, tune func(*Options, benchSize)) {
	for _, s := range benchLadder {
		b.Run(s.String(), func(b *testing.B) {
			skipBig(b, s)
			key := fmt.Sprintf("tenxv2-%v-d%g-seed1-chunk%d-deflate4-shuffle.h5", s, s.density, 1<<16)
			path, nnz := benchInput(b, key, func(path string) (int64, error) {
				return h5gen.GenerateTenXV2(path, s.genes, s.cells, s.density, 1,
					h5gen.Options{Chunk: 1 << 16, Deflate: 4, Shuffle: true})
			})
			benchIngest(b, path, nnz, func(o *Options) { tune(o, s) })
		})
	}
}

// BenchmarkIngestHDF5Paper ingests a generated file of the size and shape
// of the paper's 1.3M-cell file (1.3 million cells × 28 000 genes at 6.9%:
// about 2.5e9 nonzeros), chunked as PyTables chunks it (8 192 elements).
// It runs only with SCPIPE_HUGE=1: the input (about 4 GB, drawn and
// written in a streaming pass, see h5gen.GenerateTenXV2Stream) takes
// minutes to generate, and the spill and shards take another 10 GB of disk.
func BenchmarkIngestHDF5Paper(b *testing.B) {
	if os.Getenv("SCPIPE_HUGE") != "1" {
		b.Skip("set SCPIPE_HUGE=1 (and SCPIPE_BENCH_CACHE) for the 2.5e9-nonzero input")
	}
	s := benchSize{28000, 1300000, 0.069, true}
	key := fmt.Sprintf("tenxv2-%v-d%g-seed1-chunk8192-deflate4-shuffle-streamed.h5", s, s.density)
	path, nnz := benchInput(b, key, func(path string) (int64, error) {
		return h5gen.GenerateTenXV2Stream(context.Background(), path, s.genes, s.cells, s.density, 1,
			h5gen.Options{Chunk: 1 << 13, Deflate: 4, Shuffle: true, Workers: goroutines(0)})
	})
	benchIngest(b, path, nnz)
}

// BenchmarkReadTenXArrays reads only the `indices` (as int32) and `data` (as
// float64) arrays of the generated 10x v2 HDF5 files, in the ranges and on
// the workers the counting pass uses (one h5 view each), and checks the
// entries as it does: the HDF5 reader's share of ingest, comparable with
// reading the same arrays through h5py. It also shows the cost per chunk,
// for each of benchChunks.
func BenchmarkReadTenXArrays(b *testing.B) {
	for _, s := range benchLadder {
		for _, chunk := range benchChunks {
			for _, procs := range []int{1, runtime.NumCPU()} {
				b.Run(fmt.Sprintf("%v/chunk%d/procs=%d", s, chunk, procs), func(b *testing.B) {
					skipBig(b, s)
					key := fmt.Sprintf("tenxv2-%v-d%g-seed1-chunk%d-deflate4-shuffle.h5", s, s.density, chunk)
					path, nnz := benchInput(b, key, func(path string) (int64, error) {
						return h5gen.GenerateTenXV2(path, s.genes, s.cells, s.density, 1,
							h5gen.Options{Chunk: chunk, Deflate: 4, Shuffle: true})
					})
					src, err := openSource(&Options{Input: path, Workers: goroutines(0)})
					if err != nil {
						b.Fatal(err)
					}
					defer src.close()
					n, open := src.(ranger).ranges()
					readers := make([]rangeReader, procs)
					for w := range readers {
						if readers[w], err = open(); err != nil {
							b.Fatal(err)
						}
					}
					b.ResetTimer()
					for b.Loop() {
						var next atomic.Int64
						var g errgroup.Group
						for _, read := range readers {
							g.Go(func() error {
								var bt batch
								for r := int(next.Add(1) - 1); r < n; r = int(next.Add(1) - 1) {
									if err := read(r, &bt); err != nil {
										return err
									}
								}
								return nil
							})
						}
						if err := g.Wait(); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(nnz)*float64(b.N)/b.Elapsed().Seconds()/float64(procs), "nnz/s/core")
				})
			}
		}
	}
}

// BenchmarkIngestSamples ingests the cells of one generated 10x HDF5 file
// and about as many split into 4 and 12 files read as samples: the
// throughput per core of several inputs against one's (the samples' reads
// one after another, their genes matched, their barcodes suffixed, the
// ambient RNA's levels per sample).
func BenchmarkIngestSamples(b *testing.B) {
	// The last size is issue 43's: twelve samples of 100 000 cells.
	for _, s := range []benchSize{{2000, 24000, 0.05, false}, {5000, 48000, 0.05, false}, {2000, 1200000, 0.05, true}} {
		for _, k := range []int{1, 4, 12} {
			b.Run(fmt.Sprintf("%v/inputs%d", s, k), func(b *testing.B) {
				skipBig(b, s)
				part := benchSize{s.genes, s.cells / k, s.density, false}
				var samples []Sample
				var nnz int64
				for i := range k {
					key := fmt.Sprintf("tenxv2-%v-d%g-seed%d-chunk65536-deflate4-shuffle.h5", part, s.density, i+1)
					path, n := benchInput(b, key, func(path string) (int64, error) {
						return h5gen.GenerateTenXV2(path, part.genes, part.cells, s.density, uint64(i+1),
							h5gen.Options{Chunk: 1 << 16, Deflate: 4, Shuffle: true})
					})
					samples = append(samples, Sample{Name: fmt.Sprintf("s%d", i+1), Path: path})
					nnz += n
				}
				benchIngest(b, samples[0].Path, nnz, func(o *Options) {
					if k > 1 {
						o.Input, o.Samples = "", samples
					}
				})
			})
		}
	}
}
