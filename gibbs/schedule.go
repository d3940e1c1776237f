package gibbs

import (
	"fmt"
	"strings"
)

// schedule is when each part of a chain's burn-in happens, decided once
// from its Config (newSchedule) and read by the sweeps: the multi-start
// phase, the looks for idle codes to re-seed (reseed.go), the first
// setting of the genes' levels (genelevels.go), the hold on the
// likelihood's parameters and the burn-in's length (settle.go). A sweep
// is a U and a Z step (with levels) or a Z and a U step, then the update
// of the parameters it estimates (step.go).
type schedule struct {
	// keepAfter is the sweep after which the best of the starts is kept
	// (Config.StartSweeps); 0 with one start.
	keepAfter int
	// reseeds lists the sweeps before which idle codes are looked for.
	reseeds []int
	// genesFrom is the first sweep after which the genes' levels are set
	// (with per-gene levels, genes).
	genes     bool
	genesFrom int
	// holdFrom is the first sweep whose parameters are held
	// (Config.HoldFrom; 0: none); fixed holds them from the start
	// (Config.FixLambda, Config.Params).
	holdFrom int
	fixed    bool
	given    bool // held from the start at Config.Params
	// burnIn is the least burn-in and maxBurnIn the most, past which a
	// burn-in that has not settled runs no further (Config.MaxBurnIn;
	// burnIn when it is 0).
	burnIn, maxBurnIn int
}

// newSchedule returns the schedule of cfg.
func newSchedule(cfg config) schedule {
	sc := schedule{burnIn: cfg.BurnIn, maxBurnIn: max(cfg.BurnIn, cfg.MaxBurnIn), holdFrom: cfg.HoldFrom, fixed: cfg.FixLambda || cfg.Params != nil, given: cfg.Params != nil,
		genes: cfg.GeneLevelBits > 0}
	if cfg.Starts > 1 {
		sc.keepAfter = cfg.StartSweeps
	}
	if cfg.Reseed {
		// Once the multi-start phase has kept its chain (a chain whose
		// start left a code idle is mended whichever start it is), a look
		// every reseedEvery sweeps, each followed by that many burn-in
		// sweeps for the seeded code to take its cells.
		first := max(sc.keepAfter, 1)
		for k := range reseedLooks {
			if at := first + k*reseedEvery; at+reseedEvery <= cfg.BurnIn {
				sc.reseeds = append(sc.reseeds, at)
			}
		}
	}
	if sc.genes {
		// The codes form first: a program's gene not yet in its code
		// shows the program's cells among its uncovered ones, and a high
		// background set then would keep it out.
		sc.genesFrom = cfg.BurnIn / 2
		if cfg.HoldFrom > 0 {
			sc.genesFrom = cfg.HoldFrom / 2
		}
	}
	return sc
}

// estimates reports whether the likelihood's parameters are set from the
// state after sweep.
func (sc schedule) estimates(sweep int) bool {
	return !sc.fixed && (sc.holdFrom == 0 || sweep < sc.holdFrom)
}

// Schedule describes in a line when the parts of cfg's burn-in happen:
// the sweep after which the best start is kept, the looks for idle codes,
// the genes' levels' first setting, the hold and the burn-in's length.
func Schedule(cfg Config) (string, error) {
	r, err := cfg.resolve()
	if err != nil {
		return "", err
	}
	return newSchedule(r).String(), nil
}

// reseedBefore reports whether the sweep about to run is preceded by a
// look for codes to re-seed.
func (sc schedule) reseedBefore(sweep int) bool {
	for _, at := range sc.reseeds {
		if at == sweep {
			return true
		}
	}
	return false
}

// String describes the schedule in a line, as the tests pin it.
func (sc schedule) String() string {
	var b strings.Builder
	if sc.keepAfter > 0 {
		fmt.Fprintf(&b, "starts kept after %d; ", sc.keepAfter)
	}
	if len(sc.reseeds) > 0 {
		fmt.Fprintf(&b, "re-seeding before %v; ", sc.reseeds)
	}
	if sc.genes && !sc.given {
		fmt.Fprintf(&b, "gene levels from %d; ", sc.genesFrom)
	}
	switch {
	case sc.given:
		b.WriteString("parameters given; ")
	case sc.fixed:
		b.WriteString("parameters fixed; ")
	case sc.holdFrom > 0:
		fmt.Fprintf(&b, "held from %d; ", sc.holdFrom)
	}
	fmt.Fprintf(&b, "burn-in %d", sc.burnIn)
	if sc.maxBurnIn > sc.burnIn {
		fmt.Fprintf(&b, " to %d until settled", sc.maxBurnIn)
	}
	return b.String()
}
