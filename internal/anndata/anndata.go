package anndata

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"scpipe/internal/infile"
	"scpipe/internal/outlock"
)

// Writer writes one .h5ad file: elements are added by path, and Commit
// makes the file appear under its name. A Writer is not safe for
// concurrent use.
type Writer struct {
	h         *h5file
	f         *os.File
	path, tmp string
	src       string // the file Append copies; "" for Create
	err       error  // the first error, which every later call returns
	// ctx stops the long work (a copy, a streamed matrix, the commit):
	// Ctrl-C leaves nothing installed.
	ctx context.Context
}

// Create starts an AnnData file that Commit writes to path: the data go to
// a temporary file beside it (".NAME.tmp-*", mode 0666 less the umask), renamed over path when
// complete. The caller decides whether path may be replaced. Once ctx is
// done, the Writer's calls fail with its error and Commit installs
// nothing.
func Create(ctx context.Context, path string) (*Writer, error) {
	f, err := outlock.TempFile(path, "tmp")
	if err != nil {
		return nil, fmt.Errorf("anndata: %w", err)
	}
	h, err := newH5File(f)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("anndata: %s: %w", path, err)
	}
	w := &Writer{h: h, f: f, path: path, tmp: f.Name(), ctx: ctx}
	w.attrs("/", "anndata", "0.1.0")
	return w, nil
}

// Append starts a copy of the AnnData file src with elements added: Commit
// writes it to path (beside which it is built, as by Create); src is only
// read. Everything of src is kept byte for byte; the groups that receive
// members (obsm, varm, uns, …) get a new index. Members of src may be
// replaced by removing them first (Remove). src must be an HDF5 file with
// 8-byte addresses whose groups are symbol tables (h5py's default, which
// anndata writes). ctx is Create's.
func Append(ctx context.Context, src, path string) (*Writer, error) {
	in, err := infile.Open(src)
	if err != nil {
		return nil, fmt.Errorf("anndata: %w", err)
	}
	defer in.Close()
	f, err := outlock.TempFile(path, "tmp")
	if err != nil {
		return nil, fmt.Errorf("anndata: %w", err)
	}
	w := &Writer{f: f, path: path, tmp: f.Name(), src: src, ctx: ctx}
	if _, err := io.Copy(f, ctxReader{ctx, in}); err != nil {
		w.Abort()
		return nil, fmt.Errorf("anndata: copying %s: %w", src, err)
	}
	if w.h, err = openAppend(f); err != nil {
		w.Abort()
		return nil, fmt.Errorf("anndata: %s: %w", src, err)
	}
	return w, nil
}

// Remove drops the element at path, of the file appended to or added
// before, if there is one: so that an element can be written anew (a
// second export into a file replaces the first one's).
func (w *Writer) Remove(path string) error {
	if w.err != nil {
		return w.err
	}
	return w.fail(path, w.h.remove(path))
}

// ctxReader is r that fails with ctx's error once ctx is done: a copy of
// a file of gigabytes stops on Ctrl-C.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// fail records the first error, naming the file (and the user's file it
// copies: what is wrong is usually there) and the element.
func (w *Writer) fail(elem string, err error) error {
	if err != nil && w.err == nil {
		name := w.path
		if w.src != "" {
			name += ", a copy of " + w.src
		}
		w.err = fmt.Errorf("anndata: %s: %s: %w", name, elem, err)
	}
	return w.err
}

// attrs sets an element's encoding-type and encoding-version.
func (w *Writer) attrs(path, typ, version string) error {
	if err := w.StringAttr(path, "encoding-type", typ); err != nil {
		return err
	}
	return w.StringAttr(path, "encoding-version", version)
}

// StringAttr sets a scalar string attribute of the element at path.
func (w *Writer) StringAttr(path, name, value string) error {
	if w.err != nil {
		return w.err
	}
	dt, data, err := stringBytes([]string{value})
	if err == nil {
		err = w.h.attr(path, name, dt, nil, data)
	}
	return w.fail(path+" attribute "+name, err)
}

// StringsAttr sets an attribute holding an array of strings (such as a
// dataframe's column-order, which may be empty).
func (w *Writer) StringsAttr(path, name string, values []string) error {
	if w.err != nil {
		return w.err
	}
	dt, data, err := stringBytes(values)
	if err == nil {
		err = w.h.attr(path, name, dt, []uint64{uint64(len(values))}, data)
	}
	return w.fail(path+" attribute "+name, err)
}

