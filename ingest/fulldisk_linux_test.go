package ingest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"scpipe/shard"
)

// TestFullDisk ingests a matrix of a few thousand entries whose shards
// (50 000 cells, most of them empty, × 10 000 genes: 125 MB of data files)
// do not fit the 30 MB file system they go to (issue 44 item 2). Told
// the truth about free space, ingest refuses before writing anything;
// told there is room (as a file system shared with other writers may
// say), the data files are allocated before they are mapped, so the full
// disk is an ENOSPC error naming the file, never the SIGBUS that killed
// ingest in shard.(*Writer).finishPlane, and nothing is left on the file
// system. It mounts a tmpfs of its own (root only) and skips otherwise.
func TestFullDisk(t *testing.T) {
	const cells, genes = 50_000, 10_000
	in := t.TempDir()
	var mtx, feat, bcs strings.Builder
	fmt.Fprintf(&mtx, "%%%%MatrixMarket matrix coordinate integer general\n%d %d %d\n", genes, cells, genes)
	for g := 1; g <= genes; g++ {
		fmt.Fprintf(&mtx, "%d %d 1\n", g, g)
		fmt.Fprintf(&feat, "G%d\tgene%d\tGene Expression\n", g, g)
	}
	for c := 1; c <= cells; c++ {
		fmt.Fprintf(&bcs, "BC%d-1\n", c)
	}
	for name, s := range map[string]string{"matrix.mtx": mtx.String(), "features.tsv": feat.String(), "barcodes.tsv": bcs.String()} {
		if err := os.WriteFile(filepath.Join(in, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	disk := t.TempDir()
	if err := syscall.Mount("tmpfs", disk, "tmpfs", 0, "size=30m"); err != nil {
		t.Skipf("cannot mount a 30 MB tmpfs at %s to fill (needs root): %v", disk, err)
	}
	t.Cleanup(func() { syscall.Unmount(disk, 0) })
	need, err := shard.Layout{Cells: cells, Genes: genes}.DataBytes()
	if err != nil || need <= 30<<20 {
		t.Fatalf("the shards' data files take %d bytes (%v), want more than the tmpfs's 30 MB", need, err)
	}
	for _, tc := range []struct {
		name string
		free int64
		want error
	}{
		{"free space told", 30 << 20, shard.ErrNoRoom},
		{"free space misreported", 1 << 40, syscall.ENOSPC},
	} {
		out := filepath.Join(disk, "shards")
		opt := exact(in, out)
		opt.MinCellFrac, opt.MinCells, opt.Workers = 0, 1, 2
		opt.FreeBytes = func(string) (int64, bool) { return tc.free, true }
		_, err := Run(context.Background(), opt)
		t.Logf("%s: %v", tc.name, err)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), out) {
			t.Errorf("%s: %v, want %v naming %s", tc.name, err, tc.want, out)
		}
		if left, _ := os.ReadDir(disk); len(left) != 0 {
			t.Errorf("%s: %d entries left on the full file system (%s …)", tc.name, len(left), left[0].Name())
		}
	}
}
