package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"scpipe/cmd/scpipe/internal/shardinfo"
)

func infoCommand() *cli.Command {
	return &cli.Command{
		Name:      "info",
		Usage:     "summarise a shard folder",
		ArgsUsage: "SHARDS",
		Description: `Prints what a shard folder holds: cells, genes, nnz (ones), density, the
gene filter's before/after counts, how the counts were binarised (threshold,
ambient_fraction), the source and the size on disk.

   scpipe info shards
   scpipe info --verify shards          # recompute every file's CRC-32C
   scpipe info --json shards | jq .density`,
		Flags: append(commonFlags(),
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
			&cli.BoolFlag{Name: "verify", Usage: "check every file's checksum"},
		),
		Action: func(c *cli.Context) error {
			dir, err := oneArg(c, "shard folder")
			if err != nil {
				return err
			}
			env, err := newEnv(c)
			if err != nil {
				return err
			}
			return shardinfo.Print(c.Context, os.Stdout, dir, shardinfo.Options{JSON: c.Bool("json"), Verify: c.Bool("verify"), Threads: env.threads})
		},
	}
}
