package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"scpipe/internal/rundir"
)

// TestDemo runs the demo whole and checks its last stage: every planted
// program is recovered by a program of the fit whose top term in the
// demo's library (planted programs and decoys) is that planted program,
// with adjusted p < 1e-10, and the report it names exists. Its chains
// raise no convergence warning where they agree: every L whose chains'
// codes agree (agreement ≥ 0.99, the same programs) has converged = yes,
// the recommended L among them.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo fits L = 2..8 with two chains (about 30 s on two cores)")
	}
	var out bytes.Buffer
	dir := t.TempDir() + "/demo"
	if err := Run(context.Background(), &out, Options{Dir: dir, Threads: 2}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	_, table, ok := strings.Cut(text, "adjusted p\n")
	if !ok {
		t.Fatalf("no table of top terms in the demo's output:\n%s", text)
	}
	lines := strings.Split(table, "\n")
	for l := 1; l <= 6; l++ {
		f := strings.Fields(lines[l-1])
		if len(f) != 5 || f[0] != strconv.Itoa(l) {
			t.Fatalf("row %d of the top terms: %q", l, lines[l-1])
		}
		q, err := strconv.ParseFloat(f[4], 64)
		if f[3] != fmt.Sprintf("planted_program_%d", l) || err != nil || !(q < 1e-10) {
			t.Errorf("planted program %d: top term %s, adjusted p %s", l, f[3], f[4])
		}
	}
	rows, err := rundir.ReadSummary(filepath.Join(dir, "run", rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	agree := map[int]bool{}
	for _, r := range rows {
		if _, seen := agree[r.L]; !seen {
			agree[r.L] = true
		}
		agree[r.L] = agree[r.L] && r.Agreement >= 0.99 && r.Programs == r.StablePrograms
	}
	for _, r := range rows {
		if r.Recommended && !agree[r.L] {
			t.Errorf("recommended L = %d: the chains' codes disagree (chain %d: agreement %.3f, %d of %d programs stable)", r.L, r.Chain, r.Agreement, r.StablePrograms, r.Programs)
		}
		if agree[r.L] && r.Converged != "yes" {
			t.Errorf("L = %d: the chains agree, yet converged = %q (R̂ within chains %v)", r.L, r.Converged, r.RHatWithin)
		}
	}
	_, rest, _ := strings.Cut(text, "report ")
	html := strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0])
	if page, err := os.ReadFile(html); err != nil || !bytes.Contains(page, []byte("planted_program_")) {
		t.Errorf("the report %q: %v", html, err)
	}
}

// cancelOn is a slog.Handler that cancels its context at the first
// record whose message begins with msg: Ctrl-C at a chosen stage of the
// work, whatever the machine's speed (a timer of 300 ms once let a fast
// machine finish first).
type cancelOn struct {
	msg    string
	cancel context.CancelFunc
}

func (h cancelOn) Enabled(context.Context, slog.Level) bool { return true }
func (h cancelOn) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, h.msg) {
		h.cancel()
	}
	return nil
}
func (h cancelOn) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h cancelOn) WithGroup(string) slog.Handler      { return h }

// TestInterruptedDemo: a demo interrupted in any stage removes the
// temporary folder it made (nothing in it can be resumed or read), says
// it was interrupted (context.Canceled, exit status 130), and keeps a
// working folder the user named.
func TestInterruptedDemo(t *testing.T) {
	for _, tc := range []struct {
		name string
		at   string // cancel at the first log message that begins so; "": before it starts
		dir  bool   // the user names the working folder
	}{
		{"before it starts", "", false},
		{"while it simulates", "demo: simulating", false},
		{"while it fits", "fit 1 of", false},
		{"in a named folder", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			o := Options{Threads: 2, Log: slog.New(cancelOn{tc.at, cancel})}
			if tc.at == "" {
				cancel()
			}
			if tc.dir {
				o.Dir = filepath.Join(t.TempDir(), "demo")
			}
			var out bytes.Buffer
			if err := Run(ctx, &out, o); !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted demo: %v, want context.Canceled", err)
			}
			left, err := os.ReadDir(tmp)
			if err != nil {
				t.Fatal(err)
			}
			if len(left) > 0 {
				t.Errorf("left in the temporary folder: %s", left[0].Name())
			}
			if _, err := os.Stat(o.Dir); tc.dir && err != nil {
				t.Errorf("the named working folder: %v", err)
			}
		})
	}
}
