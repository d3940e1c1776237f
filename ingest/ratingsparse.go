package ingest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// RatingsLayout is the line layout of a ratings file, detected from its
// first line.
type RatingsLayout int

// The ratings layouts.
const (
	// RatingsTSV is user<TAB>item<TAB>rating[<TAB>timestamp] without a
	// header (MovieLens 100k u.data).
	RatingsTSV RatingsLayout = iota + 1
	// RatingsDat is user::item::rating[::timestamp] without a header
	// (MovieLens 1M and 10M ratings.dat).
	RatingsDat
	// RatingsCSV is comma-separated with a header naming the user, item
	// and rating columns (MovieLens latest ratings.csv:
	// userId,movieId,rating,timestamp); other columns are ignored.
	RatingsCSV
)

// String returns the name recorded as the manifest's source.format.
func (l RatingsLayout) String() string {
	switch l {
	case RatingsTSV:
		return "ratings-tsv"
	case RatingsDat:
		return "ratings-dat"
	case RatingsCSV:
		return "ratings-csv"
	}
	return "ratings-unknown"
}

// Header names of a CSV ratings file's columns, compared case-insensitively.
var (
	csvUserNames   = []string{"userid", "user_id", "user"}
	csvItemNames   = []string{"movieid", "movie_id", "itemid", "item_id", "item", "movie"}
	csvRatingNames = []string{"rating"}
	csvTimeNames   = []string{"timestamp"}
)

// maxLineErrors is the number of bad lines an error message lists; the rest
// are only counted.
const maxLineErrors = 10

// ratingTable is a ratings file read into memory: rating i (in file order)
// is user[i]'s rating value[i] of item[i], on line firstLine+i of the file.
type ratingTable struct {
	layout     RatingsLayout
	users      idIndex
	items      idIndex
	user, item []int32
	value      []float64
	firstLine  int
	sum        float64
	lo, hi     float64 // smallest and largest rating
}

// idIndex numbers the distinct ids of one axis in order of first
// appearance.
type idIndex struct {
	index map[string]int32
	names []string
}

func newIDIndex() idIndex { return idIndex{index: map[string]int32{}} }

// id returns the number of b, numbering it when new; ok is false when the
// axis already holds math.MaxInt32 ids.
func (x *idIndex) id(b []byte) (int32, bool) {
	if i, ok := x.index[string(b)]; ok { // no allocation for the lookup
		return i, true
	}
	if len(x.names) == math.MaxInt32 {
		return 0, false
	}
	i := int32(len(x.names))
	s := string(b)
	x.index[s] = i
	x.names = append(x.names, s)
	return i, true
}

// lineErrors collects the bad lines of a file: the first maxLineErrors
// messages and the count of all.
type lineErrors struct {
	path string
	n    int
	msgs []string
}

func (e *lineErrors) add(line int, format string, a ...any) {
	e.n++
	if len(e.msgs) < maxLineErrors {
		e.msgs = append(e.msgs, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, a...))
	}
}

// err returns nil when no line was bad, else one error naming the file,
// the number of bad lines (what) and the first few with their line numbers.
func (e *lineErrors) err(what string) error {
	if e.n == 0 {
		return nil
	}
	s := fmt.Sprintf("ingest: %s: %d %s", e.path, e.n, what)
	if e.n > len(e.msgs) {
		s += fmt.Sprintf(" (the first %d)", len(e.msgs))
	}
	return errors.New(s + ": " + strings.Join(e.msgs, "; "))
}

// readRatings reads every line of the ratings file at path (plain or gzip)
// into a table, detecting the layout from the first line. Malformed lines
// are collected and reported together; nothing is returned with them.
// The file's SHA-256 is returned too.
func readRatings(ctx context.Context, path string) (*ratingTable, string, error) {
	f, err := openText(path, true, 1<<20)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	t := &ratingTable{users: newIDIndex(), items: newIDIndex(), lo: math.Inf(1), hi: math.Inf(-1)}
	bad := &lineErrors{path: path}
	var p lineParser
	line := 0
	for {
		text, err := readLine(f.Reader)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, "", err
		}
		line++
		if line%(1<<16) == 0 {
			if err := ctx.Err(); err != nil {
				return nil, "", err
			}
		}
		if line == 1 {
			if p, err = newLineParser(text); err != nil {
				return nil, "", fmt.Errorf("ingest: %s line 1: %w", path, err)
			}
			t.layout = p.layout
			if p.layout == RatingsCSV {
				continue // the header
			}
		}
		if t.firstLine == 0 {
			t.firstLine = line
		}
		r, why := p.parse(text)
		if why != "" {
			bad.add(line, "%s", why)
			continue
		}
		if bad.n > 0 {
			continue // the table is discarded: only keep finding bad lines
		}
		u, ok1 := t.users.id(r.user)
		it, ok2 := t.items.id(r.item)
		if !ok1 || !ok2 || len(t.value) == math.MaxInt32 {
			return nil, "", fmt.Errorf("ingest: %s line %d: more than %d ratings, users or items", path, line, math.MaxInt32)
		}
		t.user, t.item, t.value = append(t.user, u), append(t.item, it), append(t.value, r.value)
		t.sum += r.value
		t.lo, t.hi = min(t.lo, r.value), max(t.hi, r.value)
	}
	if err := bad.err("malformed lines"); err != nil {
		return nil, "", fmt.Errorf("%w (%s)", err, p.want())
	}
	if len(t.value) == 0 {
		return nil, "", fmt.Errorf("ingest: %s: no ratings", path)
	}
	sum, err := f.sum()
	return t, sum, err
}

