package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportChecksEveryOutputFirst: export -o FILE --cnmf RUN once
// replaced FILE and then refused --cnmf (issue 44 item 3); without
// --force it left a new FILE behind. Every output is checked before any
// is written.
func TestExportChecksEveryOutputFirst(t *testing.T) {
	dir, _, _, rd := hostileRun(t)
	precious := filepath.Join(dir, "out.h5ad")
	if err := os.WriteFile(precious, []byte("precious\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "new.h5ad")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"export", rd, "-o", precious, "--cnmf", rd, "--force", "-q"}, "is the input"},
		{[]string{"export", rd, "-o", fresh, "--cnmf", rd, "-q"}, "is the input"},
		{[]string{"export", rd, "-o", fresh, "--cnmf", filepath.Join(dir, "cnmf"), "--into", fresh, "-q"}, "is the input"},
		{[]string{"export", rd, "-o", fresh, "--cnmf", dir, "--force", "-q"}, "holds the input"},
	} {
		err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("scpipe %s: %v, want %q", strings.Join(tc.args, " "), err, tc.want)
		}
		if b, err := os.ReadFile(precious); string(b) != "precious\n" {
			t.Errorf("scpipe %s: %s replaced (%d bytes, %v)", strings.Join(tc.args, " "), precious, len(b), err)
		}
		if _, err := os.Stat(fresh); err == nil {
			t.Errorf("scpipe %s: left %s behind", strings.Join(tc.args, " "), fresh)
		}
	}
}
