package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("bench: writing JSON report: %w", err)
	}
	return nil
}

// WriteTable writes the report as a table for people: one row per
// (size, L), then the machine and the conditions of the run.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "cells×genes\tentries\tdensity\tL\t-j\ts/sweep median\t[min, max]\tentries/s\t/core\tstream s\tGB/s\tsweep/stream\trow-order s\tpeak anon\tstate\tanon−state\tVmHWM\tcpu util\t")
	for _, x := range r.Results {
		fmt.Fprintf(tw, "%d×%d\t%.3g\t%.4f\t%d\t%d\t%.3g\t[%.3g, %.3g]\t%.3g\t%.3g\t%.3g\t%.1f\t%.1f\t%.3g\t%s\t%s\t%s\t%s\t%.2f\t\n",
			x.Cells, x.Genes, float64(x.Entries), x.Density, x.L, x.Workers,
			x.SweepMedian, x.SweepMin, x.SweepMax, x.EntriesPerSec, x.EntriesPerSecPerCore,
			x.StreamMedian, x.StreamGBps, x.Ratio, x.RowOrderMedian,
			byteSize(x.PeakAnonBytes), byteSize(x.StateBytes), byteSize(x.AnonAboveStateBytes), byteSize(x.PeakHWMBytes), x.CPUUtilisation)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("bench: writing table: %w", err)
	}
	m := r.Machine
	_, err := fmt.Fprintf(w, "\nmachine: %s, %d cores (GOMAXPROCS %d), %s RAM, %s %s/%s; sampler kernel %s (this CPU runs %s)\n"+
		"%d warm-up + %d timed sweeps per row (medians and ranges over the timed ones), prior of Z and U %s; stream: median of %d read-only passes over X and Xᵀ in file order (row-order s: in the sampler's order)\n"+
		"%s\n",
		m.CPU, m.Cores, m.GOMAXPROCS, byteSize(m.MemBytes), m.GoVersion, m.OS, m.Arch, r.Kernel, strings.Join(r.Kernels, ", "),
		r.Warmup, r.Sweeps, r.Prior, r.StreamReps, loadNote(r.LoadBefore, r.LoadAfter, r.workers()))
	if err != nil {
		return fmt.Errorf("bench: writing table: %w", err)
	}
	return nil
}

// workers returns the -j of every row.
func (r *Report) workers() []int {
	w := make([]int, len(r.Results))
	for i, x := range r.Results {
		w[i] = x.Workers
	}
	return w
}

// loadNote gives the load averages around a run, and says that other
// processes shared the cores when either exceeds the largest -j the run
// used: its own workers account for that much load, no more.
func loadNote(before, after float64, workers []int) string {
	note := fmt.Sprintf("load average %.2f before, %.2f after", before, after)
	if j := slices.Max(append([]int{0}, workers...)); max(before, after) > float64(j) {
		note += fmt.Sprintf(" (above -j %d: other processes shared the cores)", j)
	}
	return note
}

// byteSize formats a byte count with a binary unit (KiB, MiB, GiB).
func byteSize(b int64) string {
	v, units := float64(b), []string{"B", "KiB", "MiB", "GiB", "TiB"}
	u := 0
	for ; u+1 < len(units) && (v >= 1024 || v <= -1024); u++ {
		v /= 1024
	}
	if u == 0 {
		return fmt.Sprintf("%d B", b)
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}
