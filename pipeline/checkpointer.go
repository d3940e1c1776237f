package pipeline

import (
	"encoding"

	"scpipe/internal/rundir"
)

// checkpointer writes a fit's checkpoints in the background: the state is
// encoded at the sweep (the caller's MarshalBinary), and writing it (tens
// of MB at the paper's size, with an fsync) overlaps the sweeps that
// follow. At most one write is in flight; each waits for the one before,
// so the file on disk only moves forward, and an error surfaces at the
// next write or at wait.
type checkpointer struct {
	path string
	busy chan error // the write in flight; nil when none
}

// write waits for the write in flight and, unless that failed (its error is
// returned), starts writing meta and payload, which the caller must not
// change.
func (c *checkpointer) write(meta rundir.CheckpointMeta, payload []byte) error {
	if err := c.wait(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- rundir.WriteCheckpoint(c.path, meta, payload) }()
	c.busy = done
	return nil
}

// wait returns once no write is in flight, with that write's error.
func (c *checkpointer) wait() error {
	if c.busy == nil {
		return nil
	}
	err := <-c.busy
	c.busy = nil
	return err
}

// save encodes the state of s now, and writes it (meta) while the sweeps
// go on unless k asks for it on disk when save returns.
func (c *checkpointer) save(s encoding.BinaryMarshaler, meta rundir.CheckpointMeta, k saveKind) error {
	payload, err := s.MarshalBinary()
	if err != nil {
		return err
	}
	if err := c.write(meta, payload); err != nil || k == saveDue {
		return err
	}
	return c.wait()
}
