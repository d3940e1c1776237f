package ingest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"scpipe/shard"
)

// ratingsFixture is a generated ratings file's content and what the
// shards made from it must hold.
type ratingsFixture struct {
	users, items []string           // ids in the order of the shards' axes
	rated        map[[2]int]float64 // (user rank, item rank) → rating
	sum          float64            // of the ratings in file order
	n            int
}

// makeRatings draws a ratings file: users and items with scattered numeric
// ids written in shuffled order, each user rating a random subset of items
// (at least one), ratings drawn from values. lineOf formats one line.
func makeRatings(seed uint64, users, items int, values []float64, header string, lineOf func(u, i string, r float64, ts int64) string) ([]byte, ratingsFixture) {
	rng := rand.New(rand.NewPCG(seed, 1))
	fx := ratingsFixture{rated: map[[2]int]float64{}}
	// Ids 3, 10, 17, …: numeric order differs from text order (10 < 3).
	for u := range users {
		fx.users = append(fx.users, strconv.Itoa(3+7*u))
	}
	for i := range items {
		fx.items = append(fx.items, strconv.Itoa(1+11*i))
	}
	type line struct {
		u, i int
		r    float64
	}
	var lines []line
	usedItems := map[int]bool{}
	for u := range users {
		mine := 0
		for i := range items {
			// Every user rates something: the last item if nothing else.
			if rng.Float64() < 0.3 || (i == items-1 && mine == 0) {
				lines = append(lines, line{u, i, values[rng.IntN(len(values))]})
				usedItems[i] = true
				mine++
			}
		}
	}
	// Keep only the items someone rated: they are the shards' genes.
	var keep []string
	rank := map[int]int{}
	for i := range items {
		if usedItems[i] {
			rank[i] = len(keep)
			keep = append(keep, fx.items[i])
		}
	}
	fx.items = keep
	rng.Shuffle(len(lines), func(a, b int) { lines[a], lines[b] = lines[b], lines[a] })
	var b bytes.Buffer
	b.WriteString(header)
	for _, l := range lines {
		b.WriteString(lineOf(fx.users[l.u], strconv.Itoa(1+11*l.i), l.r, 881250949+int64(rng.IntN(1e6))))
		fx.rated[[2]int{l.u, rank[l.i]}] = l.r
		fx.sum += l.r
		fx.n++
	}
	return b.Bytes(), fx
}

var (
	tsvLine = func(u, i string, r float64, ts int64) string {
		return fmt.Sprintf("%s\t%s\t%g\t%d\n", u, i, r, ts)
	}
	datLine = func(u, i string, r float64, ts int64) string {
		return fmt.Sprintf("%s::%s::%g::%d\n", u, i, r, ts)
	}
	csvLine = func(u, i string, r float64, ts int64) string {
		return fmt.Sprintf("%s,%s,%g,%d\r\n", u, i, r, ts) // and CRLF line ends
	}
	stars     = []float64{1, 2, 3, 4, 5}
	halfStars = []float64{0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5}
)

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o666); err != nil {
		t.Fatal(err)
	}
	return path
}

