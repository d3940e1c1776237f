package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// flagsFirst reorders a command line so that a command's flags come before
// its positional arguments. urfave/cli v2 stops parsing flags at the first
// positional argument, but users write `scpipe ingest INPUT -o SHARDS`.
// Boolean flags take no value; every other flag takes the next argument
// unless written as -flag=value. Arguments after "--" stay positional.
func flagsFirst(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	var cmd *cli.Command
	i := 1
	for ; i < len(args); i++ {
		if !strings.HasPrefix(args[i], "-") {
			cmd = app.Command(args[i])
			break
		}
	}
	if cmd == nil {
		return args
	}
	isBool := map[string]bool{"help": true, "h": true}
	for _, f := range cmd.Flags {
		_, b := f.(*cli.BoolFlag)
		for _, name := range f.Names() {
			isBool[name] = b
		}
	}
	out := append([]string{}, args[:i+1]...)
	var pos []string
	rest := args[i+1:]
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		switch {
		case a == "--":
			pos = append(pos, rest[j+1:]...)
			j = len(rest)
		case strings.HasPrefix(a, "-") && a != "-":
			out = append(out, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && !isBool[name] && j+1 < len(rest) {
				j++
				out = append(out, rest[j])
			}
		default:
			pos = append(pos, a)
		}
	}
	if len(pos) > 0 {
		out = append(out, "--")
		out = append(out, pos...)
	}
	return out
}
