package pipeline

import (
	"fmt"
	"log/slog"
	"time"

	"scpipe/internal/rundir"
)

// runProgress tells how a run's fits advance as a whole: "fit k of n", the
// time elapsed, and when the run should end. A fit's share of the work is
// taken as its sweeps × (L + 1), what a sweep's cost grows with; fits found
// complete (--resume) are not counted. A nil *runProgress says nothing.
type runProgress struct {
	log      *slog.Logger
	n, k     int       // fits to run; the 1-based number of the current one
	start    time.Time // of the first fit
	total    float64   // work of the n fits
	done     float64   // work of the finished ones
	current  float64   // work of the current fit
	label    string
	fitStart time.Time
}

// newRunProgress plans the fits (L, chain) of cfg that are not complete.
func newRunProgress(log *slog.Logger, cfg FitConfig, Ls []int) *runProgress {
	r := &runProgress{log: log}
	for _, L := range Ls {
		for chain := 1; chain <= cfg.Chains; chain++ {
			if !complete(rundir.FitDir(cfg.Output, L, chain)) {
				r.n++
				r.total += fitWork(cfg, L)
			}
		}
	}
	return r
}

func fitWork(cfg FitConfig, L int) float64 {
	return float64(cfg.BurnIn+cfg.Samples+cfg.Starts*cfg.StartSweeps) * float64(L+1)
}

// fitName names one fit in meters and messages; a multi-layer fit's
// name carries its layers' sizes, of which L is the first.
func fitName(cfg FitConfig, L, chain int) string {
	if len(cfg.Layers) > 0 {
		return fmt.Sprintf("L=%d (layers %s) chain %d", L, cfg.Layers, chain)
	}
	return fmt.Sprintf("L=%d chain %d", L, chain)
}

// begin starts the next fit and returns its meter label.
func (r *runProgress) begin(cfg FitConfig, L, chain int) string {
	if r == nil {
		return fitName(cfg, L, chain)
	}
	now := time.Now()
	if r.k == 0 {
		r.start = now
	}
	r.k++
	r.current, r.fitStart = fitWork(cfg, L), now
	r.label = fmt.Sprintf("fit %d/%d %s", r.k, r.n, fitName(cfg, L, chain))
	r.log.Info(fmt.Sprintf("fit %d of %d", r.k, r.n), "L", L, "chain", chain, "run_elapsed", r.elapsed(now))
	return r.label
}

// status is the meter's note on the whole run while the current fit is
// frac done.
func (r *runProgress) status(frac float64) string {
	if r == nil || r.n < 2 {
		return ""
	}
	now := time.Now()
	left, ok := r.left(now, frac)
	if !ok {
		return fmt.Sprintf("run: fit %d of %d", r.k, r.n)
	}
	return fmt.Sprintf("run: fit %d of %d, %s left, ends ~%s", r.k, r.n, left.Round(time.Second), now.Add(left).Format("15:04"))
}

// finish records the end of the current fit and logs the run's progress.
func (r *runProgress) finish() {
	if r == nil {
		return
	}
	r.done += r.current
	r.current = 0
	now := time.Now()
	args := []any{"fit_seconds", now.Sub(r.fitStart).Round(time.Millisecond).Seconds(), "run_elapsed", r.elapsed(now)}
	if left, ok := r.left(now, 0); ok && r.k < r.n {
		args = append(args, "run_left", left.Round(time.Second).String(), "run_ends", now.Add(left).Format(time.DateTime))
	}
	r.log.Info(fmt.Sprintf("fit %d of %d done", r.k, r.n), args...)
}

// left estimates the time the run still needs from the work done so far.
func (r *runProgress) left(now time.Time, frac float64) (time.Duration, bool) {
	work := r.done + r.current*frac
	if work <= 0 || r.total <= 0 {
		return 0, false
	}
	elapsed := now.Sub(r.start)
	return time.Duration(float64(elapsed) * (r.total - work) / work), true
}

func (r *runProgress) elapsed(now time.Time) string {
	return now.Sub(r.start).Round(time.Second).String()
}

// joinNotes joins the non-empty notes of a meter line.
func joinNotes(a, b string) string {
	if b == "" {
		return a
	}
	return a + "; " + b
}
