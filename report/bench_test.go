package report

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"scpipe/internal/rundir"
)

// paperRun is a run directory of the paper's size, as scpipe fit writes it
// with its defaults (one chain, 125 sweeps, a housekeeping code): 1.3
// million cells × 11 000 genes at L = 2..10, ten planted blocks of 330
// genes (3% of the genes each) that split as L grows.
var paperRun = synthetic{Cells: 1_300_000, Genes: 11_000, Blocks: 10, BlockGenes: 330,
	Ls: []int{2, 3, 4, 5, 6, 7, 8, 9, 10}, Chains: 1, Sweeps: 125, BurnIn: 25, Housekeeping: true, Seed: 1}

// paperRunDir returns the run of paperRun under $SCPIPE_REPORT_PAPER,
// writing it the first time (about a minute), or skips without it.
func paperRunDir(tb testing.TB) string {
	root := os.Getenv("SCPIPE_REPORT_PAPER")
	if root == "" {
		tb.Skip("SCPIPE_REPORT_PAPER is not set: set it to a folder for a run of 1.3M cells × 11k genes at L = 2..10 (about 0.5 GB)")
	}
	run := filepath.Join(root, "run")
	if _, err := os.Stat(filepath.Join(run, rundir.SummaryFile)); err != nil {
		os.RemoveAll(run)
		paperRun.write(tb, run)
	}
	return run
}

// TestWritePaperRun writes the paper-sized run (when SCPIPE_REPORT_PAPER
// is set), so that scpipe report can be timed on it:
//
//	SCPIPE_REPORT_PAPER=/tmp/paper go test ./report -run WritePaperRun -timeout 30m
//	/usr/bin/time -v scpipe report /tmp/paper/run -o /tmp/paper/report.html --force
func TestWritePaperRun(t *testing.T) { paperRunDir(t) }

// BenchmarkReportPaper writes the report of the paper-sized run, and
// reports the process's peak resident memory.
//
//	SCPIPE_REPORT_PAPER=/tmp/paper go test ./report -run XXX -bench ReportPaper -benchtime 3x
func BenchmarkReportPaper(b *testing.B) {
	run := paperRunDir(b)
	out := filepath.Join(filepath.Dir(run), "bench-report.html")
	b.ResetTimer()
	for range b.N {
		if _, err := Write(context.Background(), Options{Run: run, Out: out, Threshold: 0.5, Force: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if st, err := os.Stat(out); err == nil {
		b.ReportMetric(float64(st.Size())/(1<<20), "html-MiB")
	}
	if kb := peakRSSkB(); kb > 0 {
		b.ReportMetric(float64(kb)/1024, "peak-rss-MiB")
	}
}

// peakRSSkB reads the process's peak resident set (VmHWM) in kB, 0 where
// /proc is not there.
func peakRSSkB() int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return kb
		}
	}
	return 0
}
