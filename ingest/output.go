package ingest

import (
	"fmt"
	"log/slog"

	"scpipe/internal/outlock"
)

// lockOutput takes the lock of the output folder for the whole ingest (a
// second ingest into the same folder is refused at once, naming the
// holder) and removes what a killed ingest into it left: its spill file
// and its unfinished shard folder, both named after the output. It first
// refuses an output that is, holds or lies inside the input, symbolic
// links resolved: --force would replace the input with shards.
func lockOutput(output, input string, log *slog.Logger, more ...string) (*outlock.Lock, error) {
	if err := outlock.CheckInputs(output, append([]string{input}, more...)...); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	lk, err := outlock.Acquire(output, log)
	if err != nil {
		return nil, fmt.Errorf("ingest: output %w", err)
	}
	removed, err := lk.RemoveStale()
	if err != nil {
		lk.Release()
		return nil, fmt.Errorf("ingest: %w", err)
	}
	for _, p := range removed {
		log.Info("ingest: removed a leftover of an earlier, interrupted ingest", "path", p)
	}
	return lk, nil
}
