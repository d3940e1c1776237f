package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"scpipe/enrich"
	"scpipe/internal/rundir"
	"scpipe/internal/stats/codematch"
	"scpipe/pipeline"
	"scpipe/shard"
	"scpipe/simulate"

	"scpipe/internal/rundir/rundirtest"
)

// run runs scpipe with args (without the program name) in-process.
func run(t *testing.T, args ...string) error {
	t.Helper()
	app := newApp()
	app.Writer, app.ErrWriter = &bytes.Buffer{}, &bytes.Buffer{}
	return app.RunContext(context.Background(), flagsFirst(app, append([]string{"scpipe"}, args...)))
}

// captureStdout runs fn with os.Stdout redirected and returns what it wrote.
func captureStdout(t *testing.T, fn func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() {
		var b bytes.Buffer
		b.ReadFrom(r)
		done <- b.Bytes()
	}()
	ferr := fn()
	w.Close()
	os.Stdout = old
	return string(<-done), ferr
}

func TestPlantedRecoveryThroughCLI(t *testing.T) {
	dir := t.TempDir()
	sim, shards, runDir := filepath.Join(dir, "sim"), filepath.Join(dir, "shards"), filepath.Join(dir, "run")
	steps := [][]string{
		{"simulate", "-o", sim, "--cells", "800", "--genes", "300", "--L", "3", "--code-density", "0.1", "--usage-density", "0.3", "--flip-on", "0.01", "--flip-off", "0.05", "--seed", "7", "--quiet"},
		{"ingest", sim, "-o", shards, "--quiet"},
		{"fit", shards, "-o", runDir, "--L", "2..4", "--burn-in", "30", "--samples", "20", "--quiet", "-j", "2"},
	}
	for _, args := range steps {
		if err := run(t, args...); err != nil {
			t.Fatalf("scpipe %s: %v", strings.Join(args, " "), err)
		}
	}
	out, err := captureStdout(t, func() error { return run(t, "info", shards, "--json") })
	if err != nil {
		t.Fatal(err)
	}
	var info struct{ Cells, Genes int }
	if err := json.Unmarshal([]byte(out), &info); err != nil || info.Cells != 800 {
		t.Fatalf("info --json: %v\n%s", err, out)
	}
	codes, err := rundir.ReadCodes(filepath.Join(rundir.FitDir(runDir, 3, 1), rundir.CodesFile))
	if err != nil {
		t.Fatal(err)
	}
	index := map[string]int{}
	for g, id := range codes.GeneIDs {
		index[id] = g
	}
	found := codematch.MAPSets(codes.Mean, 3)
	truth := readTruth(t, filepath.Join(sim, simulate.TruthDir, simulate.ProgramsFile), 3)
	for l, ids := range truth {
		planted := codematch.NewSet(len(codes.GeneIDs))
		for _, id := range ids {
			if g, ok := index[id]; ok {
				planted.Add(g)
			}
		}
		best := 0.0
		for _, s := range found {
			best = max(best, codematch.Jaccard(planted, s))
		}
		if best < 0.9 {
			t.Errorf("planted program %d: best code overlaps with Jaccard %.3f", l+1, best)
		}
	}
	enrichThroughCLI(t, runDir, dir, truth)
	reportThroughCLI(t, runDir, dir)
}

