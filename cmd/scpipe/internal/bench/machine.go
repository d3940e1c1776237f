package bench

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// machine describes this host, from /proc where available.
func machine() Machine {
	m := Machine{
		Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.CPU = procField(b, "model name")
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if kb, err := strconv.ParseInt(strings.TrimSuffix(procField(b, "MemTotal"), " kB"), 10, 64); err == nil {
			m.MemBytes = kb << 10
		}
	}
	return m
}

// procField returns the value of the first "name : value" line of a /proc
// text file, trimmed; "" when absent.
func procField(b []byte, name string) string {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// loadAvg returns the 1-minute load average, or 0 where unavailable.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
