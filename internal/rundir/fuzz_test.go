package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The kinds of run file FuzzRunFiles writes its input as.
const (
	fuzzCodes = iota
	fuzzCells
	fuzzTrace
	fuzzSummary
	fuzzCheckpoint
	fuzzChecksums // SHA256SUMS beside a good codes.parquet
	fuzzConsensus
	fuzzKinds
)

// FuzzRunFiles feeds any bytes to the readers of a run directory's files:
// the three Parquet tables (as a run without SHA256SUMS has them, so that
// the bytes reach the Parquet decoder), summary.tsv, a checkpoint,
// SHA256SUMS itself, and a consensus's programs.tsv. None may panic, exhaust memory or hang; every error
// names the file; a SHA256SUMS accepted must hold the table's true sum.
func FuzzRunFiles(f *testing.F) {
	seeds := f.TempDir()
	smallFit(f, seeds)
	err := errors.Join(
		WriteSummary(filepath.Join(seeds, SummaryFile), []SummaryRow{{L: 2, Chain: 1, Sweeps: 10, LogLik: -5, Agreement: 1}}),
		WriteCheckpoint(filepath.Join(seeds, CheckpointFile), CheckpointMeta{L: 2, Chain: 1, Sweep: 3, ConfigHash: "h", Created: time.Unix(0, 0).UTC()}, []byte("state")),
		WriteConsensus(filepath.Join(seeds, ConsensusFile), []ConsensusProgram{
			{Program: 1, Kept: true, Found: 2, Chains: 3, Frequency: 2.0 / 3, Repeat: 0.74, ExpectedJaccard: 0.9, Agreement: 0.9, Genes: 4, Codes: []int{1, 0, 2}}}),
	)
	if err != nil {
		f.Fatal(err)
	}
	for kind, name := range []string{CodesFile, CellsFile, TraceFile, SummaryFile, CheckpointFile, checksumsFile, ConsensusFile} {
		b, err := os.ReadFile(filepath.Join(seeds, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(kind), b)
	}
	good, err := os.ReadFile(filepath.Join(seeds, CodesFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		dir := t.TempDir()
		write := func(name string, b []byte) string {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, b, 0o666); err != nil {
				t.Fatal(err)
			}
			return p
		}
		var path string
		var err error
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		switch kind % fuzzKinds {
		case fuzzCodes:
			path = write(CodesFile, data)
			_, err = ReadCodes(path)
		case fuzzCells:
			path = write(CellsFile, data)
			_, err = ReadCells(path)
		case fuzzTrace:
			path = write(TraceFile, data)
			_, err = ReadTrace(path)
		case fuzzSummary:
			path = write(SummaryFile, data)
			_, err = ReadSummary(path)
		case fuzzCheckpoint:
			path = write(CheckpointFile, data)
			_, _, err = ReadCheckpoint(path)
		case fuzzChecksums:
			path = write(CodesFile, good)
			write(checksumsFile, data)
			_, err = ReadCodes(path)
			if err == nil && !strings.Contains(string(data), "  "+CodesFile+"\n") {
				t.Fatalf("codes read with a SHA256SUMS that has no line for it: %q", data)
			}
		case fuzzConsensus:
			path = write(ConsensusFile, data)
			_, err = ReadConsensus(path)
		}
		if err != nil && !strings.Contains(err.Error(), dir) {
			t.Fatalf("error does not name the file %s: %v", path, err)
		}
		// A damaged file of a few kilobytes once had arrow-go allocate
		// 1.3 GB, the length its footer declared for a column chunk
		// (checkChunk); a page header can declare 2 GB (cappedAllocator).
		// arrow-go's reads of page headers grow a buffer to 16 MB, some
		// times over, before they give up.
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if a := after.TotalAlloc - before.TotalAlloc; a > 256<<20 {
			t.Fatalf("reading %d bytes allocated %d (error %v)", len(data), a, err)
		}
	})
}