// enrichThroughCLI runs scpipe enrich on the planted run with a library of
// the planted programs, their symbols in upper case (matched
// case-insensitively to the run's), and checks that the flags reach enrich
// and that bad ones are refused with nothing written.
func enrichThroughCLI(t *testing.T, runDir, dir string, truth [][]string) {
	t.Helper()
	codes, err := rundir.ReadCodes(filepath.Join(rundir.FitDir(runDir, 3, 1), rundir.CodesFile))
	if err != nil {
		t.Fatal(err)
	}
	name := map[string]string{}
	for g, id := range codes.GeneIDs {
		name[id] = codes.GeneNames[g]
	}
	var gmt strings.Builder
	for l, ids := range truth {
		fmt.Fprintf(&gmt, "planted_%d\t", l+1)
		for _, id := range ids {
			if n, ok := name[id]; ok {
				gmt.WriteString("\t" + strings.ToUpper(n))
			}
		}
		gmt.WriteString("\n")
	}
	lib := filepath.Join(dir, "planted.gmt")
	if err := os.WriteFile(lib, []byte(gmt.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "enrich")
	if err := run(t, "enrich", runDir, "-o", out, "--L", "3", "--gmt", lib, "--threshold", "0.6", "--quiet"); err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(filepath.Join(out, enrich.IndexFile))
	if err != nil || strings.Count(string(index), "\n") != 4 {
		t.Errorf("index of --L 3: %v\n%s", err, index)
	}
	log, err := os.ReadFile(filepath.Join(out, enrich.LogFile))
	if err != nil || !strings.Contains(string(log), "threshold\t0.6") {
		t.Errorf("%s: %v\n%s", enrich.LogFile, err, log)
	}
	res, err := os.ReadFile(filepath.Join(out, enrich.EnrichmentDir, "planted.tsv"))
	if err != nil || !strings.Contains(string(res), "L03_code1\t3\t1\tall\tplanted_") {
		t.Errorf("enrichment/planted.tsv: %v\n%.300s", err, res)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"enrich", runDir, "-o", out}, "already exists (use --force"},
		{[]string{"enrich", runDir, "-o", out + "2", "--threshold", "2"}, "threshold 2 outside [0, 1]"},
		{[]string{"enrich", runDir, "-o", out + "2", "--L", "9"}, "no finished fit of L = 9"},
		{[]string{"enrich", runDir, "-o", out + "2", "--L", "x"}, `L spec "x"`},
		{[]string{"enrich", "-o", out + "2"}, "missing run directory"},
	} {
		if err := run(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("scpipe %s: error %v, want one containing %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
	if _, err := os.Stat(out + "2"); !os.IsNotExist(err) {
		t.Errorf("a failed enrich left %s2 (%v)", out, err)
	}
}

// readTruth reads the planted programs' gene ids from programs.tsv.
func readTruth(t *testing.T, path string, L int) [][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]string, L)
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(line, "\t")
		if i == 0 || len(f) != 2+L {
			continue
		}
		for l := range L {
			if f[2+l] == "1" {
				out[l] = append(out[l], f[0])
			}
		}
	}
	return out
}

// sharedData returns ../shared/data, skipping when it is absent.
func sharedData(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "shared", "data")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared test data not found at %s: %v", dir, err)
	}
	return dir
}

func TestBrainSubsetEndToEnd(t *testing.T) {
	data := sharedData(t)
	dir := t.TempDir()
	shards, runDir := filepath.Join(dir, "shards"), filepath.Join(dir, "run")
	input := filepath.Join(data, "brain1m-10k-subset", "derived_v2_filtered_gene_bc_matrices_h5.h5")
	if err := run(t, "ingest", input, "-o", shards, "--genome", "mm10", "--quiet"); err != nil {
		t.Fatal(err)
	}
	if err := run(t, "fit", shards, "-o", runDir, "--L", "2..4", "--chains", "1", "--burn-in", "4", "--samples", "4", "--max-burn-in", "0", "--starts", "1", "--quiet"); err != nil {
		t.Fatal(err)
	}
	rows, err := rundir.ReadSummary(filepath.Join(runDir, rundir.SummaryFile))
	if err != nil || len(rows) != 3 {
		t.Fatalf("summary: %d rows, %v", len(rows), err)
	}
	for L := 2; L <= 4; L++ {
		fd := rundir.FitDir(runDir, L, 1)
		codes, cells := rundirtest.Tables(t, fd)
		trace, err := rundir.ReadTrace(filepath.Join(fd, rundir.TraceFile))
		if err != nil {
			t.Fatal(err)
		}
		// The 1% filter keeps a subset of the 1000 genes; all 10000 cells stay.
		if codes.L != L || len(codes.GeneIDs) == 0 || len(codes.GeneIDs) > 1000 || !strings.HasPrefix(codes.GeneIDs[0], "ENSMUSG") {
			t.Errorf("L=%d codes: L=%d, %d genes, first %q", L, codes.L, len(codes.GeneIDs), codes.GeneIDs[0])
		}
		if len(cells.Barcodes) != 10000 || cells.Barcodes[0] != "AAACCTGAGATAGGAG-1" {
			t.Errorf("L=%d cells: %d barcodes, first %q", L, len(cells.Barcodes), cells.Barcodes[0])
		}
		if len(trace) != 8 {
			t.Errorf("L=%d: %d trace rows, want 8", L, len(trace))
		}
	}
}

