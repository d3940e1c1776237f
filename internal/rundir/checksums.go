package rundir

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
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"scpipe/internal/infile"
)

// checksumsFile is the manifest, in each folder that holds Parquet tables
// of a run (a fit folder, a layer folder), of the tables' SHA-256 sums, in
// the format of sha256sum (one line per file, "<64 hex digits>  <name>",
// sorted by name), so that `sha256sum -c SHA256SUMS` checks a fit by hand.
//
// A table's line is written before the table is renamed into place, so
// every table under its final name has its line; readers verify a table
// against it before decoding, and a table without its line in a folder
// that has the manifest is damaged. Runs written before the manifest existed have
// none: their tables are read unverified.
const checksumsFile = "SHA256SUMS"

// errDamaged marks a table whose bytes are not the ones written: its
// SHA-256 differs from the folder's checksumsFile, the manifest does not
// parse or lacks its line, or the Parquet decoder panicked on it. (A
// damaged checkpoint wraps errDamaged or errTruncated instead.)
var errDamaged = errors.New("damaged")

// sumsMu serialises this process's updates of checksumsFile: the tables
// of one folder may be written by goroutines at once, and other processes
// never write the same folder (they hold the fit's lock).
var sumsMu sync.Mutex

// readChecksums reads the checksumsFile of dir: name → hex digest. It
// returns nil and no error when the folder has none.
func readChecksums(dir string) (map[string]string, error) {
	path := filepath.Join(dir, checksumsFile)
	data, err := infile.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rundir: %w", err) // it names path
	}
	sums := map[string]string{}
	for i, line := range strings.SplitAfter(string(data), "\n") {
		if line == "" {
			continue
		}
		digest, name, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "  ")
		if !ok || !strings.HasSuffix(line, "\n") || len(digest) != 2*sha256.Size || !isLowerHex(digest) ||
			name == "" || strings.ContainsAny(name, "/\\") {
			return nil, fmt.Errorf("rundir: %s line %d: %w: want \"<64 hex digits>  <name>\"", path, i+1, errDamaged)
		}
		if _, dup := sums[name]; dup {
			return nil, fmt.Errorf("rundir: %s line %d: %w: %s listed twice", path, i+1, errDamaged, name)
		}
		sums[name] = digest
	}
	return sums, nil
}

func isLowerHex(s string) bool {
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// recordChecksum sets the line of name in the checksumsFile of dir to
// digest, atomically.
func recordChecksum(dir, name string, digest []byte) error {
	sumsMu.Lock()
	defer sumsMu.Unlock()
	sums, err := readChecksums(dir)
	if err != nil {
		return err
	}
	if sums == nil {
		sums = map[string]string{}
	}
	sums[name] = hex.EncodeToString(digest)
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	slices.Sort(names)
	var b bytes.Buffer
	for _, n := range names {
		fmt.Fprintf(&b, "%s  %s\n", sums[n], n)
	}
	return WriteFileAtomic(filepath.Join(dir, checksumsFile), func(w io.Writer) error {
		_, err := w.Write(b.Bytes())
		return err
	})
}

// verifyTable checks the file at path against the checksumsFile of its
// folder. It returns nil when they agree, or when the folder has no
// manifest (a run of an older version); an error wrapping errDamaged
// names the file when the sums differ or the manifest has no line for it.
func verifyTable(path string) error {
	dir, name := filepath.Split(path)
	sums, err := readChecksums(filepath.Clean(dir))
	if err != nil || sums == nil {
		return err
	}
	want, ok := sums[name]
	if !ok {
		return fmt.Errorf("rundir: %s: %w: %s in its folder has no line for it", path, errDamaged, checksumsFile)
	}
	f, err := infile.Open(path)
	if err != nil {
		return fmt.Errorf("rundir: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, bufio.NewReaderSize(f, 1<<20)); err != nil {
		return fmt.Errorf("rundir: %s: %w", path, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("rundir: %s: %w: its SHA-256 is %s, %s records %s (the file changed after it was written; if on purpose, replace its line in %[4]s with what `sha256sum %[5]s` prints in its folder)",
			path, errDamaged, got, checksumsFile, want, filepath.Base(path))
	}
	return nil
}

// WriteChecksummed is WriteFileAtomic that also records the file's SHA-256
// in the checksumsFile of its folder before the file takes its name, as
// the tables' writers do; ReadChecksummed reads it back verified. For a
// fit's files other than its tables, such as its retained samples.
func WriteChecksummed(path string, write func(w io.Writer) error) error {
	sum := sha256.New()
	return writeFileAtomic(path, func(w io.Writer) error {
		return write(hashingWriter{w, sum})
	}, func() error { return recordChecksum(filepath.Dir(path), filepath.Base(path), sum.Sum(nil)) })
}

// ReadChecksummed reads the file at path and checks it against the
// checksumsFile of its folder, as verifyTable does (no manifest: the
// file of an older run, read unverified).
func ReadChecksummed(path string) ([]byte, error) {
	data, err := infile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dir, name := filepath.Split(path)
	sums, err := readChecksums(filepath.Clean(dir))
	if err != nil || sums == nil {
		return data, err
	}
	want, ok := sums[name]
	if !ok {
		return nil, fmt.Errorf("rundir: %s: %w: %s in its folder has no line for it", path, errDamaged, checksumsFile)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != want {
		return nil, fmt.Errorf("rundir: %s: %w: its SHA-256 is %s, %s records %s (the file changed after it was written; if on purpose, replace its line in %[4]s with what `sha256sum %[5]s` prints in its folder)",
			path, errDamaged, hex.EncodeToString(sum[:]), checksumsFile, want, filepath.Base(path))
	}
	return data, nil
}

// hashingWriter passes writes on to w and into h.
type hashingWriter struct {
	w io.Writer
	h hash.Hash
}

func (hw hashingWriter) Write(p []byte) (int, error) {
	hw.h.Write(p)
	return hw.w.Write(p)
}
