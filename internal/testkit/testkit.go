// Package testkit holds the helpers that the tests of several packages
// share, so that each is written once. It is imported by tests only, and
// imports the standard library only, so that any package's tests may use
// it (a helper that needs scpipe's own packages lives beside them, such as
// internal/testkit/planted).
package testkit

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// Names lists the names in the folder dir, sorted (os.ReadDir's order),
// failing t when it cannot be read.
func Names(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// CancelWhen returns a context whose Err reports cancellation once a file
// matching pattern (filepath.Glob's) exists: Ctrl-C while a temporary
// output is being written, whatever the machine's speed. Its Done is nil,
// so only code that asks Err sees it.
func CancelWhen(pattern string) context.Context {
	return cancelWhen{context.Background(), pattern}
}

type cancelWhen struct {
	context.Context
	pattern string
}

func (c cancelWhen) Err() error {
	if m, _ := filepath.Glob(c.pattern); len(m) > 0 {
		return context.Canceled
	}
	return nil
}
