package h5

import (
	"encoding/binary"

	"scpipe/internal/lookup3"
)

// checksummed reports whether the last four bytes of b are the lookup3
// checksum of the others. A meta that skips checksums (the fuzz targets,
// so that mutated inputs reach the parsers behind them) accepts any.
func (m *meta) checksummed(b []byte) bool {
	if m.skipChecksums {
		return len(b) >= 4
	}
	return len(b) >= 4 && binary.LittleEndian.Uint32(b[len(b)-4:]) == lookup3.Sum(b[:len(b)-4])
}
