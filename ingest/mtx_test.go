package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestParseFloat checks the fast decimal parser against strconv bit for bit.
func TestParseFloat(t *testing.T) {
	t.Parallel()
	cases := []string{
		"0", "1", "7", "-3", "+4", "12345678", "0.5", ".5", "5.", "1.25e2", "1E-3", "2.5e+10",
		"9007199254740991", "9007199254740993", "123456789012345678901234567890", "0.1", "0.3",
		"1e22", "1e23", "1e-22", "1e-23", "3.4028234663852886e38", "1e400", "1e-400", "-0",
		"nan", "NaN", "inf", "-Inf", "infinity", "0x1p3", "1.2.3", "1e", "e5", "-", "", "1x", "--1", "1e+", "4.940656458412e-324",
	}
	for _, s := range cases {
		got, ok := parseFloat([]byte(s))
		want, err := strconv.ParseFloat(s, 64)
		wantOK := err == nil || errors.Is(err, strconv.ErrRange)
		if ok != wantOK {
			t.Errorf("parseFloat(%q) ok = %v, strconv err = %v", s, ok, err)
			continue
		}
		if ok && math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("parseFloat(%q) = %v, strconv %v", s, got, want)
		}
	}
}

type mtxEntry struct {
	r, c int32
	v    float64
}

// parseAll runs the fast parser over data.
func parseAll(data []byte, batch int) (mtxHeader, []mtxEntry, error) {
	p, err := newMTXParser("m.mtx", bufio.NewReaderSize(bytes.NewReader(data), 1<<16))
	if err != nil {
		return mtxHeader{}, nil, err
	}
	rows, cols, vals := make([]int32, batch), make([]int32, batch), make([]float64, batch)
	var out []mtxEntry
	for {
		n, err := p.next(rows, cols, vals)
		for k := range n {
			out = append(out, mtxEntry{rows[k], cols[k], vals[k]})
		}
		if err == io.EOF {
			return p.hdr, out, nil
		}
		if err != nil {
			return p.hdr, out, err
		}
	}
}