func gzipped(data []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

func ingestRatings(t *testing.T, path string, threshold float64) (*RatingsReport, *shard.Shard, error) {
	t.Helper()
	o := DefaultRatingsOptions()
	o.Input, o.Output, o.Threshold = path, filepath.Join(t.TempDir(), "shards"), threshold
	rep, err := RunRatings(context.Background(), o)
	if err != nil {
		return nil, nil, err
	}
	s, err := shard.Open(o.Output)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Verify(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	return rep, s, nil
}

// TestRatingsFormats reads all three layouts and checks every entry of the
// shards: a rated entry is observed and is 1 exactly when its rating is
// above the global mean; an unrated entry is missing (and 0).
func TestRatingsFormats(t *testing.T) {
	tsv, tsvFx := makeRatings(1, 40, 30, stars, "", tsvLine)
	dat, datFx := makeRatings(2, 25, 50, stars, "", datLine)
	csv, csvFx := makeRatings(3, 30, 20, halfStars, "userId,movieId,rating,timestamp\r\n", csvLine)
	for _, tc := range []struct {
		name, file string
		data       []byte
		fx         ratingsFixture
		layout     RatingsLayout
	}{
		{"100k u.data", "u.data", tsv, tsvFx, RatingsTSV},
		{"1M ratings.dat", "ratings.dat", dat, datFx, RatingsDat},
		{"latest ratings.csv", "ratings.csv", csv, csvFx, RatingsCSV},
		{"gzip", "u.data.gz", gzipped(tsv), tsvFx, RatingsTSV},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, s, err := ingestRatings(t, writeFile(t, tc.file, tc.data), math.NaN())
			if err != nil {
				t.Fatal(err)
			}
			mean := tc.fx.sum / float64(tc.fx.n)
			m := s.Manifest()
			if rep.Layout != tc.layout || m.Source.Format != tc.layout.String() {
				t.Errorf("layout %v, manifest format %q; want %v", rep.Layout, m.Source.Format, tc.layout)
			}
			if m.Filters.Threshold != mean || rep.Mean != mean || m.Ratings.Mean != mean || m.Ratings.ThresholdFrom != "mean" {
				t.Errorf("threshold %v (from %q), mean %v; want the global mean %v", m.Filters.Threshold, m.Ratings.ThresholdFrom, m.Ratings.Mean, mean)
			}
			if m.Ratings.Count != int64(tc.fx.n) || m.Observed != int64(tc.fx.n) || rep.Ratings != int64(tc.fx.n) {
				t.Errorf("ratings %d, observed %d; want %d", m.Ratings.Count, m.Observed, tc.fx.n)
			}
			users := barcodes(t, s)
			if !slices.Equal(users, tc.fx.users) || !slices.Equal(m.GeneIDs, tc.fx.items) {
				t.Errorf("users %v…, items %v…: not the ids in numeric order", users[:min(3, len(users))], m.GeneIDs[:3])
			}
			checkEntries(t, s, tc.fx, mean)
		})
	}
}

// checkEntries compares every entry of s with the fixture binarised at
// threshold.
func checkEntries(t *testing.T, s *shard.Shard, fx ratingsFixture, threshold float64) {
	t.Helper()
	m := s.Manifest()
	if m.Cells != len(fx.users) || m.Genes != len(fx.items) || s.Mask() == nil {
		t.Fatalf("shards %d × %d (masked %v), want %d × %d masked", m.Cells, m.Genes, s.Mask() != nil, len(fx.users), len(fx.items))
	}
	var ones int64
	for n := range m.Cells {
		x, obs := s.X().Segment(n, 0), s.Mask().Segment(n, 0)
		for d := range m.Genes {
			bx, bo := x[d/64]>>(d%64)&1 == 1, obs[d/64]>>(d%64)&1 == 1
			r, rated := fx.rated[[2]int{n, d}]
			if bo != rated || bx != (rated && r > threshold) {
				t.Fatalf("user %s item %s: x=%v observed=%v; rating %v (rated %v), threshold %v", fx.users[n], fx.items[d], bx, bo, r, rated, threshold)
			}
			if bx {
				ones++
			}
		}
	}
	if m.Ones != ones {
		t.Errorf("manifest ones %d, counted %d", m.Ones, ones)
	}
}

// TestRatingsThreshold binarises at a given threshold, and at a mean that
// some ratings equal exactly: those are 0 (a rating must exceed it).
func TestRatingsThreshold(t *testing.T) {
	data, fx := makeRatings(4, 20, 20, stars, "", tsvLine)
	rep, s, err := ingestRatings(t, writeFile(t, "u.data", data), 3)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Threshold != 3 || s.Manifest().Filters.Threshold != 3 || s.Manifest().Ratings.ThresholdFrom != "given" {
		t.Errorf("threshold %v from %q, want 3 given", s.Manifest().Filters.Threshold, s.Manifest().Ratings.ThresholdFrom)
	}
	checkEntries(t, s, fx, 3)

	// Ratings 1, 3, 5 and 3 have the mean 3 exactly.
	tie := []byte("1\t1\t1\n1\t2\t3\n2\t1\t5\n2\t2\t3\n")
	rep, s, err = ingestRatings(t, writeFile(t, "tie.data", tie), math.NaN())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Mean != 3 || rep.Ones != 1 {
		t.Errorf("mean %v with %d ones; want 3 and only the 5 above it", rep.Mean, rep.Ones)
	}
	if x := s.X().Segment(1, 0)[0]; x != 1 {
		t.Errorf("user 2's row %b, want only item 1 set", x)
	}
}