func TestCLIErrors(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bad.toml")
	os.WriteFile(cfg, []byte("L = \"2\"\nburnin = 5\n"), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"ingest", "-o", filepath.Join(dir, "x")}, "missing input"},
		{[]string{"fit", dir, "-o", filepath.Join(dir, "r"), "--L", "5..2"}, "5..2"},
		{[]string{"fit", dir, "-o", filepath.Join(dir, "r"), "--L", "0"}, `"0"`},
		{[]string{"fit", dir, "-o", filepath.Join(dir, "r"), "--config", cfg}, "unknown key burnin"},
		{[]string{"info", filepath.Join(dir, "nope")}, "nope"},
		{[]string{"simulate", "-o", filepath.Join(dir, "s"), "--L", "0"}, "L must be"},
		{[]string{"ingest", dir, "-o", filepath.Join(dir, "y"), "-j", "0"}, "--threads"},
		{[]string{"ingest", dir, "-o", filepath.Join(dir, "y"), "--select-genes", "0"}, "--select-genes 0: want a positive number"},
		{[]string{"ingest", dir, "-o", filepath.Join(dir, "y"), "--select-genes", "-3"}, "--select-genes -3: want a positive number"},
		{[]string{"ingest", dir, "-o", filepath.Join(dir, "y"), "--exclude-genes", "RP[SL"}, `--exclude-genes: ingest: gene pattern "RP[SL"`},
		{[]string{"export", dir}, "give -o FILE.h5ad, --cnmf DIR or both"},
		// 0 was taken as the default while -1 was refused (issue 44 item 11).
		{[]string{"export", dir, "-o", filepath.Join(dir, "e.h5ad"), "--top", "0"}, "--top 0: want at least 1"},
		{[]string{"export", dir, "-o", filepath.Join(dir, "e.h5ad"), "--chain", "0"}, "--chain 0: want at least 1"},
		{[]string{"export", dir, "-o", filepath.Join(t.TempDir(), "e.h5ad")}, "holds no finished fit"},
	}
	for _, tt := range tests {
		err := run(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("scpipe %s: error %v, want one containing %q", strings.Join(tt.args, " "), err, tt.want)
		}
	}
}

// TestIngestSelectInfo: a selection and an exclusion made at ingest show
// in scpipe info, as text and as JSON.
func TestIngestSelectInfo(t *testing.T) {
	dir := t.TempDir()
	sim, shards := filepath.Join(dir, "sim"), filepath.Join(dir, "shards")
	steps := [][]string{
		{"simulate", "-o", sim, "--cells", "200", "--genes", "120", "--L", "2", "--seed", "3", "--quiet"},
		{"ingest", sim, "-o", shards, "--select-genes", "40", "--exclude-genes", "^gene_?1", "--min-cell-frac", "0", "--quiet"},
	}
	for _, args := range steps {
		if err := run(t, args...); err != nil {
			t.Fatalf("scpipe %s: %v", strings.Join(args, " "), err)
		}
	}
	text, err := captureStdout(t, func() error { return run(t, "info", shards) })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "gene_selection") || !strings.Contains(text, "binomial-deviance: 40 of") || !strings.Contains(text, "^gene_?1 (") {
		t.Errorf("info does not show the selection and the exclusion:\n%s", text)
	}
	out, err := captureStdout(t, func() error { return run(t, "info", shards, "--json") })
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Genes            int
		GeneSelection    string `json:"gene_selection"`
		SelectGenes      int    `json:"select_genes"`
		SelectedFrom     int    `json:"selected_from"`
		DroppedByExclude int    `json:"dropped_by_exclude"`
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil || info.Genes != 40 || info.GeneSelection != "binomial-deviance" || info.SelectGenes != 40 ||
		info.DroppedByExclude == 0 || info.SelectedFrom != 120-info.DroppedByExclude {
		t.Errorf("info --json: %+v (%v)\n%s", info, err, out)
	}
}

func TestFitConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "c.toml")
	os.WriteFile(cfgFile, []byte("L = \"3,5\"\nchains = 3\nthreads = 1\n"), 0o644)
	tests := []struct {
		args       []string
		env        string
		wantL      string
		wantChains int
		wantThread int
		wantGiven  string // the settings a resumed run takes from the command, not from its config.toml
	}{
		{[]string{"--config", cfgFile}, "", "3,5", 3, 1, "L chains threads"},
		{[]string{"--config", cfgFile, "--L", "4", "-j", "2"}, "", "4", 3, 2, "L chains threads"},
		{[]string{"--config", cfgFile}, "2", "3,5", 3, 2, "L chains threads"},
		{[]string{"--chains", "2"}, "", "2..10", 2, runtime.NumCPU(), "chains"},
		{nil, "", "2..10", 2, runtime.NumCPU(), ""},
	}
	for _, tt := range tests {
		if tt.env != "" {
			t.Setenv("SCPIPE_THREADS", tt.env)
		} else {
			t.Setenv("SCPIPE_THREADS", "")
			os.Unsetenv("SCPIPE_THREADS")
		}
		var got pipeline.FitConfig
		var given []string
		app := newApp()
		app.Command("fit").Action = func(c *cli.Context) error {
			var err error
			got, given, err = fitConfig(c, "shards")
			return err
		}
		args := append([]string{"scpipe", "fit", "shards", "-o", filepath.Join(dir, "run")}, tt.args...)
		if err := app.Run(flagsFirst(app, args)); err != nil {
			t.Fatal(err)
		}
		if got.L.String() != tt.wantL || got.Chains != tt.wantChains || got.Threads != tt.wantThread {
			t.Errorf("%v (SCPIPE_THREADS=%q): L=%q chains=%d threads=%d; want %q, %d, %d", tt.args, tt.env, got.L, got.Chains, got.Threads, tt.wantL, tt.wantChains, tt.wantThread)
		}
		if given == nil || strings.Join(given, " ") != tt.wantGiven {
			t.Errorf("%v (SCPIPE_THREADS=%q): given %q, want %q (not nil)", tt.args, tt.env, given, tt.wantGiven)
		}
	}
}

