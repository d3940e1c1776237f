package shard

import (
	"fmt"
	"unicode/utf8"
)

// MaxNameBytes is the longest name (barcode, gene id, symbol, feature
// type) a shard folder holds, in bytes. Real names are tens of bytes; a
// longer one is a damaged or misread input, and every reader downstream
// (the shard reader's lines, AnnData's strings, a table's cells) pays for
// it. ingest refuses one, naming the input and the line; the writer
// refuses one too, so that no shard folder holds a name its reader
// cannot read back.
const MaxNameBytes = 4096

// CheckName says what keeps s from being a name in a shard folder, or
// returns nil: at most MaxNameBytes bytes of valid UTF-8 without control
// characters (C0, DEL, C1: a tab or line break would split the names'
// lines, a NUL ends a C string, an escape or form feed breaks XML and
// terminals) or the bidirectional controls that reorder the text shown
// around them (an override turns "S100A9 (0.61)" into "(16.0) 9A001S").
// Readers such as anndata fail on invalid UTF-8.
func CheckName(s string) error {
	if len(s) > MaxNameBytes {
		return fmt.Errorf("%d bytes long: names are at most %d bytes", len(s), MaxNameBytes)
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			return fmt.Errorf("not valid UTF-8 (byte 0x%02X at byte %d)", s[i], i+1)
		case r < 0x20 || r >= 0x7f && r < 0xa0:
			return fmt.Errorf("holds the control character %U at byte %d", r, i+1)
		case isBidiControl(r):
			return fmt.Errorf("holds the bidirectional control %U at byte %d, which reorders the text shown around it", r, i+1)
		}
		i += n
	}
	return nil
}

// isBidiControl reports the explicit directional formatting characters
// (embeddings, overrides, isolates) and the implicit marks.
func isBidiControl(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// Quote renders a name for a message: quoted and escaped as Go does, and
// cut to its first 64 bytes (with its length) when longer.
func Quote(s string) string {
	if len(s) <= 64 {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:64], len(s))
}
