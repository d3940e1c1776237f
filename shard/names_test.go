package shard

import (
	"strings"
	"testing"
)

// TestCheckName: what a shard folder's names may hold, at the edges.
func TestCheckName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		want string // "" when accepted
	}{
		{"AAACCTGAGAAACCAT-1", ""},
		{"", ""},
		{"Cd3e κ-β Ω 細胞", ""},
		{"HLA-DRB1 (0.61); ok, \"quoted\" =x", ""},
		{strings.Repeat("é", MaxNameBytes/2), ""},
		{strings.Repeat("a", MaxNameBytes+1), "4097 bytes long"},
		{"BC\xe9", "not valid UTF-8 (byte 0xE9 at byte 3)"},
		{"\xff", "not valid UTF-8"},
		{"a\tb", "control character U+0009"},
		{"a\nb", "control character U+000A"},
		{"a\x7f", "control character U+007F"},
		{"a\u009b", "control character U+009B"},
		{"\u202eS100A9", "bidirectional control U+202E"},
		{"x\u2067y", "bidirectional control U+2067"},
		{"x\u200fy", "bidirectional control U+200F"},
	} {
		err := CheckName(tc.name)
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckName(%s) = %v, want %q", Quote(tc.name), err, tc.want)
		}
	}
	if _, err := encodeTSV("genes.tsv", 2, []string{"G1", strings.Repeat("g", MaxNameBytes+1)}); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("encodeTSV of a name past the limit: %v", err)
	}
}
