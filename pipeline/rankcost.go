package pipeline

import (
	"context"
	"log/slog"
	"runtime"

	"scpipe/internal/mpi"
)

// rankCost measures what a fit costs one rank of FitMPI: the CPU time of
// its sweeps, that spent inside the collectives (where Open MPI polls
// while it waits for the other ranks, which on an oversubscribed node is
// the other ranks' work, not this one's), and its anonymous memory at the
// end of each sweep. FitMPI logs every rank's (rank 0 logs them) so that a
// rank's cost can be compared with its share of the cells.
type rankCost struct {
	mpi.Comm
	cells          int
	sweeps         int
	sweepCPU       float64 // process CPU seconds of the sweeps
	commCPU        float64 // of those, the seconds of the calling thread inside collectives
	startAnon      int64   // RssAnon before the sampler is made (the MPI library's, the runtime's, the data's mapping tables), kB
	peakAnon       int64   // the largest RssAnon at the end of a sweep, kB
	mark           float64 // process CPU at the start of the sweep under way
	collectiveCPUs bool    // thread CPU time is measurable here
}

func newRankCost(comm mpi.Comm, cells int) *rankCost {
	return &rankCost{Comm: comm, cells: cells, collectiveCPUs: threadCPU() >= 0, startAnon: procStatusKB("RssAnon")}
}

// SumInt64 and GatherBytes make rankCost the sampler's gibbs.Reducer: the
// Comm's collectives, which no rank's signal cancels (the ranks stop
// together between sweeps: gibbs.PartSampler.Run). SumInt64 counts the
// calling thread's CPU time inside it: the thread is locked for the call,
// so that the time measured is the collective's.
func (c *rankCost) SumInt64(v []int64) error {
	ctx := context.Background()
	if !c.collectiveCPUs {
		return c.Comm.SumInt64(ctx, v)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := threadCPU()
	err := c.Comm.SumInt64(ctx, v)
	c.commCPU += threadCPU() - t0
	return err
}

func (c *rankCost) GatherBytes(root int, b []byte) ([][]byte, error) {
	return c.Comm.GatherBytes(context.Background(), root, b)
}

// startSweep and endSweep bracket one sweep's work (not its checkpoint).
func (c *rankCost) startSweep() { c.mark = processCPU() }

func (c *rankCost) endSweep() {
	c.sweepCPU += processCPU() - c.mark
	c.sweeps++
	c.peakAnon = max(c.peakAnon, procStatusKB("RssAnon"))
}

// log sums every rank's figures into rank 0, which logs one line a rank
// to the fit's lg. Every rank must call it at the same point.
func (c *rankCost) log(ctx context.Context, lg *slog.Logger) error {
	const k = 7
	n, r := c.Size(), c.Rank()
	v := make([]int64, k*n)
	copy(v[k*r:], []int64{int64(c.cells), int64(c.sweeps), int64(c.sweepCPU * 1e6), int64(c.commCPU * 1e6),
		c.startAnon, c.peakAnon, procStatusKB("VmHWM")})
	if err := c.Comm.SumInt64(context.WithoutCancel(ctx), v); err != nil {
		return err
	}
	for q := range n {
		f := v[k*q : k*q+k]
		sweeps := float64(max(f[1], 1))
		lg.Info("rank's cost", "rank", q, "cells", f[0], "sweeps", f[1],
			"cpu_s_per_sweep", float64(f[2])/1e6/sweeps, "in_collectives_cpu_s_per_sweep", float64(f[3])/1e6/sweeps,
			"rss_anon_at_start_MiB", float64(f[4])/1024, "peak_rss_anon_MiB", float64(f[5])/1024, "vm_hwm_MiB", float64(f[6])/1024)
	}
	return nil
}
