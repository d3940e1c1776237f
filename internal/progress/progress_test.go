package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestModes(t *testing.T) {
	defer func(d time.Duration) { lineInterval = d }(lineInterval)
	lineInterval = 0
	tests := []struct {
		mode      Mode
		wantLines int
		wantCR    bool
	}{
		{Lines, 3, false}, // two updates and the final line
		{Bar, 1, true},    // redrawn in place, one newline at the end
		{Quiet, 0, false},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		m := New(&buf, "task", 10, tt.mode)
		m.Set(3, "λ=1.2")
		m.Set(5, "")
		m.Done("done")
		out := buf.String()
		if got := strings.Count(out, "\n"); got != tt.wantLines {
			t.Errorf("mode %d: %d lines in %q, want %d", tt.mode, got, out, tt.wantLines)
		}
		if strings.Contains(out, "\r") != tt.wantCR {
			t.Errorf("mode %d: carriage return presence wrong in %q", tt.mode, out)
		}
		if tt.mode != Quiet && !strings.Contains(out, "10/10 (100%)") {
			t.Errorf("mode %d: final count missing in %q", tt.mode, out)
		}
	}
}

func TestLinesAreThrottled(t *testing.T) {
	defer func(d time.Duration) { lineInterval = d }(lineInterval)
	lineInterval = time.Hour
	var buf bytes.Buffer
	m := New(&buf, "task", 100, Lines)
	for i := range int64(99) {
		m.Set(i, "")
	}
	if buf.Len() != 0 {
		t.Errorf("printed before the interval elapsed: %q", buf.String())
	}
	m.Set(100, "")
	if !strings.Contains(buf.String(), "100/100") {
		t.Errorf("completion not printed: %q", buf.String())
	}
}
