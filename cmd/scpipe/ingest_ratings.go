package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"scpipe/ingest"
)

// countFlags are the ingest flags of count matrices, which a ratings file
// has no use for.
var countFlags = []string{"genome", "feature-type", "layer", "transpose", "min-cell-frac", "min-cells", "min-genes", "genes", "barcodes"}

// ingestRatings is scpipe ingest --format ratings.
func ingestRatings(c *cli.Context, env runEnv, in string) error {
	for _, name := range countFlags {
		if c.IsSet(name) {
			return fmt.Errorf("--%s does not apply to --format ratings", name)
		}
	}
	o := ingest.DefaultRatingsOptions()
	o.Input, o.Output, o.Force, o.Workers, o.Logger = in, c.String("output"), c.Bool("force"), env.threads, env.log
	if c.IsSet("threshold") {
		o.Threshold = c.Float64("threshold")
	}
	r, err := ingest.RunRatings(c.Context, o)
	if err != nil {
		return err
	}
	env.log.Info("ingested", "input", r.Input, "output", r.Output, "format", r.Layout, "users", r.Users, "items", r.Items,
		"ratings", r.Ratings, "ones", r.Ones, "mean", r.Mean, "threshold", r.Threshold, "seconds", r.Total.Seconds())
	return nil
}