// TestThreadsLeaveGOMAXPROCS: the thread count, from -j, SCPIPE_THREADS
// or fit's threads key, travels to every package as its options' Threads
// or Workers (TestFitConfigPrecedence checks that fit's reaches its
// configuration); no command sets a process-wide switch such as
// GOMAXPROCS instead.
func TestThreadsLeaveGOMAXPROCS(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(cfgFile, []byte("threads = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := runtime.GOMAXPROCS(0)
	for _, args := range [][]string{
		{"fit", filepath.Join(dir, "no-shards"), "-o", filepath.Join(dir, "run"), "-q", "--config", cfgFile},
		{"info", "-j", "1", filepath.Join(dir, "no-shards")},
	} {
		// Each fails on the missing shards, after the count is decided.
		if err := run(t, args...); err == nil {
			t.Fatalf("%v: read missing shards", args)
		}
		if got := runtime.GOMAXPROCS(0); got != want {
			t.Errorf("%v: GOMAXPROCS %d, want it left at %d", args, got, want)
		}
	}
}

// TestNoDirectIO: --no-direct-io (and SCPIPE_NO_DIRECT_IO) writes the
// same shards as the default, for ingest, for simulate --shards and for
// the fit mask of a fit that holds entries out; only the route to the disk
// differs.
func TestNoDirectIO(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	if err := run(t, "simulate", "-o", sim, "--cells", "300", "--genes", "150", "--L", "2", "--seed", "5", "--quiet"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args func(out string, noDirect bool) []string
		sub  string // the shards' folder under out
	}{
		{"ingest", func(out string, noDirect bool) []string {
			a := []string{"ingest", sim, "-o", out, "--quiet"}
			if noDirect {
				a = append(a, "--no-direct-io")
			}
			return a
		}, ""},
		{"simulate", func(out string, noDirect bool) []string {
			a := []string{"simulate", "-o", out, "--shards", "--cells", "300", "--genes", "150", "--L", "2", "--seed", "5", "--missing", "0.1", "--quiet"}
			if noDirect {
				a = append(a, "--no-direct-io")
			}
			return a
		}, simulate.ShardsDir},
		{"fit", func(out string, noDirect bool) []string {
			// The shards of the ingest case, written before.
			a := []string{"fit", filepath.Join(dir, "ingest-direct"), "-o", out, "--L", "2", "--chains", "1", "--burn-in", "2", "--samples", "1", "--starts", "1", "--holdout", "0.05", "--quiet"}
			if noDirect {
				a = append(a, "--no-direct-io")
			}
			return a
		}, "fitmask"},
	} {
		direct, cached := filepath.Join(dir, tc.name+"-direct"), filepath.Join(dir, tc.name+"-cached")
		if err := run(t, tc.args(direct, false)...); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if err := run(t, tc.args(cached, true)...); err != nil {
			t.Fatalf("%s --no-direct-io: %v", tc.name, err)
		}
		files, err := os.ReadDir(filepath.Join(direct, tc.sub))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, f := range files {
			if f.Name() == shard.ManifestName {
				continue // it names the output path
			}
			a, errA := os.ReadFile(filepath.Join(direct, tc.sub, f.Name()))
			b, errB := os.ReadFile(filepath.Join(cached, tc.sub, f.Name()))
			if errA != nil || errB != nil || !bytes.Equal(a, b) {
				t.Errorf("%s: %s differs with --no-direct-io (%v, %v)", tc.name, f.Name(), errA, errB)
			}
			n++
		}
		if n == 0 {
			t.Errorf("%s: no shard files compared in %s", tc.name, direct)
		}
	}
}

// TestSharedRunThroughCLI: a run prepared with --prepare and fitted by one
// `fit --L l --chain-index k` per fit (--chain, its old name, for one),
// which read the run's settings from its config.toml, then summarised,
// holds what one `fit` writes; summarize --strict fails while fits are
// missing and names them.
func TestSharedRunThroughCLI(t *testing.T) {
	dir := t.TempDir()
	sim, shards, cfg := filepath.Join(dir, "sim"), filepath.Join(dir, "shards"), filepath.Join(dir, "c.toml")
	os.WriteFile(cfg, []byte("L = \"2..3\"\nchains = 2\nburn_in = 4\nsamples = 4\nstarts = 1\n"), 0o644)
	direct, shared := filepath.Join(dir, "direct"), filepath.Join(dir, "shared")
	for _, args := range [][]string{
		{"simulate", "-o", sim, "--cells", "300", "--genes", "150", "--L", "2", "--seed", "5", "--quiet"},
		{"ingest", sim, "-o", shards, "--quiet"},
		{"fit", shards, "-o", direct, "--config", cfg, "--quiet", "-j", "2"},
		{"fit", shards, "-o", shared, "--config", cfg, "--prepare", "--quiet"},
		{"fit", shards, "-o", shared, "--L", "3", "--chain-index", "2", "--quiet", "-j", "1"},
	} {
		if err := run(t, args...); err != nil {
			t.Fatalf("scpipe %s: %v", strings.Join(args, " "), err)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"summarize", shared, "--strict", "--quiet"}, "3 fits of " + shared + " have not finished: L=2 chain 1 (not started), L=2 chain 2 (not started), L=3 chain 1 (not started)"},
		{[]string{"fit", shards, "-o", shared, "--prepare", "--chain-index", "1"}, "--prepare fits nothing"},
		{[]string{"fit", shards, "-o", shared, "--L", "3", "--chain-index", "2", "--quiet"}, "use --resume"},
		{[]string{"fit", shards, "-o", shared, "--chain-index", "1", "--seed", "2", "--quiet"}, "seed: 1 ≠ 2"},
		{[]string{"summarize", filepath.Join(dir, "nothing")}, "not a run directory"},
	} {
		if err := run(t, tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("scpipe %s: %v (want an error containing %q)", strings.Join(tt.args, " "), err, tt.want)
		}
	}
	for _, args := range [][]string{
		{"fit", shards, "-o", shared, "--chain-index", "1", "--quiet"}, // every L of the run
		{"fit", shards, "-o", shared, "--L", "2", "--chain-index", "2", "--quiet"},
		{"summarize", shared, "--strict", "--quiet"},
	} {
		if err := run(t, args...); err != nil {
			t.Fatalf("scpipe %s: %v", strings.Join(args, " "), err)
		}
	}
	for _, f := range []string{"L02/chain1/codes.parquet", "L03/chain2/cells.parquet", rundir.SelectionFile} {
		a, _ := os.ReadFile(filepath.Join(direct, f))
		b, err := os.ReadFile(filepath.Join(shared, f))
		if err != nil || len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs between the direct and the shared run (%v)", f, err)
		}
	}
}