// parseReference is an independent, slow Matrix Market parser written
// from the format's rules with strings and strconv; the fuzz target checks
// that the fast parser agrees with it.
func parseReference(data []byte) (mtxHeader, []mtxEntry, error) {
	fail := errors.New("invalid")
	var h mtxHeader
	lines := strings.Split(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		if len(l) >= 1<<16 {
			return h, nil, fail
		}
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	if len(lines) == 0 {
		return h, nil, fail
	}
	f := strings.Fields(lines[0])
	if len(f) != 5 || !strings.EqualFold(f[0], "%%MatrixMarket") || !strings.EqualFold(f[1], "matrix") ||
		!strings.EqualFold(f[2], "coordinate") || !strings.EqualFold(f[4], "general") {
		return h, nil, fail
	}
	switch strings.ToLower(f[3]) {
	case "integer":
		h.field = fieldInteger
	case "real", "double":
		h.field = fieldReal
	case "pattern":
		h.field = fieldPattern
	default:
		return h, nil, fail
	}
	split := func(s string) []string {
		return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' })
	}
	num := func(s string) (int64, bool) {
		for _, c := range s {
			if c < '0' || c > '9' {
				return 0, false
			}
		}
		v, err := strconv.ParseUint(s, 10, 62)
		return int64(v), err == nil
	}
	i := 1
	for ; i < len(lines); i++ {
		t := strings.Trim(lines[i], " \t")
		if t == "" || t[0] == '%' {
			continue
		}
		tok := split(t)
		if len(tok) != 3 {
			return h, nil, fail
		}
		var ok [3]bool
		h.rows, ok[0] = num(tok[0])
		h.cols, ok[1] = num(tok[1])
		h.entries, ok[2] = num(tok[2])
		if !ok[0] || !ok[1] || !ok[2] || h.rows > math.MaxInt32 || h.cols > math.MaxInt32 {
			return h, nil, fail
		}
		h.sizeLine = int64(i + 1)
		break
	}
	if i == len(lines) {
		return h, nil, fail
	}
	var out []mtxEntry
	for _, l := range lines[i+1:] {
		tok := split(l)
		if len(tok) == 0 {
			continue
		}
		want := 3
		if h.field == fieldPattern {
			want = 2
		}
		if len(tok) != want {
			return h, nil, fail
		}
		r, ok1 := num(tok[0])
		c, ok2 := num(tok[1])
		if !ok1 || !ok2 || r < 1 || r > h.rows || c < 1 || c > h.cols {
			return h, nil, fail
		}
		v := 1.0
		if want == 3 {
			var err error
			v, err = strconv.ParseFloat(tok[2], 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return h, nil, fail
			}
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || (h.field == fieldInteger && v != math.Trunc(v)) {
			return h, nil, fail
		}
		out = append(out, mtxEntry{int32(r - 1), int32(c - 1), v})
	}
	if int64(len(out)) != h.entries {
		return h, nil, fail
	}
	return h, out, nil
}

// mtxSeeds are the fuzz seeds and the parser's table cases.
var mtxSeeds = []string{
	goodMTX,
	"%%MatrixMarket matrix coordinate real general\n%\n6 5 3\n4 3 6\n1 1 0.5\n6 5 1e3\n",
	"%%matrixmarket MATRIX Coordinate Integer GENERAL\r\n% comment\r\n\r\n2 2 2\r\n1 1 1\r\n2 2 4\r\n",
	"%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n3 3\n",
	"%%MatrixMarket matrix coordinate double general\n2 2 1\n\t2\t1\t 2.5 \n\n",
	"%%MatrixMarket matrix coordinate integer general\n%metadata_json: {\"format_version\": 2}\n5 5 1\n5 5 9",
	"%%MatrixMarket matrix coordinate integer general\n2 2 0\n",
	"%%MatrixMarket matrix coordinate integer general\n2 2 1\n3 1 1\n",
	"%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 1\n",
	"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1\n2 2 1\n",
	"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 -1\n",
	"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 nan\n",
	"%%MatrixMarket matrix coordinate integer symmetric\n2 2 1\n1 1 1\n",
	"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n",
	"%%MatrixMarket matrix coordinate integer general\n2 2 1\n% late comment\n1 1 1\n",
	"%%MatrixMarket matrix coordinate integer general\n99999999999999999999 2 1\n1 1 1\n",
	"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1e400\n",
	"not a matrix\n",
	"",
}

// TestMTXParser checks the fast parser against the reference on the seeds,
// with batch sizes that split the entries differently.
func TestMTXParser(t *testing.T) {
	t.Parallel()
	for _, s := range mtxSeeds {
		for _, batch := range []int{1, 2, 1024} {
			compareParsers(t, []byte(s), batch)
		}
	}
	// Spot checks of what the seeds mean.
	h, e, err := parseAll([]byte(mtxSeeds[3]), 8)
	if err != nil || h.field != fieldPattern || len(e) != 2 || e[1] != (mtxEntry{2, 2, 1}) {
		t.Errorf("pattern matrix: %+v %v %v", h, e, err)
	}
	h, e, err = parseAll([]byte(mtxSeeds[2]), 8)
	if err != nil || h.rows != 2 || len(e) != 2 || e[1] != (mtxEntry{1, 1, 4}) {
		t.Errorf("CRLF, case-insensitive banner: %+v %v %v", h, e, err)
	}
}

func compareParsers(t *testing.T, data []byte, batch int) {
	t.Helper()
	h, got, err := parseAll(data, batch)
	rh, want, rerr := parseReference(data)
	if (err == nil) != (rerr == nil) {
		t.Fatalf("input %q: fast parser error %v, reference error %v", data, err, rerr)
	}
	if err != nil {
		if !strings.HasPrefix(err.Error(), "ingest: m.mtx") {
			t.Fatalf("input %q: error %q does not name the file", data, err)
		}
		return
	}
	if h != rh {
		t.Fatalf("input %q: header %+v, reference %+v", data, h, rh)
	}
	if len(got) != len(want) {
		t.Fatalf("input %q: %d entries, reference %d", data, len(got), len(want))
	}
	for i := range got {
		if got[i].r != want[i].r || got[i].c != want[i].c || math.Float64bits(got[i].v) != math.Float64bits(want[i].v) {
			t.Fatalf("input %q: entry %d = %+v, reference %+v", data, i, got[i], want[i])
		}
	}
}

// FuzzMTX compares the fast Matrix Market parser with the reference parser
// on arbitrary input: both accept or both reject, and accepted files give
// the same header and entries.
func FuzzMTX(f *testing.F) {
	for _, s := range mtxSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareParsers(t, data, 3)
	})
}
