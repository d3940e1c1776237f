// Command scpipe finds gene programs in single-cell data by Bayesian Boolean
// matrix factorisation (the OrMachine). This package only parses flags: each
// command fills an options struct whose defaults come from the library and
// calls one function.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/urfave/cli/v2"

	"scpipe/internal/progress"
	"scpipe/pipeline"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	app := newApp()
	err := app.RunContext(ctx, flagsFirst(app, os.Args))
	stop()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			if !errors.Is(err, pipeline.ErrInterrupted) { // a fit says how to resume
				err = fmt.Errorf("interrupted: %w (outputs are written whole or not at all: nothing was replaced, and a temporary left behind is removed by the next run)", err)
			}
			fmt.Fprintf(os.Stderr, "scpipe: %v\n", err)
			os.Exit(130)
		}
		fmt.Fprintf(os.Stderr, "scpipe: %v\n", err)
		os.Exit(1)
	}
}

func newApp() *cli.App {
	return &cli.App{
		Name:  "scpipe",
		Usage: "interpretable gene programs in huge single-cell data by Bayesian Boolean matrix factorisation",
		Description: `scpipe turns single-cell count matrices into binary, bit-packed shards and
factorises them with the OrMachine (Rukat et al., ICML 2017).

   scpipe demo                            # the whole pipeline on simulated data
   scpipe ingest counts.h5 -o shards      # 10x HDF5 / MTX / h5ad -> binary shards
   scpipe info shards                     # what the shards hold
   scpipe fit shards -o run --L 2..10     # posterior means of codes and usage per L
   scpipe summarize run                   # summary.tsv from the fits that have finished
   scpipe enrich run -o out --gmt GO.gmt  # gene programs, enrichment, hierarchy across L
   scpipe evaluate run -o eval            # held-out accuracy, ROC, calibration of the predictive
   scpipe report run                      # one HTML report of the run (run/report.html)
   scpipe export run -o run.h5ad          # AnnData for scanpy; --cnmf DIR: cNMF's tables
   scpipe simulate -o sim                 # planted data as a 10x MTX folder

Every command takes -j/--threads (or SCPIPE_THREADS), --quiet and
--no-direct-io; see scpipe COMMAND --help.`,
		Commands: []*cli.Command{
			ingestCommand(),
			infoCommand(),
			simulateCommand(),
			fitCommand(),
			summarizeCommand(),
			enrichCommand(),
			evaluateCommand(),
			reportCommand(),
			exportCommand(),
			demoCommand(),
			benchCommand(),
		},
		HideHelpCommand: true,
	}
}

// commonFlags are accepted by every command.
func commonFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "threads", Aliases: []string{"j"}, Value: runtime.NumCPU(), EnvVars: []string{"SCPIPE_THREADS"}, Usage: "number of cores to use"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress and only warnings on stderr"},
		&cli.BoolFlag{Name: "no-direct-io", EnvVars: []string{"SCPIPE_NO_DIRECT_IO"}, Usage: "write through the page cache, not O_DIRECT (on NFS, for one)"},
	}
}

// runEnv is what every command gets from the common flags.
type runEnv struct {
	log      *slog.Logger
	threads  int
	progress progress.Mode
	cached   bool // --no-direct-io: the writers' Cached option
}

func newEnv(c *cli.Context) (runEnv, error) {
	env, err := newEnvThreads(c, c.Int("threads"))
	if err != nil {
		return env, fmt.Errorf("--threads: %w", err)
	}
	return env, nil
}

// newEnvThreads is newEnv for a command whose own configuration may set
// the thread count (fit's threads key), resolved by the caller with -j
// first; an invalid count is pipeline.CheckThreads's SettingError, for
// the caller to say where it came from. It is the one place the count is
// decided: env.threads, which each command passes down as its options'
// Threads or Workers, the one channel by which every package's goroutines
// are bounded (no process-wide setting such as GOMAXPROCS is changed).
func newEnvThreads(c *cli.Context, threads int) (runEnv, error) {
	if err := pipeline.CheckThreads(threads); err != nil {
		return runEnv{}, err
	}
	level, mode := slog.LevelInfo, progress.Auto
	if c.Bool("quiet") {
		level, mode = slog.LevelWarn, progress.Quiet
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	return runEnv{log: log, threads: threads, progress: mode, cached: c.Bool("no-direct-io")}, nil
}

// oneArg returns the single positional argument of a command, naming what it
// should be when it is missing.
func oneArg(c *cli.Context, what string) (string, error) {
	switch c.NArg() {
	case 1:
		return c.Args().First(), nil
	case 0:
		return "", fmt.Errorf("%s: missing %s (see scpipe %s --help)", c.Command.Name, what, c.Command.Name)
	default:
		return "", fmt.Errorf("%s: expected one %s, got %d arguments (flags go before the argument or use -o=…)", c.Command.Name, what, c.NArg())
	}
}
