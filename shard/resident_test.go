package shard

import (
	"bufio"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// rssFile returns the process's resident file-backed and shared memory in
// bytes (Linux), or -1.
func rssFile() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	var total int64 = -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "RssFile" && k != "RssShmem") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return -1
		}
		total = max(total, 0) + kb*1024
	}
	return total
}

// TestResidentLimit writes rows concurrently, in random order, while the
// writer keeps dropping its mappings from the resident set: no write may be
// lost, and the resident file pages must stay near the limit.
func TestResidentLimit(t *testing.T) {
	defer func(v int64) { residentLimit = v }(residentLimit)
	residentLimit = 1 << 20
	const cells, genes = 16384, 4096 // 8 MiB per plane
	dst := filepath.Join(t.TempDir(), "s")
	w, err := Create(dst, Layout{Cells: cells, Genes: genes, RowsPerBlock: 1024}, CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	want := make([][]int32, cells)
	for n := range want {
		r := rand.New(rand.NewPCG(uint64(n), 1))
		for g := range genes {
			if r.IntN(10) == 0 {
				want[n] = append(want[n], int32(g))
			}
		}
	}
	order := rand.New(rand.NewPCG(2, 3)).Perm(cells)
	before, peak := rssFile(), int64(0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for k := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			words := make([]uint64, w.Layout().WordsPerRow)
			for i := k; i < cells; i += 4 {
				n := order[i]
				if n%2 == 0 {
					w.SetRow(n, want[n])
				} else {
					clear(words)
					for _, g := range want[n] {
						words[g/64] |= 1 << (g % 64)
					}
					w.SetRowWords(n, words)
				}
				if i%512 == 0 {
					mu.Lock()
					peak = max(peak, rssFile()-before)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Commit(context.Background(), Manifest{}); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for n := range cells {
		row := s.X().Row(n)
		got := 0
		for _, g := range want[n] {
			if row[g/64]>>(g%64)&1 == 0 {
				t.Fatalf("cell %d gene %d lost", n, g)
			}
			got++
		}
		ones := 0
		for _, x := range row {
			for ; x != 0; x &= x - 1 {
				ones++
			}
		}
		if ones != got {
			t.Fatalf("cell %d: %d ones, want %d", n, ones, got)
		}
	}
	if before >= 0 && peak > 4<<20 {
		t.Errorf("resident file pages grew by %d KiB while writing 8 MiB with a 1 MiB limit", peak>>10)
	}
}

// TestResidentDropsWhileFinishing drops the mappings from the resident set
// at almost every row while blocks are being unmapped by FinishBlock and
// WriteBlock: the drop must never touch a mapping being removed (the race
// detector sees the slices), and no bit may be lost.
func TestResidentDropsWhileFinishing(t *testing.T) {
	defer func(v int64) { residentLimit = v }(residentLimit)
	residentLimit = 64 << 10
	const cells, genes, rows = 4096, 1000, 256
	rng := rand.New(rand.NewPCG(4, 4))
	want := randomDense(rng, cells, genes, 0.05)
	dst := filepath.Join(t.TempDir(), "s")
	w, err := Create(dst, Layout{Cells: cells, Genes: genes, RowsPerBlock: rows}, CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	wpr := w.Layout().WordsPerRow
	var fin sync.WaitGroup
	for b := range cells / rows {
		if b%2 == 0 {
			// Built here and written whole, while later blocks' rows go
			// through the mapping.
			words := make([]uint64, rows*wpr)
			for i := range rows {
				for _, g := range want.rows[b*rows+i] {
					words[i*wpr+int(g)/64] |= 1 << (g % 64)
				}
			}
			fin.Go(func() {
				if err := w.WriteBlock(b, words, nil); err != nil {
					t.Error(err)
				}
			})
			continue
		}
		var set sync.WaitGroup
		for k := range 2 {
			set.Go(func() {
				for i := b*rows + k; i < (b+1)*rows; i += 2 {
					w.SetRow(i, want.rows[i])
				}
			})
		}
		set.Wait()
		fin.Go(func() {
			if err := w.FinishBlock(b); err != nil {
				t.Error(err)
			}
		})
	}
	fin.Wait()
	if err := w.Commit(context.Background(), Manifest{}); err != nil {
		t.Fatal(err)
	}
	s := openShard(t, dst)
	checkMatrices(t, s.X(), s.XT(), want)
}