// Int64sAttr sets an attribute holding an array of integers (such as a
// sparse matrix's shape).
func (w *Writer) Int64sAttr(path, name string, values []int64) error {
	if w.err != nil {
		return w.err
	}
	return w.fail(path+" attribute "+name, w.h.attr(path, name, typeInt64, []uint64{uint64(len(values))}, int64Bytes(values)))
}

// Dict creates the group at path as a mapping (anndata's "dict": uns, obsm,
// varm, and any nested mapping in uns).
func (w *Writer) Dict(path string) error {
	if w.err != nil {
		return w.err
	}
	_, err := w.h.lookup(path, true)
	if w.fail(path, err) != nil {
		return w.err
	}
	return w.attrs(path, "dict", "0.1.0")
}

// Float64s writes a one-dimensional array.
func (w *Writer) Float64s(path string, v []float64) error {
	return w.array(path, typeFloat64, []uint64{uint64(len(v))}, float64Bytes(v))
}

// Int64s writes a one-dimensional integer array.
func (w *Writer) Int64s(path string, v []int64) error {
	return w.array(path, typeInt64, []uint64{uint64(len(v))}, int64Bytes(v))
}

// Matrix writes a dense rows × cols array given row-major (obsm and varm
// entries).
func (w *Writer) Matrix(path string, rows, cols int, v []float64) error {
	if len(v) != rows*cols {
		return w.fail(path, fmt.Errorf("%d values for a %d × %d matrix", len(v), rows, cols))
	}
	return w.array(path, typeFloat64, []uint64{uint64(rows), uint64(cols)}, float64Bytes(v))
}

func (w *Writer) array(path string, dt []byte, dims []uint64, data []byte) error {
	if w.err != nil {
		return w.err
	}
	if w.fail(path, w.h.dataset(path, dt, dims, data)) != nil {
		return w.err
	}
	return w.attrs(path, "array", "0.2.0")
}

// Strings writes an array of strings (anndata's "string-array").
func (w *Writer) Strings(path string, v []string) error {
	if w.err != nil {
		return w.err
	}
	data, err := w.h.vlenStrings(v)
	if err == nil {
		err = w.h.dataset(path, typeVLenString, []uint64{uint64(len(v))}, data)
	}
	if w.fail(path, err) != nil {
		return w.err
	}
	return w.attrs(path, "string-array", "0.2.0")
}

// String writes one string (anndata's "string" scalar).
func (w *Writer) String(path, s string) error {
	if w.err != nil {
		return w.err
	}
	data, err := w.h.vlenStrings([]string{s})
	if err == nil {
		err = w.h.dataset(path, typeVLenString, nil, data)
	}
	if w.fail(path, err) != nil {
		return w.err
	}
	return w.attrs(path, "string", "0.2.0")
}

// Int64 writes one integer (anndata's "numeric-scalar").
func (w *Writer) Int64(path string, v int64) error {
	return w.scalar(path, typeInt64, int64Bytes([]int64{v}))
}

// Float64 writes one number (anndata's "numeric-scalar").
func (w *Writer) Float64(path string, v float64) error {
	return w.scalar(path, typeFloat64, float64Bytes([]float64{v}))
}

func (w *Writer) scalar(path string, dt, data []byte) error {
	if w.err != nil {
		return w.err
	}
	if w.fail(path, w.h.dataset(path, dt, nil, data)) != nil {
		return w.err
	}
	return w.attrs(path, "numeric-scalar", "0.2.0")
}

// Column is one column of a dataframe: exactly one of its slices is set.
type Column struct {
	Name    string
	Float64 []float64
	Int64   []int64
	Strings []string
}

// Dataframe writes a dataframe (obs, var) at path: its index (obs_names,
// var_names) and columns, in order.
func (w *Writer) Dataframe(path string, index []string, cols ...Column) error {
	if w.err != nil {
		return w.err
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
		if c.Name == "_index" {
			return w.fail(path, errors.New(`a column named "_index"`))
		}
		p := path + "/" + c.Name
		switch {
		case c.Float64 != nil && len(c.Float64) == len(index):
			w.Float64s(p, c.Float64)
		case c.Int64 != nil && len(c.Int64) == len(index):
			w.Int64s(p, c.Int64)
		case c.Strings != nil && len(c.Strings) == len(index):
			w.Strings(p, c.Strings)
		default:
			return w.fail(p, fmt.Errorf("not one array of %d values", len(index)))
		}
	}
	w.Strings(path+"/_index", index)
	w.attrs(path, "dataframe", "0.2.0")
	w.StringAttr(path, "_index", "_index")
	return w.StringsAttr(path, "column-order", names)
}

