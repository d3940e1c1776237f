package h5

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/scigolib/hdf5"
)

// writeFile writes one 1-D dataset "/v" with scigolib's writer.
func writeFile(t testing.TB, path string, dtype hdf5.Datatype, data any, n uint64, opts ...hdf5.DatasetOption) {
	t.Helper()
	fw, err := hdf5.CreateForWrite(path, hdf5.CreateTruncate)
	if err != nil {
		t.Fatal(err)
	}
	dw, err := fw.CreateDataset("/v", dtype, []uint64{n}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := dw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := dw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestChunkedRoundTrip(t *testing.T) {
	const chunk = 100
	sizes := []int{1, chunk - 1, chunk, chunk + 1, 7*chunk + 3, 40 * chunk}
	pipelines := map[string][]hdf5.DatasetOption{
		"plain":           nil,
		"deflate":         {hdf5.WithGZIPCompression(6)},
		"shuffle+deflate": {hdf5.WithShuffle(), hdf5.WithGZIPCompression(1)},
		"fletcher32":      {hdf5.WithFletcher32()},
		"all":             {hdf5.WithShuffle(), hdf5.WithGZIPCompression(4), hdf5.WithFletcher32()},
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(1))
	for name, opts := range pipelines {
		for _, n := range sizes {
			t.Run(fmt.Sprintf("%s/n=%d", name, n), func(t *testing.T) {
				want := make([]int32, n)
				for i := range want {
					want[i] = int32(rng.Intn(1<<20)) - 1<<19
				}
				path := filepath.Join(dir, fmt.Sprintf("%s-%d.h5", name, n))
				writeFile(t, path, hdf5.Int32, want, uint64(n), append([]hdf5.DatasetOption{hdf5.WithChunkDims([]uint64{uint64(min(chunk, n))})}, opts...)...)
				d := openV(t, path, 4)
				if d.Len() != int64(n) || d.Kind() != Int || d.ElemSize() != 4 {
					t.Fatalf("Len %d Kind %v ElemSize %d", d.Len(), d.Kind(), d.ElemSize())
				}
				// Whole range, then ranges straddling chunk boundaries.
				checkRange(t, d, want, 0, n)
				for _, s := range []int{0, chunk - 1, chunk, chunk + 1, n / 2} {
					for _, l := range []int{0, 1, 2, chunk, chunk + 2, 3 * chunk} {
						if s+l <= n {
							checkRange(t, d, want, s, l)
						}
					}
				}
				if err := d.ReadInt32(int64(n), make([]int32, 1)); err == nil {
					t.Error("read past the end succeeded")
				}
			})
		}
	}
}

// openV opens the file at path and returns its dataset /v; the file is
// closed when the test ends.
func openV(t testing.TB, path string, workers int) *Dataset {
	t.Helper()
	f, err := Open(path, workers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	d, err := f.Dataset("/v")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func checkRange(t *testing.T, d *Dataset, want []int32, s, l int) {
	t.Helper()
	got32 := make([]int32, l)
	if err := d.ReadInt32(int64(s), got32); err != nil {
		t.Fatal(err)
	}
	got64 := make([]int64, l)
	if err := d.ReadInt64(int64(s), got64); err != nil {
		t.Fatal(err)
	}
	gotF := make([]float64, l)
	if err := d.ReadFloat64(int64(s), gotF); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < l; i++ {
		w := want[s+i]
		if got32[i] != w || got64[i] != int64(w) || gotF[i] != float64(w) {
			t.Fatalf("[%d+%d]: got %d/%d/%v, want %d", s, i, got32[i], got64[i], gotF[i], w)
		}
	}
}

func TestTypes(t *testing.T) {
	dir := t.TempDir()
	const n = 250
	cases := []struct {
		name  string
		dtype hdf5.Datatype
		data  any
		kind  NumKind
		want  func(i int) float64
		int32 bool // fits int32
	}{
		{"int8", hdf5.Int8, fill(n, func(i int) int8 { return int8(i - 128) }), Int, func(i int) float64 { return float64(int8(i - 128)) }, true},
		{"uint8", hdf5.Uint8, fill(n, func(i int) uint8 { return uint8(i) }), Uint, func(i int) float64 { return float64(uint8(i)) }, true},
		{"int16", hdf5.Int16, fill(n, func(i int) int16 { return int16(-300 * i) }), Int, func(i int) float64 { return float64(int16(-300 * i)) }, true},
		{"uint16", hdf5.Uint16, fill(n, func(i int) uint16 { return uint16(260 * i) }), Uint, func(i int) float64 { return float64(uint16(260 * i)) }, true},
		{"uint32", hdf5.Uint32, fill(n, func(i int) uint32 { return uint32(i) * 1000 }), Uint, func(i int) float64 { return float64(uint32(i) * 1000) }, true},
		{"int64", hdf5.Int64, fill(n, func(i int) int64 { return int64(i-n/2) << 40 }), Int, func(i int) float64 { return float64(int64(i-n/2) << 40) }, false},
		{"uint64", hdf5.Uint64, fill(n, func(i int) uint64 { return uint64(i) * 3 }), Uint, func(i int) float64 { return float64(i * 3) }, true},
		{"float32", hdf5.Float32, fill(n, func(i int) float32 { return float32(i) / 8 }), Float, func(i int) float64 { return float64(i) / 8 }, false},
		{"float64", hdf5.Float64, fill(n, func(i int) float64 { return float64(i) * 1e-3 }), Float, func(i int) float64 { return float64(i) * 1e-3 }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, chunked := range []bool{false, true} {
				path := filepath.Join(dir, fmt.Sprintf("%s-%v.h5", tc.name, chunked))
				var opts []hdf5.DatasetOption
				if chunked {
					opts = []hdf5.DatasetOption{hdf5.WithChunkDims([]uint64{64}), hdf5.WithShuffle(), hdf5.WithGZIPCompression(1)}
				}
				writeFile(t, path, tc.dtype, tc.data, n, opts...)
				f, err := Open(path, 4)
				if err != nil {
					t.Fatal(err)
				}
				d, err := f.Dataset("/v")
				if err != nil {
					t.Fatal(err)
				}
				if d.Kind() != tc.kind {
					t.Errorf("Kind = %v, want %v", d.Kind(), tc.kind)
				}
				got := make([]float64, n)
				if err := d.ReadFloat64(0, got); err != nil {
					t.Fatal(err)
				}
				for i := range got {
					if got[i] != tc.want(i) {
						t.Fatalf("[%d] = %v, want %v", i, got[i], tc.want(i))
					}
				}
				err = d.ReadInt32(0, make([]int32, n))
				if tc.int32 && err != nil {
					t.Errorf("ReadInt32: %v", err)
				}
				if !tc.int32 && err == nil {
					t.Errorf("ReadInt32 of %s succeeded; want an overflow or type error", tc.name)
				}
				f.Close()
			}
		})
	}
}

func fill[T any](n int, f func(int) T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "matrix.h5")
	if err := os.WriteFile(text, []byte("gene\tcell\tcount\n1\t2\t3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ok, err := IsHDF5(text); ok || err != nil {
		t.Errorf("IsHDF5(text file) = %v, %v; want false, nil", ok, err)
	}
	if _, err := Open(text, 4); !errors.Is(err, errNotHDF5) || !strings.Contains(err.Error(), text) {
		t.Errorf("Open(text file) error = %v; want errNotHDF5 naming the file", err)
	}
	if _, err := IsHDF5(filepath.Join(dir, "missing.h5")); err == nil {
		t.Error("IsHDF5(missing file) succeeded")
	}

	good := filepath.Join(dir, "good.h5")
	want := fill(5000, func(i int) int32 { return int32(i) })
	writeFile(t, good, hdf5.Int32, want, 5000, hdf5.WithChunkDims([]uint64{500}), hdf5.WithGZIPCompression(1))
	if ok, err := IsHDF5(good); !ok || err != nil {
		t.Fatalf("IsHDF5(good) = %v, %v", ok, err)
	}
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(good, 4)
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.Dataset("/v")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.ReadInt32(0, make([]int32, 1)); err != nil {
		t.Fatal(err)
	}
	idx := d.index
	f.Close()
	lastChunk := idx.ref(idx.n - 1)
	// Truncations: inside the superblock, and cutting into the last chunk.
	for _, cut := range []int{40, int(lastChunk.addr + lastChunk.size/2)} {
		p := filepath.Join(dir, fmt.Sprintf("trunc%d.h5", cut))
		if err := os.WriteFile(p, b[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		err := readAllErr(p)
		if err == nil {
			t.Errorf("truncated at %d of %d bytes: read succeeded", cut, len(b))
		} else if !strings.Contains(err.Error(), p) {
			t.Errorf("truncated at %d: error %q does not name the file", cut, err)
		}
	}
	// A corrupted chunk must fail, not return garbage: its zlib checksum
	// (or its deflate structure) no longer matches.
	bad := append([]byte(nil), b...)
	for i := idx.ref(2).addr + 4; i < idx.ref(2).addr+idx.ref(2).size-2; i++ {
		bad[i] ^= 0x5a
	}
	p := filepath.Join(dir, "corrupt.h5")
	if err := os.WriteFile(p, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := readAllErr(p); err == nil {
		t.Error("corrupted chunk read succeeded")
	}
}

func readAllErr(path string) error {
	f, err := Open(path, 4)
	if err != nil {
		return err
	}
	defer f.Close()
	d, err := f.Dataset("/v")
	if err != nil {
		return err
	}
	return d.ReadInt32(0, make([]int32, d.Len()))
}

// TestViews reads random ranges of a shuffled, deflated dataset through
// four views at once (run with -race): each must see the data, and the
// dataset's own reads afterwards too.
func TestViews(t *testing.T) {
	const n, chunk = 20000, 700
	want := make([]int32, n)
	rng := rand.New(rand.NewSource(2))
	for i := range want {
		want[i] = int32(rng.Intn(1 << 20))
	}
	path := filepath.Join(t.TempDir(), "v.h5")
	writeFile(t, path, hdf5.Int32, want, n, hdf5.WithChunkDims([]uint64{chunk}), hdf5.WithShuffle(), hdf5.WithGZIPCompression(4))
	d := openV(t, path, 4)
	if d.ChunkLen() != chunk {
		t.Fatalf("ChunkLen %d, want %d", d.ChunkLen(), chunk)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		v, err := d.View()
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			rng := rand.New(rand.NewSource(int64(w)))
			got := make([]int32, 3*chunk)
			for range 200 {
				s, l := rng.Intn(n), rng.Intn(len(got))
				l = min(l, n-s)
				if err := v.ReadInt32(int64(s), got[:l]); err != nil {
					errs <- err
					return
				}
				for i := range l {
					if got[i] != want[s+i] {
						errs <- fmt.Errorf("view %d: [%d+%d] = %d, want %d", w, s, i, got[i], want[s+i])
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkRange(t, d, want, 0, n)
}
