package main

import (
	"slices"
	"testing"
)

func TestFlagsFirst(t *testing.T) {
	app := newApp()
	tests := []struct {
		in, want []string
	}{
		{[]string{"scpipe"}, []string{"scpipe"}},
		{[]string{"scpipe", "ingest", "in.h5", "-o", "out"}, []string{"scpipe", "ingest", "-o", "out", "--", "in.h5"}},
		{[]string{"scpipe", "ingest", "--force", "in.h5", "-o=out"}, []string{"scpipe", "ingest", "--force", "-o=out", "--", "in.h5"}},
		{[]string{"scpipe", "ingest", "in.h5", "--quiet", "-j", "4"}, []string{"scpipe", "ingest", "--quiet", "-j", "4", "--", "in.h5"}},
		{[]string{"scpipe", "ingest", "-o", "out", "--", "-odd-name"}, []string{"scpipe", "ingest", "-o", "out", "--", "-odd-name"}},
		{[]string{"scpipe", "nosuch", "a", "-b"}, []string{"scpipe", "nosuch", "a", "-b"}},
	}
	for _, tt := range tests {
		if got := flagsFirst(app, tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("flagsFirst(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
