package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"scpipe/shard"
)

// RatingsOptions configures RunRatings.
type RatingsOptions struct {
	// Input is a ratings file (plain or gzip) in one of the RatingsLayouts.
	Input string
	// Output is the shard folder to create.
	Output string
	// Threshold binarises: a rating greater than Threshold is 1, any other
	// rating 0. NaN (the default) takes the global mean rating, as the
	// paper does after Ravanbakhsh et al. (2016).
	Threshold float64
	// Force replaces an existing Output.
	Force bool
	// Workers is the number of goroutines that write the shards; 0 means
	// GOMAXPROCS.
	Workers int
	// Logger receives a summary line; nil discards it.
	Logger *slog.Logger
}

// DefaultRatingsOptions binarises at the global mean rating.
func DefaultRatingsOptions() RatingsOptions {
	return RatingsOptions{Threshold: math.NaN()}
}

// RatingsReport describes a completed RunRatings.
type RatingsReport struct {
	Input, Output string
	Layout        RatingsLayout
	// Users and Items are the shards' cells and genes: every user and item
	// with at least one rating.
	Users, Items int
	// Ratings is the number of ratings (observed entries); Ones those above
	// Threshold.
	Ratings, Ones int64
	// Mean is the global mean rating; Threshold the one used, which is Mean
	// unless RatingsOptions.Threshold was set.
	Mean, Threshold float64
	SHA256          string
	Total           time.Duration
}

// RunRatings turns a ratings file into masked shards: users are cells
// (rows), items genes (columns). A rated entry is observed and is 1 when its
// rating is greater than the threshold; an unrated entry is missing (0 in
// the observed mask), not 0, so that a fit never takes "not rated" for
// "disliked". Users and items are numbered in numeric order of their ids
// when every id of the axis is a whole number, else in byte order. Malformed
// lines and ratings of the same item by the same user twice are refused,
// with their line numbers, before anything is written. The shards are
// written to a temporary folder and renamed into place (an existing Output
// only with Force); the manifest records the layout, the threshold and
// where it came from, and the ratings' count, mean and range.
//
// The ratings are held in memory while the shards are written: 16 bytes
// each (MovieLens 32M: about 0.5 GB).
func RunRatings(ctx context.Context, opt RatingsOptions) (*RatingsReport, error) {
	start := time.Now()
	switch {
	case opt.Input == "":
		return nil, errors.New("ingest: no input")
	case opt.Output == "":
		return nil, errors.New("ingest: no output")
	case math.IsInf(opt.Threshold, 0):
		return nil, fmt.Errorf("ingest: threshold %v: want a finite number (or none: the global mean rating)", opt.Threshold)
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	lk, err := lockOutput(opt.Output, opt.Input, log)
	if err != nil {
		return nil, err
	}
	defer lk.Release()
	if !opt.Force {
		if _, err := os.Lstat(opt.Output); err == nil {
			return nil, fmt.Errorf("ingest: output %s already exists; use --force to replace it", opt.Output)
		}
	}
	st, err := os.Stat(opt.Input)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("ingest: %s is a folder: --format ratings reads one ratings file (u.data, ratings.dat, ratings.csv)", opt.Input)
	}
	t, sum, err := readRatings(ctx, opt.Input)
	if err != nil {
		return nil, err
	}
	rep := &RatingsReport{Input: opt.Input, Output: opt.Output, Layout: t.layout, SHA256: sum,
		Users: len(t.users.names), Items: len(t.items.names), Ratings: int64(len(t.value)),
		Mean: t.sum / float64(len(t.value)), Threshold: opt.Threshold}
	from := "given"
	if math.IsNaN(opt.Threshold) {
		rep.Threshold, from = rep.Mean, "mean"
	}
	userRank, userIDs := t.users.order()
	itemRank, itemIDs := t.items.order()
	rows := t.byUser(userRank, itemRank)
	if err := t.duplicates(opt.Input, rows, itemRank).err("duplicate ratings (a user rates an item twice)"); err != nil {
		return nil, err
	}
	w, err := shard.Create(opt.Output, shard.Layout{Cells: rep.Users, Genes: rep.Items, Masked: true}, shard.CreateOptions{Force: opt.Force, Workers: opt.Workers})
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	defer w.Abort()
	rep.Ones = t.write(w, rows, itemRank, rep.Threshold)
	m := shard.Manifest{
		Tool:      "scpipe ingest",
		GeneIDs:   itemIDs,
		GeneNames: itemIDs,
		Barcodes:  userIDs,
		Source:    shard.Source{Path: opt.Input, Format: t.layout.String(), Bytes: st.Size(), SHA256: sum, Values: shard.ValuesRatings},
		Filters: shard.Filters{Threshold: rep.Threshold,
			GenesBefore: rep.Items, GenesAfter: rep.Items, CellsBefore: rep.Users, CellsAfter: rep.Users, OnesBefore: rep.Ones},
		Ratings: shard.Ratings{Count: rep.Ratings, Mean: rep.Mean, Min: t.lo, Max: t.hi, ThresholdFrom: from},
	}
	if err := w.Commit(ctx, m); err != nil {
		return nil, fmt.Errorf("ingest: writing %s: %w", opt.Output, err)
	}
	rep.Total = time.Since(start)
	log.Info("ingest: wrote", "output", opt.Output, "users", rep.Users, "items", rep.Items, "ratings", rep.Ratings,
		"ones", rep.Ones, "mean", rep.Mean, "threshold", rep.Threshold, "elapsed", rep.Total)
	return rep, nil
}

