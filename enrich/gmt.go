package enrich

import (
	"io"

	"scpipe/internal/geneset"
)

// GeneSet is one line of a GMT library (geneset.GeneSet).
type GeneSet = geneset.GeneSet

// Library is a parsed GMT file (geneset.Library).
type Library = geneset.Library

// ReadGMTFile reads the GMT library at path, gzip-compressed or not
// (geneset.ReadGMTFile).
func ReadGMTFile(path string) (*Library, error) { return geneset.ReadGMTFile(path) }

// ReadGMT parses a GMT library from r; path names it in errors
// (geneset.ReadGMT).
func ReadGMT(r io.Reader, path string) (*Library, error) { return geneset.ReadGMT(r, path) }

// WriteGMT writes sets as GMT lines (geneset.WriteGMT).
func WriteGMT(w io.Writer, sets []GeneSet) error { return geneset.WriteGMT(w, sets) }

// foldSymbol is the key under which symbols are compared (geneset.Fold).
func foldSymbol(s string) string { return geneset.Fold(s) }
