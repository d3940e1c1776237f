package shard

import (
	"context"
	"fmt"
	"reflect"
	"testing"
)

// TestOpenBlocks checks that a shard opened for a range of cell blocks
// maps only their files and gives, for those blocks, the rows and
// segments Open gives; that reading another block panics with a message,
// Verify refuses, and bad ranges are refused.
func TestOpenBlocks(t *testing.T) {
	t.Parallel()
	dir := smallShard(t) // 3 blocks of 64, 64 and 22 cells; 3 gene tiles
	whole := openShard(t, dir)
	for _, r := range []Range{{0, 1}, {1, 3}, {2, 3}, {0, 3}} {
		s, err := OpenBlocks(dir, r.Lo, r.Hi)
		if err != nil {
			t.Fatal(err)
		}
		if want := 8 * r.Len(); len(s.maps) != want { // X and Mask: a file a block; XT and MaskT: 3 tiles a block
			t.Errorf("blocks %v: %d files mapped, want %d", r, len(s.maps), want)
		}
		lo, hi := whole.Manifest().Layout.Block(r.Lo).Lo, whole.Manifest().Layout.Block(r.Hi-1).Hi
		for _, pair := range [][2]*Matrix{{s.X(), whole.X()}, {s.Mask(), whole.Mask()}} {
			for i := lo; i < hi; i++ {
				if !reflect.DeepEqual(pair[0].Row(i), pair[1].Row(i)) {
					t.Fatalf("blocks %v: row %d differs from Open's", r, i)
				}
			}
		}
		for _, pair := range [][2]*Matrix{{s.XT(), whole.XT()}, {s.MaskT(), whole.MaskT()}} {
			for g := range pair[1].Rows() {
				for seg := r.Lo; seg < r.Hi; seg++ {
					if !reflect.DeepEqual(pair[0].Segment(g, seg), pair[1].Segment(g, seg)) {
						t.Fatalf("blocks %v: gene %d segment %d differs from Open's", r, g, seg)
					}
				}
			}
		}
		if r.Len() < 3 {
			if err := s.Verify(context.Background(), 0); err == nil {
				t.Errorf("blocks %v: Verify did not refuse a partial shard", r)
			}
			outside := r.Hi % 3
			if outside == r.Lo {
				outside = (r.Lo + 2) % 3
			}
			for name, read := range map[string]func(){
				"X":  func() { s.X().Row(whole.Manifest().Layout.Block(outside).Lo) },
				"XT": func() { s.XT().Segment(0, outside) },
			} {
				if msg := panicMessage(read); msg == "" {
					t.Errorf("blocks %v: reading %s of block %d did not panic", r, name, outside)
				}
			}
		} else if err := s.Verify(context.Background(), 0); err != nil {
			t.Errorf("every block: Verify: %v", err)
		}
		s.Close()
	}
	for _, r := range []Range{{1, 1}, {-1, 2}, {0, 4}} {
		if _, err := OpenBlocks(dir, r.Lo, r.Hi); err == nil {
			t.Errorf("blocks %v: no error", r)
		}
	}
}

func panicMessage(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}