// TestInfoShowsAmbient: scpipe info says how the counts were binarised,
// the ambient fraction beside the threshold, as text and as JSON; a
// threshold of 0 alone read as "count > 0" for shards that were weighed
// against ambient RNA.
func TestInfoShowsAmbient(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	if err := run(t, "simulate", "-o", sim, "--kind", "singlecell", "--cells", "200", "--genes", "120", "--seed", "3", "--quiet"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ambient string
		want    float64
	}{{"0.05", 0.05}, {"0", 0}} {
		shards := filepath.Join(dir, "shards-"+tc.ambient)
		if err := run(t, "ingest", sim, "-o", shards, "--ambient", tc.ambient, "--quiet"); err != nil {
			t.Fatal(err)
		}
		text, err := captureStdout(t, func() error { return run(t, "info", shards) })
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("ambient_fraction     %v\n", tc.want); !strings.Contains(text, want) {
			t.Errorf("--ambient %s: info lacks %q:\n%s", tc.ambient, want, text)
		}
		out, err := captureStdout(t, func() error { return run(t, "info", shards, "--json") })
		if err != nil {
			t.Fatal(err)
		}
		var info struct {
			Ambient *float64 `json:"ambient_fraction"`
		}
		if err := json.Unmarshal([]byte(out), &info); err != nil || info.Ambient == nil || *info.Ambient != tc.want {
			t.Errorf("--ambient %s: info --json ambient_fraction %v (%v), want %v\n%s", tc.ambient, info.Ambient, err, tc.want, out)
		}
	}
}
