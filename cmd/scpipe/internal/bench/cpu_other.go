//go:build !unix

package bench

// cpuSeconds returns 0 where getrusage is unavailable; the report's CPU
// utilisation is then 0, read as "not measured".
func cpuSeconds() float64 { return 0 }
