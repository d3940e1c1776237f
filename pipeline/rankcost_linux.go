package pipeline

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// rusageThread is Linux's RUSAGE_THREAD, which package syscall does not
// name.
const rusageThread = 1

// processCPU returns the user and system CPU seconds of the process, -1
// where unavailable.
func processCPU() float64 { return rusageSeconds(syscall.RUSAGE_SELF) }

// threadCPU returns those of the calling thread.
func threadCPU() float64 { return rusageSeconds(rusageThread) }

func rusageSeconds(who int) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return -1
	}
	sec := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return sec(ru.Utime) + sec(ru.Stime)
}

// procStatusKB returns a field of /proc/self/status in kB (VmHWM, the
// peak resident set; RssAnon, the anonymous memory resident now), -1
// where unavailable.
func procStatusKB(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for line := range bytes.SplitSeq(b, []byte{'\n'}) {
		if v, ok := bytes.CutPrefix(line, []byte(field+":")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			if err != nil {
				return -1
			}
			return kb
		}
	}
	return -1
}