// CSR writes a rows × cols sparse matrix in compressed sparse rows (X):
// row i holds columns indices[indptr[i]:indptr[i+1]], ascending, with
// values data[...].
func (w *Writer) CSR(path string, rows, cols int, indptr []int64, indices []int32, data []float32) error {
	if len(indptr) != rows+1 || indptr[0] != 0 || indptr[rows] != int64(len(indices)) || len(indices) != len(data) {
		return w.fail(path, fmt.Errorf("inconsistent CSR arrays (%d pointers for %d rows, %d indices, %d values)", len(indptr), rows, len(indices), len(data)))
	}
	return w.csr(path, rows, cols, func(i int, buf []int32) ([]int32, []float32) {
		lo, hi := indptr[i], indptr[i+1]
		return indices[lo:hi], data[lo:hi]
	})
}

// BinaryCSR writes a rows × cols matrix of ones in compressed sparse rows,
// row i's columns (ascending) given by row, which may append them to buf
// and return it. The rows are streamed to the file: memory holds one row
// and the row pointers, whatever the matrix's size.
func (w *Writer) BinaryCSR(path string, rows, cols int, row func(i int, buf []int32) []int32) error {
	return w.csr(path, rows, cols, func(i int, buf []int32) ([]int32, []float32) { return row(i, buf), nil })
}

// csr writes the three arrays of a CSR matrix; row returns a row's column
// indices and values (nil: ones).
func (w *Writer) csr(path string, rows, cols int, row func(i int, buf []int32) ([]int32, []float32)) error {
	if w.err != nil {
		return w.err
	}
	indptr := make([]int64, 1, rows+1)
	var buf []int32
	var values []float32 // the values of a matrix not all ones, written after the indices
	err := w.h.streamDataset(path+"/indices", typeInt32, func(bw *bufio.Writer) ([]uint64, error) {
		var b [4]byte
		for i := range rows {
			if i%4096 == 0 {
				if err := w.ctx.Err(); err != nil {
					return nil, err
				}
			}
			idx, vals := row(i, buf[:0])
			if vals != nil {
				values = append(values, vals...)
			}
			for j, c := range idx {
				if c < 0 || int(c) >= cols || j > 0 && c <= idx[j-1] {
					return nil, fmt.Errorf("row %d: column indices not ascending in 0..%d", i, cols-1)
				}
				binary.LittleEndian.PutUint32(b[:], uint32(c))
				bw.Write(b[:])
			}
			indptr = append(indptr, indptr[i]+int64(len(idx)))
			buf = idx
		}
		return []uint64{uint64(indptr[rows])}, nil
	})
	if w.fail(path+"/indices", err) != nil {
		return w.err
	}
	nnz := indptr[rows]
	err = w.h.streamDataset(path+"/data", typeFloat32, func(bw *bufio.Writer) ([]uint64, error) {
		var b [4]byte
		for k := range nnz {
			v := float32(1)
			if values != nil {
				v = values[k]
			}
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
			bw.Write(b[:])
		}
		return []uint64{uint64(nnz)}, nil
	})
	if w.fail(path+"/data", err) != nil {
		return w.err
	}
	if w.fail(path+"/indptr", w.h.dataset(path+"/indptr", typeInt64, []uint64{uint64(len(indptr))}, int64Bytes(indptr))) != nil {
		return w.err
	}
	w.attrs(path, "csr_matrix", "0.1.0")
	return w.Int64sAttr(path, "shape", []int64{int64(rows), int64(cols)})
}

// Commit writes the file's structure, syncs it and renames it into place,
// unless the Writer's context is done by then. After an error the
// temporary file is removed.
func (w *Writer) Commit() error {
	if w.err == nil {
		w.fail("commit", w.ctx.Err())
	}
	if w.err != nil {
		w.Abort()
		return w.err
	}
	err := w.h.commit()
	if err == nil {
		err = w.f.Sync()
	}
	if err == nil {
		err = w.ctx.Err() // the sync of a large file takes seconds
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	if err == nil {
		err = outlock.Install(w.tmp, w.path, true)
	}
	if err != nil {
		os.Remove(w.tmp)
		return fmt.Errorf("anndata: %s: %w", w.path, err)
	}
	return nil
}

// Abort discards the file; it is safe after Commit.
func (w *Writer) Abort() {
	if w.f != nil {
		w.f.Close()
		w.f = nil
		os.Remove(w.tmp)
	}
}
