package simulate

import (
	"context"
	"errors"
	"fmt"

	"scpipe/internal/outlock"
	"scpipe/shard"
)

// maxGenes bounds Params.Genes: every worker drawing rows holds a count
// per gene (4 bytes) beside two rows of bits, and no assay measures more
// features than a few million (ATAC peaks); --genes 2000000000 once took
// 8 GB a worker before it could be stopped.
const maxGenes = 1 << 26

// ErrNoRoom is wrapped by the refusal of a simulation whose output the
// file system it goes to cannot hold.
var ErrNoRoom = errors.New("not enough free space")

// mtxEntryBytes is the least an entry of matrix.mtx.gz takes: a line
// "gene cell count" gzipped at BestSpeed, about 3.5 bytes for the
// ormachine and singlecell kinds at 20 000 × 2 000.
const mtxEntryBytes = 2

// MinBytes returns a lower bound of the bytes the output of p takes: the
// shards' data files (shards), and the truth's usage.tsv and programs.tsv
// at their least (a barcode or a gene id and name, and a 0 or 1 a
// program). An MTX folder's matrix, whose size depends on the draws,
// counts nothing here: WriteMTX estimates it once the truth is drawn.
func (p Params) MinBytes(shards bool) (int64, error) {
	progs := int64(p.Programs())
	n := int64(p.Cells)*(19+2*progs) + int64(p.Genes)*(17+2*progs)
	if shards {
		data, err := shard.Layout{Cells: p.Cells, Genes: p.Genes, Masked: p.Missing > 0}.DataBytes()
		if err != nil {
			return 0, fmt.Errorf("simulate: %w", err)
		}
		n += data
	}
	return n, nil
}

// FreeSpace tells the bytes free to this user on the file system that an
// output at path goes to; ok is false where it cannot be told. The nil
// FreeSpace asks the file system (outlock.FreeBytes); a test hands in the
// free space it means to test, so that its verdict does not depend on the
// disk it runs on.
type FreeSpace func(path string) (n int64, ok bool)

// at returns the bytes free for path as f tells them.
func (f FreeSpace) at(path string) (int64, bool) {
	if f == nil {
		return outlock.FreeBytes(path)
	}
	return f(path)
}

// CheckRoom refuses p, before anything is drawn, when the file system an
// output at dir goes to has less free space, as free tells it (nil: the
// file system's own count), than p.MinBytes(shards): a simulation of
// terabytes once allocated, and wrote, until memory or the disk ran out.
// Where free space cannot be told, it refuses nothing.
func CheckRoom(dir string, p Params, shards bool, free FreeSpace) error {
	if err := p.Validate(); err != nil {
		return err
	}
	need, err := p.MinBytes(shards)
	if err != nil {
		return err
	}
	return checkFree(free, dir, dir, need, p)
}

// checkFree refuses need bytes for the output dir where the file system
// of at (dir, or its temporary) has less free, as f tells it.
func checkFree(f FreeSpace, dir, at string, need int64, p Params) error {
	free, ok := f.at(at)
	if !ok || need <= free {
		return nil
	}
	return fmt.Errorf("simulate: %s: %w: %d cells × %d genes need at least %s, and its file system has %s free",
		dir, ErrNoRoom, p.Cells, p.Genes, humanBytes(need), humanBytes(free))
}

// checkMTXRoom refuses an MTX folder, before its first pass over the
// cells, that the file system of tmp has no room for: the truth and the
// matrix estimated from a sample of cells.
func (t *Truth) checkMTXRoom(ctx context.Context, dir, tmp string) error {
	truth, err := t.MinBytes(false)
	if err != nil {
		return err
	}
	matrix, err := t.mtxMatrixBytes(ctx)
	if err != nil {
		return err
	}
	return checkFree(t.Free, dir, tmp, truth+matrix, t.Params)
}

// mtxMatrixBytes estimates the bytes of matrix.mtx.gz from the observed
// ones of up to 256 cells spread over all of them, each drawn as writing
// draws it (its own stream).
func (t *Truth) mtxMatrixBytes(ctx context.Context) (int64, error) {
	s := min(t.Cells, 256)
	b := t.newRowBuf()
	var ones int64
	for i := range s {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		t.draw(int(int64(i)*int64(t.Cells)/int64(s)), b)
		ones += int64(popcount(b.row))
	}
	return int64(float64(ones) / float64(s) * float64(t.Cells) * mtxEntryBytes), nil
}

// humanBytes writes n in the largest binary unit that leaves a number of
// at least 1.
func humanBytes(n int64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	v, u := float64(n)/1024, 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return fmt.Sprintf("%.1f %ciB", v, units[u])
}
