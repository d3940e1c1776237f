package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"scpipe/internal/outlock"
)

func TestShardsIdentityRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), ShardsFile)
	if _, err := ReadShardsIdentity(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v, want os.ErrNotExist", err)
	}
	id := ShardsIdentity{Path: "a/shards", Fingerprint: strings.Repeat("0123456789abcdef", 4), Cells: 3000, Genes: 1000, Ones: 12345}
	if err := WriteShardsIdentity(path, id); err != nil {
		t.Fatal(err)
	}
	got, err := ReadShardsIdentity(path)
	if err != nil || got != id {
		t.Fatalf("read back %+v, %v; want %+v", got, err, id)
	}
	if s := id.String(); !strings.Contains(s, "a/shards") || !strings.Contains(s, "3000 cells × 1000 genes") || !strings.Contains(s, "0123456789ab") {
		t.Errorf("String() = %q", s)
	}
	if err := os.WriteFile(path, []byte(`{"path": "x"}`), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadShardsIdentity(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("identity without a fingerprint: %v", err)
	}
}

func TestRemoveTemporaries(t *testing.T) {
	t.Parallel()
	run := t.TempDir()
	if err := WriteShardsIdentity(filepath.Join(run, ShardsFile), ShardsIdentity{Fingerprint: "f"}); err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(FitDir(run, 3, 1), CheckpointFile)
	if err := os.MkdirAll(filepath.Dir(ckpt), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := WriteCheckpoint(ckpt, CheckpointMeta{L: 3, Chain: 1, Shards: "f"}, []byte("state")); err != nil {
		t.Fatal(err)
	}
	// What writes killed before their rename leave: WriteFileAtomic's
	// temporary files and the fit mask's unfinished shard folder.
	var left []string
	for _, p := range []string{ckpt, filepath.Join(FitDir(run, 3, 1), TraceFile), filepath.Join(run, ConfigFile)} {
		f, err := outlock.TempFile(p, "tmp")
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		left = append(left, f.Name())
	}
	d, err := outlock.TempDir(filepath.Join(run, "fitmask"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "x.000000.bin"), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	left = append(left, d)
	removed, err := RemoveTemporaries(run)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(left)
	slices.Sort(removed)
	if !slices.Equal(removed, left) {
		t.Errorf("removed %q, want %q", removed, left)
	}
	for _, p := range []string{ckpt, filepath.Join(run, ShardsFile)} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}

// TestShardsInputs: the shards a run records are inputs where they exist,
// by their path as given to fit (absolute, or relative to the folder the
// command runs in) or relative to the run's parent; a run that records
// none has none.
func TestShardsInputs(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, d := range []string{"shards", "elsewhere/run", "elsewhere/shards"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, run, path string
		want            []string
	}{
		{"absolute", "elsewhere/run", filepath.Join(dir, "shards"), []string{filepath.Join(dir, "shards")}},
		{"relative to both", "elsewhere/run", "shards", []string{"shards", filepath.Join("elsewhere", "shards")}},
		{"relative to the run's parent", "elsewhere/run", "../elsewhere/shards", []string{filepath.Join("elsewhere", "..", "elsewhere", "shards")}},
		{"moved away", "elsewhere/run", "gone", nil},
		{"no shards.json", "shards", "", nil},
	} {
		if tc.path != "" {
			if err := WriteShardsIdentity(filepath.Join(tc.run, ShardsFile), ShardsIdentity{Path: tc.path, Fingerprint: "f"}); err != nil {
				t.Fatal(err)
			}
		}
		if got := ShardsInputs(tc.run); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		// Find takes the first that exists, as evaluate and summarize
		// read the shards: a command run in the run's folder, or beside
		// it, finds the shards fit was given by a relative path.
		id, err := ReadShardsIdentity(filepath.Join(tc.run, ShardsFile))
		if err != nil {
			continue
		}
		got, err := id.Find(tc.run)
		if len(tc.want) == 0 {
			if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), tc.path) {
				t.Errorf("%s: Find: %q, %v; want an error naming %s", tc.name, got, err, tc.path)
			}
		} else if err != nil || got != tc.want[0] {
			t.Errorf("%s: Find: %q, %v; want %q", tc.name, got, err, tc.want[0])
		}
	}
}
