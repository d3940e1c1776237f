// Package infile opens the files a command reads, refusing at once, and
// naming it, a path that is not a regular file.
//
// Opening a named pipe blocks in open(2) until a writer comes, out of
// reach of a context, so a FIFO given as a configuration, a gene-set
// library or a table of a run made the command wait for ever, deaf to
// Ctrl-C; a character device (/dev/zero, /dev/stdin, or a symbolic link
// to one in place of a run's file) never ends or reads as a file of
// zeros. Every input is read as a file (in full, more than once, or
// mapped), so a stream has no meaning there and is refused before it is
// opened:
//
//	f, err := infile.Open(path) // "gmt: lib.gmt is a named pipe, not a regular file"
package infile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// errNotRegular is wrapped by every refusal of a path that is not a
// regular file (or, for Dir, not a folder).
var errNotRegular = errors.New("not a regular file")

// Open opens path for reading, symbolic links followed, when it is a
// regular file, and refuses anything else, naming path and what it is.
func Open(path string) (*os.File, error) {
	if err := Check(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	// The path may have been replaced between the two looks; a pipe put
	// there in between would already have blocked the open, but a device
	// would not.
	fi, err := f.Stat()
	if err == nil {
		err = Regular(path, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Check returns nil when path, symbolic links followed, is a regular
// file, and otherwise what Open would: os.Stat's error, or one naming path
// and what it is. For a path that another package opens.
func Check(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return Regular(path, fi)
}

// ReadFile reads the regular file path whole, as os.ReadFile does, and
// refuses anything else as Open does.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Regular returns nil when fi, path's information with symbolic links
// followed, describes a regular file, and otherwise an error naming path
// and what it is.
func Regular(path string, fi fs.FileInfo) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("%s is %s, %w", path, Kind(fi.Mode()), errNotRegular)
}

// Dir returns nil when path, symbolic links followed, is a folder, and
// otherwise an error naming path and what it is: a command that reads a
// folder's files by name would otherwise report "not a directory" against
// a file inside a pipe.
func Dir(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return nil
	}
	return fmt.Errorf("%s is %s, not a folder", path, Kind(fi.Mode()))
}

// bom is the UTF-8 encoding of U+FEFF, the byte-order mark.
var bom = []byte{0xef, 0xbb, 0xbf}

// SkipBOM drops a UTF-8 byte-order mark at the head of a text input read
// through br: editors and spreadsheets on Windows write one, and it stuck
// to the first name read (a background's first gene never matched, a GMT's
// first term was written with it into every table).
func SkipBOM(br *bufio.Reader) {
	if head, err := br.Peek(len(bom)); err == nil && bytes.Equal(head, bom) {
		br.Discard(len(bom))
	}
}

// Kind names the type of a file mode, with its article ("a named pipe"),
// for messages that refuse a path.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsRegular():
		return "a regular file"
	}
	return "not a file (" + m.Type().String() + ")"
}
