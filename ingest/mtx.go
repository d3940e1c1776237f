package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// mtxField is the value type of a Matrix Market coordinate file.
type mtxField int

const (
	fieldInteger mtxField = iota
	fieldReal
	fieldPattern // no value column: every entry is 1
)

// mtxHeader is the banner and size line of a Matrix Market file.
type mtxHeader struct {
	rows, cols int64
	entries    int64
	field      mtxField
	sizeLine   int64 // line number of the size line
}

// maxIntegerMTX is the largest value of an integer matrix: 2^53, beyond
// which float64 (and so the threshold compared with it) skips integers.
// No count comes near it; 1e20 is a damaged or mislabelled file.
const maxIntegerMTX = 1 << 53

// maxDimMTX bounds the dimensions accepted (shard indices are int32).
const maxDimMTX = math.MaxInt32

// mtxParser reads the entries of a Matrix Market "coordinate general" file
// with a hand-written byte scanner: no allocation per line, no reflection.
type mtxParser struct {
	path string
	r    *bufio.Reader
	line int64 // lines read so far
	hdr  mtxHeader
	seen int64 // entries read so far
}

// newMTXParser reads the header from r and returns a parser positioned at
// the first entry. path only names the file in errors.
func newMTXParser(path string, r *bufio.Reader) (*mtxParser, error) {
	p := &mtxParser{path: path, r: r}
	if err := p.readHeader(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *mtxParser) errorf(format string, args ...any) error {
	return fmt.Errorf("ingest: %s line %d: %s", p.path, p.line, fmt.Sprintf(format, args...))
}

// readLine returns the next line without its terminator; io.EOF at the end.
// The slice is valid until the next call.
func (p *mtxParser) readLine() ([]byte, error) {
	line, err := p.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		p.line++
		return nil, p.errorf("line longer than %d bytes", p.r.Size())
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	if len(line) == 0 && err == io.EOF {
		return nil, io.EOF
	}
	p.line++
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

func (p *mtxParser) readHeader() error {
	line, err := p.readLine()
	if err == io.EOF {
		return fmt.Errorf("ingest: %s: empty file, not a Matrix Market matrix", p.path)
	}
	if err != nil {
		return err
	}
	f := bytes.Fields(line)
	if len(f) == 0 || !bytes.EqualFold(f[0], []byte("%%MatrixMarket")) {
		return p.errorf("not a Matrix Market file: want a %%%%MatrixMarket banner, got %.40q", line)
	}
	if len(f) != 5 {
		return p.errorf("banner %q: want %%%%MatrixMarket matrix coordinate <field> <symmetry>", line)
	}
	if !bytes.EqualFold(f[1], []byte("matrix")) {
		return p.errorf("banner object %q not supported (want matrix)", f[1])
	}
	if !bytes.EqualFold(f[2], []byte("coordinate")) {
		return p.errorf("banner format %q not supported (want coordinate: a sparse matrix)", f[2])
	}
	switch string(bytes.ToLower(f[3])) {
	case "integer":
		p.hdr.field = fieldInteger
	case "real", "double":
		p.hdr.field = fieldReal
	case "pattern":
		p.hdr.field = fieldPattern
	default:
		return p.errorf("banner field %q not supported (want integer, real or pattern)", f[3])
	}
	if !bytes.EqualFold(f[4], []byte("general")) {
		return p.errorf("banner symmetry %q not supported (want general)", f[4])
	}
	for {
		line, err = p.readLine()
		if err == io.EOF {
			return fmt.Errorf("ingest: %s: no size line after the header", p.path)
		}
		if err != nil {
			return err
		}
		t := trimSpace(line)
		if len(t) == 0 || t[0] == '%' {
			continue // comments, %metadata_json included
		}
		var v [3]int64
		i := 0
		for k := range v {
			var ok bool
			i = skipSpace(t, i)
			if v[k], i, ok = parseUint(t, i); !ok {
				return p.errorf("bad size line %q: want rows columns entries", line)
			}
		}
		if skipSpace(t, i) != len(t) {
			return p.errorf("bad size line %q: want rows columns entries", line)
		}
		if v[0] > maxDimMTX || v[1] > maxDimMTX {
			return p.errorf("matrix %d × %d too large (at most %d per side)", v[0], v[1], maxDimMTX)
		}
		p.hdr.rows, p.hdr.cols, p.hdr.entries = v[0], v[1], v[2]
		p.hdr.sizeLine = p.line
		return nil
	}
}

// next fills b (from empty) with up to cap(b) entries as 0-based (row, col,
// value); it returns io.EOF after the last entry, once the entry count has
// been checked against the header.
func (p *mtxParser) next(rows, cols []int32, vals []float64) (int, error) {
	n := 0
	for n < len(rows) {
		line, err := p.readLine()
		if err == io.EOF {
			if p.seen != p.hdr.entries {
				return n, fmt.Errorf("ingest: %s: header (line %d) declares %d entries but the file has %d",
					p.path, p.hdr.sizeLine, p.hdr.entries, p.seen)
			}
			return n, io.EOF
		}
		if err != nil {
			return n, err
		}
		r, c, v, err := p.parseEntry(line)
		if err != nil {
			return n, err
		}
		if r < 0 {
			continue // blank line
		}
		rows[n], cols[n], vals[n] = int32(r), int32(c), v
		n++
	}
	return n, nil
}

// parseEntry parses "row col [value]"; it returns r = -1 for a blank line.
func (p *mtxParser) parseEntry(line []byte) (r, c int64, v float64, err error) {
	i := skipSpace(line, 0)
	if i == len(line) {
		return -1, 0, 0, nil
	}
	if line[i] == '%' {
		return 0, 0, 0, p.errorf("comment line after the size line")
	}
	var ok bool
	if r, i, ok = parseUint(line, i); !ok || !isSpace(line, i) {
		return 0, 0, 0, p.errorf("bad entry %.60q: want row column value", line)
	}
	if c, i, ok = parseUint(line, skipSpace(line, i)); !ok {
		return 0, 0, 0, p.errorf("bad entry %.60q: want row column value", line)
	}
	if p.hdr.field == fieldPattern {
		v = 1
	} else {
		if !isSpace(line, i) {
			return 0, 0, 0, p.errorf("bad entry %.60q: want row column value", line)
		}
		i = skipSpace(line, i)
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		if j == i {
			return 0, 0, 0, p.errorf("bad entry %.60q: missing value", line)
		}
		// Counts are short digit strings: convert those directly (exact
		// below 2^53); anything else takes the general path.
		if u, k, ok := parseUint(line, i); ok && k == j && u < 1<<53 {
			v = float64(u)
		} else {
			if v, ok = parseFloat(line[i:j]); !ok {
				return 0, 0, 0, p.errorf("bad value %.40q", line[i:j])
			}
			if p.hdr.field == fieldInteger && v != math.Trunc(v) {
				return 0, 0, 0, p.errorf("value %s in an integer matrix", line[i:j])
			}
			if p.hdr.field == fieldInteger && math.Abs(v) > maxIntegerMTX {
				return 0, 0, 0, p.errorf("value %s in an integer matrix: counts are at most 2^53 (%d), which a float64 holds exactly", line[i:j], int64(maxIntegerMTX))
			}
		}
		i = j
	}
	if skipSpace(line, i) != len(line) {
		return 0, 0, 0, p.errorf("bad entry %.60q: extra fields", line)
	}
	p.seen++
	if p.seen > p.hdr.entries {
		return 0, 0, 0, p.errorf("more entries than the %d the header (line %d) declares", p.hdr.entries, p.hdr.sizeLine)
	}
	if r < 1 || r > p.hdr.rows {
		return 0, 0, 0, p.errorf("row %d out of range 1..%d", r, p.hdr.rows)
	}
	if c < 1 || c > p.hdr.cols {
		return 0, 0, 0, p.errorf("column %d out of range 1..%d", c, p.hdr.cols)
	}
	if !(v >= 0 && v <= math.MaxFloat64) {
		return 0, 0, 0, p.errorf("%v", checkValue(v))
	}
	return r - 1, c - 1, v, nil
}

func isSpace(b []byte, i int) bool { return i < len(b) && (b[i] == ' ' || b[i] == '\t') }

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

func trimSpace(b []byte) []byte {
	i := skipSpace(b, 0)
	j := len(b)
	for j > i && (b[j-1] == ' ' || b[j-1] == '\t') {
		j--
	}
	return b[i:j]
}

// maxUint is the largest number parseUint accepts.
const maxUint = 1<<62 - 1

// parseUint parses decimal digits at b[i:]; ok is false when there are none
// or the number exceeds maxUint.
func parseUint(b []byte, i int) (v int64, j int, ok bool) {
	j = i
	for j < len(b) {
		d := int64(b[j] - '0')
		if d > 9 {
			break
		}
		if v > (maxUint-d)/10 {
			return 0, j, false
		}
		v = v*10 + d
		j++
	}
	return v, j, j > i
}

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseFloat parses a decimal number. Short decimals (mantissa below 2^53,
// decimal exponent within ±22, which covers counts and typical normalised
// values) take Clinger's exact fast path: one conversion and one
// multiplication or division by an exact power of ten, both correctly
// rounded. Everything else, including nan and inf, goes to strconv.
func parseFloat(b []byte) (float64, bool) {
	i, neg := 0, false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	var mant uint64
	exp, digits, dot := 0, 0, false
	for ; i < len(b); i++ {
		c := b[i]
		if d := c - '0'; d <= 9 {
			digits++
			if mant >= 1<<53 {
				return parseFloatSlow(b)
			}
			mant = mant*10 + uint64(d)
			if dot {
				exp--
			}
			continue
		}
		if c == '.' && !dot {
			dot = true
			continue
		}
		break
	}
	if digits == 0 {
		return parseFloatSlow(b)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '-' || b[i] == '+') {
			eneg = b[i] == '-'
			i++
		}
		e, j, ok := parseUint(b, i)
		if !ok || e > 1000 {
			return parseFloatSlow(b)
		}
		i = j
		if eneg {
			e = -e
		}
		exp += int(e)
	}
	if i != len(b) || mant >= 1<<53 || exp < -22 || exp > 22 {
		return parseFloatSlow(b)
	}
	f := float64(mant)
	if exp < 0 {
		f /= pow10[-exp]
	} else {
		f *= pow10[exp]
	}
	if neg {
		f = -f
	}
	return f, true
}

func parseFloatSlow(b []byte) (float64, bool) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}
