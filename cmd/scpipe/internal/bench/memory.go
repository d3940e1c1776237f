package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// errNoProc reports that /proc/self is unavailable (not Linux).
var errNoProc = errors.New("bench: /proc/self/status unavailable")

// memStatus holds the fields of /proc/self/status that the benchmark
// reports, in bytes.
type memStatus struct {
	RssAnon int64 // resident anonymous memory: the heap, stacks, the Go runtime
	RssFile int64 // resident file-backed pages: here mostly the mapped shards
	VmHWM   int64 // peak resident set (anonymous + file + shmem) since start or reset
}

// readStatus parses /proc/self/status.
func readStatus() (memStatus, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return memStatus{}, fmt.Errorf("%w: %w", errNoProc, err)
	}
	return parseStatus(b)
}

// parseStatus reads the "Name:   123 kB" lines it needs from the text of a
// /proc/PID/status file.
func parseStatus(b []byte) (memStatus, error) {
	var m memStatus
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok {
			continue
		}
		var dst *int64
		switch string(name) {
		case "RssAnon":
			dst = &m.RssAnon
		case "RssFile":
			dst = &m.RssFile
		case "VmHWM":
			dst = &m.VmHWM
		default:
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return m, fmt.Errorf("bench: /proc/self/status: malformed line %q", sc.Text())
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return m, fmt.Errorf("bench: /proc/self/status: line %q: %w", sc.Text(), err)
		}
		*dst = kb << 10
		found++
	}
	if found != 3 {
		return m, fmt.Errorf("bench: /proc/self/status: RssAnon, RssFile or VmHWM missing")
	}
	return m, nil
}

// resetPeak resets the kernel's peak resident set (VmHWM) of this process,
// so that each measurement reports its own peak. It reports whether the
// kernel accepted the reset (Linux ≥ 4.0).
func resetPeak() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// memSampler polls /proc/self/status in the background and keeps the peak
// anonymous resident memory seen since the last reset.
type memSampler struct {
	mu       sync.Mutex
	peakAnon int64
	ok       bool // at least one sample was read
	stop     chan struct{}
	done     chan struct{}
}

// sampleEvery is the polling interval: far shorter than a sweep of any size
// worth measuring, and cheap (one small read of procfs).
const sampleEvery = 10 * time.Millisecond

// startSampler starts polling.
func startSampler() *memSampler {
	m := &memSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		t := time.NewTicker(sampleEvery)
		defer t.Stop()
		for {
			m.sample()
			select {
			case <-m.stop:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

// sample reads the status once and updates the peak; callers also use it to
// take a sample at a moment of interest (the end of a sweep).
func (m *memSampler) sample() {
	st, err := readStatus()
	if err != nil {
		return
	}
	m.mu.Lock()
	m.peakAnon = max(m.peakAnon, st.RssAnon)
	m.ok = true
	m.mu.Unlock()
}

// reset forgets the peak.
func (m *memSampler) reset() {
	m.mu.Lock()
	m.peakAnon, m.ok = 0, false
	m.mu.Unlock()
	m.sample()
}

// peak returns the peak anonymous resident memory since the last reset and
// whether any sample could be read.
func (m *memSampler) peak() (int64, bool) {
	m.sample()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peakAnon, m.ok
}

// close stops polling.
func (m *memSampler) close() {
	close(m.stop)
	<-m.done
}