// TestRatingsRejected checks that malformed lines and duplicates are
// refused with the file name and their line numbers, and that nothing is
// written.
func TestRatingsRejected(t *testing.T) {
	var many strings.Builder
	for i := range 15 {
		fmt.Fprintf(&many, "%d\t1\tfive\n", i+1)
	}
	for _, tc := range []struct {
		name, data string
		want       []string
	}{
		{"too few fields", "1\t1\t4\n2\t1\n", []string{"line 2: 2 fields, want 3 or 4"}},
		{"too many fields", "1\t1\t4\t5\t6\n", []string{"line 1: 5 fields"}},
		{"rating not a number", "1\t1\t4\n1\t2\tgood\n2\t2\t3\n", []string{"line 2: rating \"good\""}},
		{"rating NaN", "1::1::NaN::1\n", []string{"line 1: rating \"NaN\" is not a finite number"}},
		{"empty user", "1::1::4::1\n::2::4::1\n", []string{"line 2: empty user id"}},
		{"bad timestamp", "1\t1\t4\t1.5e9\n", []string{"line 1: timestamp \"1.5e9\""}},
		{"empty line", "1\t1\t4\n\n2\t1\t3\n", []string{"line 2: empty line"}},
		{"csv field count", "userId,movieId,rating,timestamp\n1,1,4,1\n1,2,4\n", []string{"line 3: 3 fields, the header has 4"}},
		{"csv no rating column", "userId,movieId,stars\n1,1,4\n", []string{"line 1", "no rating column"}},
		{"not ratings", "hello world\n", []string{"line 1: not a ratings file"}},
		{"several bad lines", "1\t1\t4\n1\t2\n2\t2\tx\n", []string{"2 malformed lines", "line 2: 2 fields", "line 3: rating \"x\""}},
		{"many bad lines", many.String(), []string{"15 malformed lines (the first 10)", "line 10:"}},
		{"duplicate", "1\t1\t4\n1\t2\t3\n2\t1\t5\n1\t1\t2\n", []string{"1 duplicate ratings", "line 4: user 1 rates item 1 again (first on line 1)"}},
		{"csv duplicate", "userId,movieId,rating\n7,9,4\n7,9,4\n", []string{"line 3: user 7 rates item 9 again (first on line 2)"}},
		{"empty file", "", []string{"no ratings"}},
		{"header only", "userId,movieId,rating\n", []string{"no ratings"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "bad.data", []byte(tc.data))
			o := DefaultRatingsOptions()
			o.Input, o.Output = path, filepath.Join(t.TempDir(), "shards")
			_, err := RunRatings(context.Background(), o)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range append(tc.want, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if _, serr := os.Stat(o.Output); !os.IsNotExist(serr) {
				t.Errorf("output written despite the error: %v", serr)
			}
		})
	}
}

// TestRatingsOutputExists refuses to replace shards without Force.
func TestRatingsOutputExists(t *testing.T) {
	path := writeFile(t, "u.data", []byte("1\t1\t4\n2\t1\t2\n"))
	o := DefaultRatingsOptions()
	o.Input, o.Output = path, filepath.Join(t.TempDir(), "shards")
	if _, err := RunRatings(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if _, err := RunRatings(context.Background(), o); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second run: %v", err)
	}
	o.Force = true
	if _, err := RunRatings(context.Background(), o); err != nil {
		t.Fatal(err)
	}
}

// TestRatingsIDOrder numbers ids numerically when all are numbers, else in
// byte order.
func TestRatingsIDOrder(t *testing.T) {
	for _, tc := range []struct {
		ids, want []string
	}{
		{[]string{"10", "9", "100", "007", "7"}, []string{"007", "7", "9", "10", "100"}},
		{[]string{"b", "10", "a", "9"}, []string{"10", "9", "a", "b"}},
	} {
		x := newIDIndex()
		for _, id := range tc.ids {
			x.id([]byte(id))
		}
		rank, ids := x.order()
		if !slices.Equal(ids, tc.want) {
			t.Errorf("%v ordered %v, want %v", tc.ids, ids, tc.want)
		}
		for i, id := range tc.ids {
			if ids[rank[i]] != id {
				t.Errorf("rank of %s is %d, which holds %s", id, rank[i], ids[rank[i]])
			}
		}
	}
}
