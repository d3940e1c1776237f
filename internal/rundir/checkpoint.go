package rundir

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"time"

	"scpipe/internal/infile"
)

// Checkpoint container layout (all integers little-endian):
//
//	offset  size  field
//	0       8     magic "SCPCKPT\x00"
//	8       4     format version (uint32) = 1
//	12      4     meta length m (uint32)
//	16      m     meta, JSON (CheckpointMeta)
//	16+m    8     payload length p (uint64)
//	24+m    p     payload (the sampler's state, opaque here)
//	24+m+p  4     CRC-32C (Castagnoli) of bytes [0, 24+m+p)
const (
	checkpointMagic   = "SCPCKPT\x00"
	checkpointVersion = 1
	checkpointHeader  = 16 // magic, version, meta length
	maxMetaLen        = 1 << 20
)

// castagnoli is the CRC-32C table; amd64 and arm64 compute it in hardware.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Errors returned (wrapped, with the file name) by ReadCheckpoint.
var (
	// errTruncated means the checkpoint file ends before the lengths in its
	// header say it should.
	errTruncated = errors.New("rundir: checkpoint truncated")
	// errCorrupt means the checkpoint is not a checkpoint, has an unknown
	// format version, or fails its checksum.
	errCorrupt = errors.New("rundir: checkpoint corrupt")
)

// CheckpointMeta describes the sampler state in a checkpoint, so that a
// resumed run can check the checkpoint belongs to it before decoding the
// payload.
type CheckpointMeta struct {
	L          int       `json:"L"`
	Chain      int       `json:"chain"`
	Sweep      int64     `json:"sweep"`       // sweeps completed when the state was taken
	ConfigHash string    `json:"config_hash"` // hash of the configuration the run was started with
	Created    time.Time `json:"created"`
	Shards     string    `json:"shards,omitempty"` // fingerprint of the shards fitted (ShardsIdentity); "" in older checkpoints
	// Parts, in the checkpoint of a fit spread over MPI ranks, is the
	// number of part files (CheckpointPartName) of the same sweep that hold
	// its cells' state; 0: the checkpoint holds the whole state.
	Parts int `json:"parts,omitempty"`
}

// WriteCheckpoint writes meta and payload to path as a checkpoint,
// atomically: an interrupted write leaves the previous checkpoint in place.
func WriteCheckpoint(path string, meta CheckpointMeta, payload []byte) error {
	mj, err := json.Marshal(meta)
	if err != nil {
		return fmt.Errorf("rundir: %s: encode checkpoint meta: %w", path, err)
	}
	return WriteFileAtomic(path, func(w io.Writer) error {
		h := crc32.New(castagnoli)
		mw := io.MultiWriter(w, h)
		var hdr [checkpointHeader]byte
		copy(hdr[:], checkpointMagic)
		binary.LittleEndian.PutUint32(hdr[8:], checkpointVersion)
		binary.LittleEndian.PutUint32(hdr[12:], uint32(len(mj)))
		var plen [8]byte
		binary.LittleEndian.PutUint64(plen[:], uint64(len(payload)))
		for _, b := range [][]byte{hdr[:], mj, plen[:], payload} {
			if _, err := mw.Write(b); err != nil {
				return err
			}
		}
		_, err := w.Write(binary.LittleEndian.AppendUint32(nil, h.Sum32()))
		return err
	})
}

// ReadCheckpoint reads a checkpoint written by WriteCheckpoint and verifies
// its checksum. Errors wrap errTruncated or errCorrupt and name the file.
// The returned payload is a fresh slice the caller owns.
func ReadCheckpoint(path string) (CheckpointMeta, []byte, error) {
	data, err := infile.ReadFile(path)
	if err != nil {
		return CheckpointMeta{}, nil, fmt.Errorf("rundir: %w", err)
	}
	meta, payload, err := decodeCheckpoint(data)
	if err != nil {
		return CheckpointMeta{}, nil, fmt.Errorf("%w: %s: %s", errors.Unwrap(err), path, err)
	}
	return meta, payload, nil
}

// checkpointError carries the kind (errTruncated or errCorrupt) as its
// Unwrap and the detail as its text, so that ReadCheckpoint can put the
// file name between them.
type checkpointError struct {
	kind   error
	detail string
}

func (e *checkpointError) Error() string { return e.detail }
func (e *checkpointError) Unwrap() error { return e.kind }

func bad(kind error, format string, args ...any) error {
	return &checkpointError{kind, fmt.Sprintf(format, args...)}
}

func decodeCheckpoint(data []byte) (CheckpointMeta, []byte, error) {
	var meta CheckpointMeta
	n := uint64(len(data))
	if n < uint64(len(checkpointMagic)) {
		if bytes.HasPrefix([]byte(checkpointMagic), data) {
			return meta, nil, bad(errTruncated, "%d bytes, shorter than the header", n)
		}
		return meta, nil, bad(errCorrupt, "not a checkpoint (bad magic)")
	}
	if string(data[:8]) != checkpointMagic {
		return meta, nil, bad(errCorrupt, "not a checkpoint (bad magic)")
	}
	if n < checkpointHeader {
		return meta, nil, bad(errTruncated, "%d bytes, shorter than the header", n)
	}
	if v := binary.LittleEndian.Uint32(data[8:]); v != checkpointVersion {
		return meta, nil, bad(errCorrupt, "format version %d, this build reads version %d", v, checkpointVersion)
	}
	m := uint64(binary.LittleEndian.Uint32(data[12:]))
	if m > maxMetaLen {
		return meta, nil, bad(errCorrupt, "meta length %d exceeds %d", m, maxMetaLen)
	}
	if n < checkpointHeader+m+8 {
		return meta, nil, bad(errTruncated, "%d bytes, header needs at least %d", n, checkpointHeader+m+8+4)
	}
	p := binary.LittleEndian.Uint64(data[checkpointHeader+m:])
	body := checkpointHeader + m + 8
	if p > n || body+p+4 > n { // p > n first: it keeps the sum from overflowing
		return meta, nil, bad(errTruncated, "%d bytes, header declares %d", n, body+p+4)
	}
	if want := body + p + 4; n != want {
		return meta, nil, bad(errCorrupt, "%d bytes, header declares %d", n, want)
	}
	if got, want := crc32.Checksum(data[:n-4], castagnoli), binary.LittleEndian.Uint32(data[n-4:]); got != want {
		return meta, nil, bad(errCorrupt, "CRC-32C mismatch: computed %08x, stored %08x", got, want)
	}
	if err := json.Unmarshal(data[checkpointHeader:checkpointHeader+m], &meta); err != nil {
		return meta, nil, bad(errCorrupt, "meta: %v", err)
	}
	return meta, data[body : body+p : body+p], nil
}
