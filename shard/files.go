package shard

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strings"
	"unsafe"

	"github.com/edsrzf/mmap-go"

	"scpipe/internal/directio"
	"scpipe/internal/infile"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crcHex formats a CRC-32C as the manifest stores it.
func crcHex(c uint32) string { return fmt.Sprintf("%08x", c) }

// littleEndian reports whether the host stores uint64 little-endian, which
// the format requires for mapping files directly as []uint64.
func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// words reinterprets a mapping as uint64 words. The mapping's length is a
// multiple of 8 and mmap returns page-aligned memory.
func words(m mmap.MMap) []uint64 {
	if len(m) == 0 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&m[0])), len(m)/8)
}

// wordBytes is the inverse of words: the bytes of w, in the file format's
// (little-endian) order.
func wordBytes(w []uint64) []byte {
	if len(w) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), 8*len(w))
}

// mapFile maps size bytes of path. With write, the file is created (it must
// not exist) at exactly size bytes and mapped read-write; otherwise it is
// mapped read-only. The file descriptor is closed before returning: the
// mapping keeps the file alive.
func mapFile(path string, size int64, write bool) (mmap.MMap, error) {
	if size == 0 {
		return nil, fmt.Errorf("shard: %s: cannot map an empty file", path)
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("shard: %s: %d bytes exceed the address space", path, size)
	}
	var f *os.File
	var err error
	prot := mmap.RDONLY
	if write {
		prot = mmap.RDWR
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			if err = f.Truncate(size); err == nil {
				err = allocate(f, size)
			}
		}
	} else {
		f, err = infile.Open(path)
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		return nil, fmt.Errorf("shard: %w", err)
	}
	m, err := mmap.MapRegion(f, int(size), prot, 0, 0)
	cerr := f.Close()
	if err != nil {
		return nil, fmt.Errorf("shard: %s: mmap: %w", path, err)
	}
	if cerr != nil {
		m.Unmap()
		return nil, fmt.Errorf("shard: %w", cerr)
	}
	return m, nil
}

// writeStarted writes data to path, created (it must not exist) when
// create is set and opened as it is otherwise (data may then be empty), and
// starts writing the file back to disk (see startWriteback). It reports
// whether the file still needs an fsync to be durable. A created file is
// written directly (see directio.WriteNew) when direct is set.
func writeStarted(path string, data []byte, create, direct bool) (unsynced bool, err error) {
	flag := os.O_WRONLY
	if create {
		flag |= os.O_CREATE | os.O_EXCL
	}
	f, err := os.OpenFile(path, flag, 0o666)
	if err != nil {
		return false, fmt.Errorf("shard: %w", err)
	}
	if create && direct {
		err = directio.WriteNew(f, data)
	} else {
		_, err = f.Write(data)
	}
	if err == nil {
		// A direct write still leaves the file's size and extents, and
		// any tail, to be made durable.
		unsynced, err = startWriteback(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, fmt.Errorf("shard: %s: %w", path, err)
	}
	return unsynced, nil
}

// encodeTSV renders rows of columns as tab-separated lines. Each column is
// either empty (omitted) or has exactly n entries; every field must pass
// CheckName (no tab or line break among them).
func encodeTSV(name string, n int, cols ...[]string) ([]byte, error) {
	var buf bytes.Buffer
	for i := 0; i < n; i++ {
		for j, c := range cols {
			if err := CheckName(c[i]); err != nil {
				return nil, fmt.Errorf("shard: %s: line %d column %d: name %s %w", name, i+1, j+1, Quote(c[i]), err)
			}
			if j > 0 {
				buf.WriteByte('\t')
			}
			buf.WriteString(c[i])
		}
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// decodeTSV parses exactly n lines of exactly ncol tab-separated fields.
func decodeTSV(path string, r io.Reader, n, ncol int) ([][]string, error) {
	cols := make([][]string, ncol)
	for j := range cols {
		cols[j] = make([]string, 0, n)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		if line > n {
			return nil, fmt.Errorf("%w: %s: more than %d lines", errFormat, path, n)
		}
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != ncol {
			return nil, fmt.Errorf("%w: %s: line %d: %d fields, want %d", errFormat, path, line, len(fields), ncol)
		}
		for j, f := range fields {
			cols[j] = append(cols[j], f)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("shard: %s: line %d: %w", path, line+1, err)
	}
	if line != n {
		return nil, fmt.Errorf("%w: %s: %d lines, want %d", errFormat, path, line, n)
	}
	return cols, nil
}

// writeZeros writes size zero bytes over f from its start, so that the
// file system allocates every block of it now.
func writeZeros(f *os.File, size int64) error {
	zeros := make([]byte, min(size, 1<<20))
	for off := int64(0); off < size; off += int64(len(zeros)) {
		n := min(int64(len(zeros)), size-off)
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			return err
		}
	}
	return nil
}
