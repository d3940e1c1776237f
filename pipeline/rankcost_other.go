//go:build !linux

package pipeline

// processCPU, threadCPU and procStatusKB measure nothing where the
// process's rusage per thread and /proc/self/status are Linux's.
func processCPU() float64             { return -1 }
func threadCPU() float64              { return -1 }
func procStatusKB(field string) int64 { return -1 }
