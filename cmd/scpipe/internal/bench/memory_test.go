package bench

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestParseStatus(t *testing.T) {
	t.Parallel()
	const status = "Name:\tscpipe\nVmPeak:\t  100 kB\nVmHWM:\t    2048 kB\nVmRSS:\t  1500 kB\nRssAnon:\t     1024 kB\nRssFile:\t      476 kB\nRssShmem:\t 0 kB\n"
	got, err := parseStatus([]byte(status))
	if err != nil {
		t.Fatal(err)
	}
	if want := (memStatus{RssAnon: 1 << 20, RssFile: 476 << 10, VmHWM: 2 << 20}); got != want {
		t.Errorf("parseStatus = %+v, want %+v", got, want)
	}
	for _, bad := range []string{
		"VmHWM:\t2048 kB\nRssAnon:\t1024 kB\n",                 // RssFile missing
		"VmHWM:\t2048 kB\nRssAnon:\tmany kB\nRssFile:\t1 kB\n", // not a number
		"VmHWM:\t2048 MB\nRssAnon:\t1024 kB\nRssFile:\t1 kB\n", // unit
		"VmHWM:\t2048\nRssAnon:\t1024 kB\nRssFile:\t1 kB\n",    // no unit
	} {
		if _, err := parseStatus([]byte(bad)); err == nil {
			t.Errorf("parseStatus(%q) succeeded", bad)
		}
	}
}

// TestSamplerSeesAllocation checks that the peak follows an allocation the
// size of a large sampler state.
func TestSamplerSeesAllocation(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/status")
	}
	// Heap that earlier tests freed but the runtime kept would take the
	// allocation without a page fault: give it back first.
	debug.FreeOSMemory()
	m := startSampler()
	defer m.close()
	m.reset()
	before, ok := m.peak()
	if !ok || before <= 0 {
		t.Fatalf("no anonymous memory read: %d, %v", before, ok)
	}
	const n = 64 << 20
	buf := make([]byte, n)
	for i := range buf { // touch every page so it is resident
		buf[i] = 1
	}
	after, _ := m.peak()
	runtime.KeepAlive(buf)
	if after-before < n*9/10 {
		t.Errorf("peak anonymous memory grew by %d bytes after touching %d", after-before, n)
	}
}
