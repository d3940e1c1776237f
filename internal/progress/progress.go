// Package progress reports the progress of long work on stderr: a live bar
// when stderr is a terminal, and plain periodic lines when it is not, so that
// HPC batch logs stay readable. A nil *Meter is valid and silent, which is what
// --quiet gives.
//
//	m := progress.New(os.Stderr, "ingest pass 2", total, progress.Auto)
//	for … { m.Set(done, "") }
//	m.Done("")
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// Mode selects how progress is shown.
type Mode int

const (
	Auto  Mode = iota // a bar on a terminal, lines otherwise
	Bar               // always a bar
	Lines             // always plain lines
	Quiet             // nothing
)

// lineInterval is how often plain-line mode prints.
var lineInterval = 10 * time.Second

// Meter shows the progress of one task. It is safe for concurrent use.
type Meter struct {
	mu       sync.Mutex
	w        io.Writer
	label    string
	total    int64
	bar      bool
	start    time.Time
	last     time.Time
	lastDone int64
}

// New returns a meter for a task of total units (0 if unknown) writing to w,
// or nil (silent) in Quiet mode.
func New(w io.Writer, label string, total int64, mode Mode) *Meter {
	if mode == Quiet || w == nil {
		return nil
	}
	if mode == Auto {
		mode = Lines
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			mode = Bar
		}
	}
	now := time.Now()
	return &Meter{w: w, label: label, total: total, bar: mode == Bar, start: now, last: now}
}

// Set records that done units are complete; extra is shown after the counts
// (for example the current λ and log-likelihood).
func (m *Meter) Set(done int64, extra string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	interval := lineInterval
	if m.bar {
		interval = 100 * time.Millisecond
	}
	if now.Sub(m.last) < interval && done != m.total {
		return
	}
	m.last, m.lastDone = now, done
	m.print(done, extra, false)
}

// SetTotal changes the task's total units: a task that learns its length
// as it goes (a fit's burn-in that runs until its chain settles).
func (m *Meter) SetTotal(total int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.total = total
	m.mu.Unlock()
}

// Done prints the final state of the task.
func (m *Meter) Done(extra string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	done := m.lastDone
	if m.total > 0 {
		done = m.total
	}
	m.print(done, extra, true)
}

func (m *Meter) print(done int64, extra string, final bool) {
	elapsed := time.Since(m.start)
	var b strings.Builder
	if m.bar {
		b.WriteString("\r\x1b[K")
	}
	b.WriteString(m.label)
	if m.total > 0 {
		frac := float64(done) / float64(m.total)
		if m.bar {
			const width = 30
			fill := int(frac * width)
			fmt.Fprintf(&b, " [%s%s]", strings.Repeat("=", fill), strings.Repeat(" ", width-fill))
		}
		fmt.Fprintf(&b, " %d/%d (%.0f%%)", done, m.total, 100*frac)
		if !final && done > 0 && done < m.total { // at the end the ETA says nothing
			eta := time.Duration(float64(elapsed) * (1/frac - 1))
			fmt.Fprintf(&b, " ETA %s", eta.Round(time.Second))
		}
	} else {
		fmt.Fprintf(&b, " %d", done)
	}
	fmt.Fprintf(&b, " %s", elapsed.Round(100*time.Millisecond))
	if extra != "" {
		b.WriteString(" " + extra)
	}
	if !m.bar || final {
		b.WriteByte('\n')
	}
	io.WriteString(m.w, b.String())
}
