package pipeline

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"scpipe/internal/rundir"
)

func TestRunProgress(t *testing.T) {
	t.Parallel()
	cfg := DefaultFitConfig()
	cfg.Output, cfg.Chains = t.TempDir(), 2
	cfg.BurnIn, cfg.Samples, cfg.Starts, cfg.StartSweeps = 10, 10, 0, 0
	// L = 2 chain 1 is complete: it is not counted.
	done := rundir.FitDir(cfg.Output, 2, 1)
	if err := os.MkdirAll(done, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{rundir.CodesFile, rundir.CellsFile, rundir.TraceFile} {
		if err := os.WriteFile(filepath.Join(done, f), nil, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	var logs bytes.Buffer
	r := newRunProgress(slog.New(slog.NewTextHandler(&logs, nil)), cfg, []int{2, 3})
	if r.n != 3 || r.total != 20*3+20*4+20*4 {
		t.Fatalf("n %d total %g, want 3 fits of work 220", r.n, r.total)
	}
	if got := r.begin(cfg, 2, 2); got != "fit 1/3 L=2 chain 2" {
		t.Errorf("label %q", got)
	}
	// A fit of work 60 of 220, half done after 30 s: the run needs
	// (220 − 30)/30 × 30 s = 190 s more.
	r.start = time.Now().Add(-30 * time.Second)
	left, ok := r.left(time.Now(), 0.5)
	if !ok || left < 189*time.Second || left > 191*time.Second {
		t.Errorf("left %v %v, want 190 s", left, ok)
	}
	if s := r.status(0.5); !strings.HasPrefix(s, "run: fit 1 of 3, 3m1") || !strings.Contains(s, "ends ~") {
		t.Errorf("status %q", s)
	}
	r.finish()
	r.begin(cfg, 3, 1)
	for _, want := range []string{`msg="fit 1 of 3"`, `msg="fit 1 of 3 done"`, "run_left=", "run_ends=", `msg="fit 2 of 3"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, logs.String())
		}
	}
	var nilRun *runProgress
	if nilRun.begin(cfg, 4, 2) != "L=4 chain 2" || nilRun.status(0.5) != "" {
		t.Error("a nil runProgress is not silent")
	}
	nilRun.finish()
}
