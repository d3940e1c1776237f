package ingest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"

	"scpipe/internal/infile"
)

// gzipMagic starts every gzip stream (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// textFile is a text input opened for one sequential read: the raw bytes are
// optionally hashed, gunzipped when they start with the gzip magic (whatever
// the file name says), and read ahead by a goroutine so that decompression
// and parsing use two cores.
type textFile struct {
	path string
	f    *os.File
	h    hash.Hash // nil unless hashing
	gz   *gzip.Reader
	ra   *readAhead
	*bufio.Reader
}

// openText opens path for reading; with hashing, sum returns the SHA-256 of
// the raw file once it has been read to the end.
func openText(path string, hashing bool, bufSize int) (*textFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	t := &textFile{path: path, f: f}
	var raw io.Reader = f
	if hashing {
		t.h = sha256.New()
		raw = io.TeeReader(f, t.h)
	}
	br := bufio.NewReaderSize(raw, 64<<10)
	magic, _ := br.Peek(2)
	var src io.Reader = br
	if bytes.Equal(magic, gzipMagic) {
		t.gz, err = gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("ingest: %s: bad gzip header: %w", path, err)
		}
		src = t.gz
	}
	t.ra = newReadAhead(src, 1<<20, 4)
	t.Reader = bufio.NewReaderSize(&errNamer{r: t.ra, path: path, gz: t.gz != nil}, bufSize)
	infile.SkipBOM(t.Reader) // a barcodes.tsv saved from a spreadsheet
	return t, nil
}

// gzipped reports whether the file is gzip-compressed.
func (t *textFile) gzipped() bool { return t.gz != nil }

// sum returns the hex SHA-256 of the raw bytes read so far; callers use it
// after reading to EOF. The rest of the file is hashed first, so that it is
// the whole file's hash even if the decompressor stopped before the end.
func (t *textFile) sum() (string, error) {
	if t.h == nil {
		return "", errors.New("ingest: internal: file not hashed")
	}
	if _, err := io.Copy(t.h, t.f); err != nil {
		return "", fmt.Errorf("ingest: %s: %w", t.path, err)
	}
	return hex.EncodeToString(t.h.Sum(nil)), nil
}

func (t *textFile) Close() error {
	t.ra.close()
	return t.f.Close()
}

// errNamer turns read errors into errors naming the file and, for gzip, the
// likely cause.
type errNamer struct {
	r    io.Reader
	path string
	gz   bool
}

func (e *errNamer) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		if e.gz {
			err = fmt.Errorf("ingest: %s: truncated or corrupt gzip stream: %w", e.path, err)
		} else {
			err = fmt.Errorf("ingest: %s: %w", e.path, err)
		}
	}
	return n, err
}

// readAhead reads src in a goroutine into a ring of buffers, so that the
// reader's work (decompression) overlaps with the consumer's (parsing).
type readAhead struct {
	full  chan chunk
	empty chan []byte
	done  chan struct{}
	cur   chunk
	off   int
	err   error
}

type chunk struct {
	buf []byte
	err error
}

func newReadAhead(src io.Reader, size, n int) *readAhead {
	r := &readAhead{
		full:  make(chan chunk, n),
		empty: make(chan []byte, n),
		done:  make(chan struct{}),
	}
	for range n {
		r.empty <- make([]byte, size)
	}
	go func() {
		defer close(r.full)
		for {
			var buf []byte
			select {
			case buf = <-r.empty:
			case <-r.done:
				return
			}
			n, err := fill(src, buf)
			select {
			case r.full <- chunk{buf[:n], err}:
			case <-r.done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return r
}

func (r *readAhead) Read(p []byte) (int, error) {
	for r.off == len(r.cur.buf) {
		if r.err != nil {
			return 0, r.err
		}
		if r.cur.buf != nil {
			r.empty <- r.cur.buf[:cap(r.cur.buf)]
			r.cur.buf = nil
		}
		c, ok := <-r.full
		if !ok {
			return 0, io.EOF
		}
		r.cur, r.off, r.err = c, 0, c.err
		if len(c.buf) == 0 {
			r.cur.buf = nil
			if r.err == nil {
				r.err = io.EOF
			}
			return 0, r.err
		}
	}
	n := copy(p, r.cur.buf[r.off:])
	r.off += n
	return n, nil
}

// fill reads into buf until it is full or src fails; it returns io.EOF only
// with n == 0, and any other error as src reported it.
func fill(src io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := src.Read(buf[n:])
		n += m
		if err == io.EOF && n > 0 {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// close stops the goroutine; the reader must not be used afterwards.
func (r *readAhead) close() {
	select {
	case <-r.done:
	default:
		close(r.done)
	}
	for range r.full { // drain so the goroutine can exit
	}
}