// readLine returns the next line of r without its line ending (\n or
// \r\n), whatever its length; io.EOF only when nothing is left.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		long := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			line, err = r.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	if err == io.EOF && len(line) > 0 {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte{'\n'})
	return bytes.TrimSuffix(line, []byte{'\r'}), nil
}

// rating is one parsed line; user and item alias the line's bytes.
type rating struct {
	user, item []byte
	value      float64
}

// lineParser splits the lines of one layout into fields.
type lineParser struct {
	layout RatingsLayout
	sep    []byte
	// Column of each field; timeCol is -1 without one. fields is the
	// number of fields a line has: exactly that for CSV, 3 or 4 otherwise.
	userCol, itemCol, ratingCol, timeCol int
	fields                               int
	buf                                  [][]byte
}

// newLineParser detects the layout from the first line of a file: "::"
// means RatingsDat, a tab RatingsTSV, a comma RatingsCSV (whose first line
// is the header).
func newLineParser(first []byte) (lineParser, error) {
	p := lineParser{userCol: 0, itemCol: 1, ratingCol: 2, timeCol: 3, fields: 4}
	switch {
	case bytes.Contains(first, []byte("::")):
		p.layout, p.sep = RatingsDat, []byte("::")
	case bytes.IndexByte(first, '\t') >= 0:
		p.layout, p.sep = RatingsTSV, []byte{'\t'}
	case bytes.IndexByte(first, ',') >= 0:
		p.layout, p.sep = RatingsCSV, []byte{','}
		return p, p.header(first)
	default:
		return p, errors.New("not a ratings file: want user<TAB>item<TAB>rating[<TAB>timestamp] (MovieLens 100k u.data), " +
			"user::item::rating::timestamp (MovieLens 1M ratings.dat) or a CSV header such as userId,movieId,rating,timestamp (MovieLens ratings.csv)")
	}
	return p, nil
}

// header finds the columns of a CSV file from its header line.
func (p *lineParser) header(line []byte) error {
	names := p.split(line)
	p.fields = len(names)
	p.userCol, p.itemCol, p.ratingCol, p.timeCol = -1, -1, -1, -1
	for i, b := range names {
		name := strings.ToLower(strings.TrimSpace(strings.Trim(string(b), `"`)))
		for _, c := range []struct {
			col   *int
			names []string
		}{{&p.userCol, csvUserNames}, {&p.itemCol, csvItemNames}, {&p.ratingCol, csvRatingNames}, {&p.timeCol, csvTimeNames}} {
			for _, n := range c.names {
				if name == n {
					if *c.col >= 0 {
						return fmt.Errorf("CSV header %q names the %s column twice", line, n)
					}
					*c.col = i
				}
			}
		}
	}
	for _, c := range []struct {
		col  int
		what string
		want []string
	}{{p.userCol, "user", csvUserNames}, {p.itemCol, "item", csvItemNames}, {p.ratingCol, "rating", csvRatingNames}} {
		if c.col < 0 {
			return fmt.Errorf("CSV header %q has no %s column (want one named %s, as in userId,movieId,rating,timestamp)", line, c.what, strings.Join(c.want, " or "))
		}
	}
	return nil
}

// want describes the expected line, for error messages.
func (p *lineParser) want() string {
	switch p.layout {
	case RatingsTSV:
		return "want user<TAB>item<TAB>rating[<TAB>timestamp]"
	case RatingsDat:
		return "want user::item::rating[::timestamp]"
	}
	return fmt.Sprintf("want %d comma-separated fields as in the header", p.fields)
}

// split cuts line at the separator into p.buf (reused).
func (p *lineParser) split(line []byte) [][]byte {
	p.buf = p.buf[:0]
	for {
		i := bytes.Index(line, p.sep)
		if i < 0 {
			return append(p.buf, line)
		}
		p.buf = append(p.buf, line[:i])
		line = line[i+len(p.sep):]
	}
}

// parse reads one data line; why says what is wrong with a malformed one.
func (p *lineParser) parse(line []byte) (r rating, why string) {
	if len(bytes.TrimSpace(line)) == 0 {
		return r, "empty line"
	}
	f := p.split(line)
	switch {
	case p.layout == RatingsCSV && len(f) != p.fields:
		return r, fmt.Sprintf("%d fields, the header has %d", len(f), p.fields)
	case p.layout != RatingsCSV && len(f) != 3 && len(f) != 4:
		return r, fmt.Sprintf("%d fields, want 3 or 4 (user, item, rating[, timestamp])", len(f))
	}
	if p.layout == RatingsCSV {
		for i, b := range f {
			f[i] = bytes.Trim(b, `"`)
		}
	}
	r.user, r.item = f[p.userCol], f[p.itemCol]
	switch {
	case len(r.user) == 0:
		return r, "empty user id"
	case len(r.item) == 0:
		return r, "empty item id"
	}
	v, err := strconv.ParseFloat(string(f[p.ratingCol]), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return r, fmt.Sprintf("rating %q is not a finite number", f[p.ratingCol])
	}
	r.value = v
	if p.timeCol >= 0 && p.timeCol < len(f) {
		if _, err := strconv.ParseInt(string(f[p.timeCol]), 10, 64); err != nil {
			return r, fmt.Sprintf("timestamp %q is not a whole number", f[p.timeCol])
		}
	}
	return r, ""
}
