package ingest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"scpipe/shard"
)

// mtxSource is a Matrix Market file with its gene and barcode side files.
// 10x writes genes × cells (rows are genes); Transpose reads cells × genes.
type mtxSource struct {
	path      string // the matrix file
	hdr       mtxHeader
	transpose bool
	feat      features
	bcs       []string
	bcsPath   string // the barcodes file, "" when the names are generated
	genesPath string // the genes file, likewise
	sum       string // SHA-256, filled by the first complete scan
	size      int64
}

// openMTXSource reads the header of matrixPath and its side files. An empty
// genesPath or barcodesPath gives generated names ("1", "2", …).
func openMTXSource(matrixPath, genesPath, barcodesPath string, transpose bool) (*mtxSource, error) {
	t, err := openText(matrixPath, false, 64<<10)
	if err != nil {
		return nil, err
	}
	p, err := newMTXParser(matrixPath, t.Reader)
	t.Close()
	if err != nil {
		return nil, err
	}
	s := &mtxSource{path: matrixPath, hdr: p.hdr, transpose: transpose}
	if s.size, err = fileSize(matrixPath); err != nil {
		return nil, err
	}
	cells, genes := s.shape()
	// The side files bound the shape by what they hold (readTSV stops at
	// the line past it); names generated for a side file that is missing
	// are bounded by the matrix file's size, so that a size line cannot
	// make us allocate what the input cannot justify.
	for _, d := range []struct {
		n          int
		file, what string
		flag       string
	}{{genes, genesPath, "genes", "--genes"}, {cells, barcodesPath, "cells", "--barcodes"}} {
		if limit := maxGeneratedNames(s.size); d.file == "" && d.n > limit {
			return nil, fmt.Errorf("ingest: %s line %d: the size line declares %d %s and no file names them (give %s): at most %d without one for a matrix file of %d bytes",
				matrixPath, p.hdr.sizeLine, d.n, d.what, d.flag, limit, s.size)
		}
	}
	if genesPath != "" {
		cols, err := readTSV(genesPath, genes)
		if err != nil {
			return nil, err
		}
		s.feat.IDs, s.genesPath = cols[0], genesPath
		if len(cols) > 1 {
			s.feat.Names = cols[1]
		}
		if len(cols) > 2 {
			s.feat.Types = cols[2]
		}
		sz, _ := fileSize(genesPath)
		s.size += sz
	} else {
		s.feat.IDs = numbered(genes)
	}
	if barcodesPath != "" {
		cols, err := readTSV(barcodesPath, cells)
		if err != nil {
			return nil, err
		}
		s.bcs, s.bcsPath = cols[0], barcodesPath
		sz, _ := fileSize(barcodesPath)
		s.size += sz
	} else {
		s.bcs = numbered(cells)
	}
	return s, nil
}

func (s *mtxSource) shape() (cells, genes int) {
	if s.transpose {
		return int(s.hdr.rows), int(s.hdr.cols)
	}
	return int(s.hdr.cols), int(s.hdr.rows)
}

func (s *mtxSource) entries() int64     { return s.hdr.entries }
func (s *mtxSource) features() features { return s.feat }
func (s *mtxSource) barcodes() []string { return s.bcs }
func (s *mtxSource) describe() sourceInfo {
	return sourceInfo{format: FormatMTX, matrix: s.path, barcodes: s.bcsPath, genes: s.genesPath}
}
func (s *mtxSource) bytes() int64 { return s.size }
func (s *mtxSource) close() error { return nil }

// startHash does nothing: scan hashes the text as it reads it.
func (s *mtxSource) startHash() {}

func (s *mtxSource) sha256() (string, error) {
	if s.sum == "" {
		return "", fmt.Errorf("ingest: internal: %s not hashed (no complete scan)", s.path)
	}
	return s.sum, nil
}

func (s *mtxSource) scan(ctx context.Context, fn func(*batch) error) error {
	hashing := s.sum == ""
	t, err := openText(s.path, hashing, 1<<20)
	if err != nil {
		return err
	}
	defer t.Close()
	p, err := newMTXParser(s.path, t.Reader)
	if err != nil {
		return err
	}
	if p.hdr != s.hdr {
		return fmt.Errorf("ingest: %s: header changed while reading (file modified?)", s.path)
	}
	b := newBatch()
	rows, cols := b.gene[:cap(b.gene)], b.cell[:cap(b.cell)]
	if s.transpose {
		rows, cols = cols, rows
	}
	vals := b.val[:cap(b.val)]
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := p.next(rows, cols, vals)
		if err != nil && err != io.EOF {
			return err
		}
		if n > 0 {
			b.cell, b.gene, b.val = b.cell[:n], b.gene[:n], b.val[:n]
			if ferr := fn(b); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			break
		}
	}
	if hashing {
		if s.sum, err = t.sum(); err != nil {
			return err
		}
	}
	return nil
}

// readTSV reads a tab-separated side file (plain or gzip) that must have
// exactly n lines; it returns its columns (as many as the first line has, at
// most three). Lines with fewer fields repeat the first field, as 10x
// readers do for genes.tsv without symbols.
func readTSV(path string, n int) ([][]string, error) {
	t, err := openText(path, false, 64<<10)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	var cols [][]string
	line := 0
	for {
		b, err := t.ReadSlice('\n')
		if err != nil && err != io.EOF {
			if err == bufio.ErrBufferFull {
				return nil, fmt.Errorf("ingest: %s line %d: line too long (over 64 KiB; names are at most %d bytes)", path, line+1, shard.MaxNameBytes)
			}
			return nil, err
		}
		if len(b) == 0 && err == io.EOF {
			break
		}
		line++
		b = bytes.TrimRight(b, "\r\n")
		if len(b) == 0 && err == io.EOF {
			break
		}
		f := bytes.SplitN(b, []byte{'\t'}, 4)
		if cols == nil {
			// n comes from the matrix's size line: reserve no more than a
			// short file needs, and grow with what the file holds.
			cols = make([][]string, min(len(f), 3))
			for i := range cols {
				cols[i] = make([]string, 0, min(n, 1<<16))
			}
		}
		if len(f[0]) == 0 {
			return nil, fmt.Errorf("ingest: %s line %d: empty first field", path, line)
		}
		for i := range cols {
			v := f[0]
			if i < len(f) {
				v = f[i]
			}
			cols[i] = append(cols[i], string(v))
		}
		if len(cols[0]) > n {
			return nil, fmt.Errorf("ingest: %s: more than %d lines, the matrix's dimension", path, n)
		}
		if err == io.EOF {
			break
		}
	}
	if cols == nil || len(cols[0]) != n {
		got := 0
		if cols != nil {
			got = len(cols[0])
		}
		return nil, fmt.Errorf("ingest: %s: %d lines, want %d (the matrix's dimension; wrong file or --transpose?)", path, got, n)
	}
	return cols, nil
}

// maxGeneratedNames is the most cells or genes a Matrix Market file of
// size bytes may declare without a side file to name them: 16 a byte,
// and a million more, far beyond the empty rows real matrices have.
func maxGeneratedNames(size int64) int {
	return int(min(16*size+1<<20, maxDimMTX))
}

// numbered returns "1", "2", …, "n": names for a matrix without side files.
func numbered(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprint(i + 1)
	}
	return s
}

func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("ingest: %w", err)
	}
	return fi.Size(), nil
}
