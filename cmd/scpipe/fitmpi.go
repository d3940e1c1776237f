package main

import (
	"errors"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"scpipe/internal/mpi"
	"scpipe/internal/rundir"
	"scpipe/pipeline"
)

// fitMPI runs scpipe fit --mpi in one rank of mpirun. FitMPI makes the
// ranks agree on every failure, so that all return rather than one
// leaving the others waiting in a collective.
func fitMPI(c *cli.Context, cfg pipeline.FitConfig, o pipeline.FitOptions, env runEnv) error {
	comm, err := mpi.World()
	if err != nil {
		return err
	}
	rep, err := pipeline.FitMPI(c.Context, cfg, o, comm)
	if err != nil {
		return errors.Join(err, comm.Close())
	}
	if err := comm.Close(); err != nil {
		return err
	}
	if comm.Rank() == 0 {
		env.log.Info("fit complete", "output", rep.Run, "ranks", comm.Size(), "fitted", rep.Fitted, "skipped", rep.Skipped,
			"summary", filepath.Join(rep.Run, rundir.SummaryFile))
	}
	return nil
}
