//go:build unix

package ingest

import "syscall"

// cpuSeconds returns the user and system CPU time this process has used,
// or -1 where unavailable.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	sec := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return sec(ru.Utime) + sec(ru.Stime)
}

// syncDisks asks the kernel to write back every dirty page and journal
// entry, so that what a benchmark did before (deleting the previous
// iteration's output) is not flushed by the next iteration's fsyncs.
func syncDisks() { syscall.Sync() }