// order returns each id's rank and the ids in rank order: numeric order
// when every id is a whole number (ties of "7" and "007" broken by the
// text), else byte order.
func (x *idIndex) order() (rank []int32, ids []string) {
	idx := make([]int32, len(x.names))
	for i := range idx {
		idx[i] = int32(i)
	}
	numeric := !slices.ContainsFunc(x.names, func(s string) bool {
		return strings.ContainsFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	})
	slices.SortFunc(idx, func(a, b int32) int {
		s, t := x.names[a], x.names[b]
		if numeric {
			// Compare the numbers without parsing: fewer significant
			// digits is smaller, else the digits decide.
			u, v := strings.TrimLeft(s, "0"), strings.TrimLeft(t, "0")
			if c := cmp.Or(cmp.Compare(len(u), len(v)), strings.Compare(u, v)); c != 0 {
				return c
			}
		}
		return strings.Compare(s, t)
	})
	rank, ids = make([]int32, len(idx)), make([]string, len(idx))
	for k, i := range idx {
		rank[i], ids[k] = int32(k), x.names[i]
	}
	return rank, ids
}

// userRows lists the ratings of each user: those of the user ranked n are
// order[start[n]:start[n+1]], by item rank and then file order.
type userRows struct {
	start []int
	order []int32
}

func (r userRows) of(n int) []int32 { return r.order[r.start[n]:r.start[n+1]] }

// byUser groups the ratings by user (a counting sort) and sorts each
// user's by item.
func (t *ratingTable) byUser(userRank, itemRank []int32) userRows {
	r := userRows{start: make([]int, len(userRank)+1), order: make([]int32, len(t.user))}
	for _, u := range t.user {
		r.start[userRank[u]+1]++
	}
	for n := range userRank {
		r.start[n+1] += r.start[n]
	}
	next := slices.Clone(r.start[:len(userRank)])
	for i, u := range t.user {
		n := userRank[u]
		r.order[next[n]] = int32(i)
		next[n]++
	}
	for n := range userRank {
		slices.SortFunc(r.of(n), func(a, b int32) int {
			return cmp.Or(cmp.Compare(itemRank[t.item[a]], itemRank[t.item[b]]), cmp.Compare(a, b))
		})
	}
	return r
}

// duplicates finds the ratings of an item by a user who rated it before.
func (t *ratingTable) duplicates(path string, rows userRows, itemRank []int32) *lineErrors {
	bad := &lineErrors{path: path}
	for n := range len(rows.start) - 1 {
		rs := rows.of(n)
		for k := 1; k < len(rs); k++ {
			first, again := rs[k-1], rs[k]
			if t.item[first] == t.item[again] {
				bad.add(t.firstLine+int(again), "user %s rates item %s again (first on line %d)",
					t.users.names[t.user[again]], t.items.names[t.item[again]], t.firstLine+int(first))
			}
		}
	}
	return bad
}

// write sets every rated entry observed and those rated above threshold
// to 1, and returns the number of ones.
func (t *ratingTable) write(w *shard.Writer, rows userRows, itemRank []int32, threshold float64) int64 {
	var rated, ones []int32
	var total int64
	for n := range len(rows.start) - 1 {
		rated, ones = rated[:0], ones[:0]
		for _, i := range rows.of(n) {
			g := itemRank[t.item[i]]
			rated = append(rated, g)
			if t.value[i] > threshold {
				ones = append(ones, g)
			}
		}
		w.SetObservedRow(n, rated)
		w.SetRow(n, ones)
		total += int64(len(ones))
	}
	return total
}
