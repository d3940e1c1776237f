package shard

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Fingerprint identifies the content of a shard folder: the SHA-256 (as 64
// lowercase hex digits) of its shape and of every file's name, size and
// CRC-32C. Manifest fields that do not change the data (the creation time,
// the tool, the source's path) do not enter it, so shards written again
// from the same input with the same filters and layout have the same
// fingerprint; any change to a bit, a gene or a barcode changes it. It
// trusts the manifest: Verify checks that the files match their CRCs.
func (m *Manifest) Fingerprint() string {
	h := sha256.New()
	l := m.Layout
	fmt.Fprintf(h, "scpipe shards %d\n%d %d %d %d %v\n", m.FormatVersion, m.Cells, m.Genes, l.RowsPerBlock, l.GenesPerTile, l.Masked)
	for _, f := range m.Files {
		fmt.Fprintf(h, "%s %d %s\n", f.Name, f.Bytes, f.CRC32C)
	}
	return hex.EncodeToString(h.Sum(nil))
}
