package rundir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
)

// The keys of a table's metadata that say where it belongs: the run's
// identity (ShardsIdentity.Run, from RUN/shards.json), and the L and chain
// of the fit folder it was written in.
const (
	runKey   = "scpipe.run"
	lKey     = "scpipe.L"
	chainKey = "scpipe.chain"
)

// stamp is where a table belongs: the identity of its run (empty for a
// run that records none) and its fit's L and chain (0 outside a fit
// folder; chain 0 in the folder of an L's consensus, RUN/Lnn/consensus).
type stamp struct {
	run, runDir string
	L, chain    int
	// consensus marks a table of an L's consensus folder or of a chain
	// in it, which builds before 2026-12-06 wrote without the keys.
	consensus bool
}

// stampOf reads where the table at path belongs from the path itself
// (RUN/Lnn/chainK/TABLE or a layer folder below the fit's,
// RUN/Lnn/consensus/TABLE, RUN/Lnn/consensus/chainK/TABLE) and from
// RUN/shards.json. A table outside a fit folder, or in a run without an
// identity, gets what is known.
func stampOf(path string) (stamp, error) {
	dir := filepath.Dir(filepath.Clean(path))
	for range 3 {
		s, ok := fitStamp(dir)
		if !ok {
			dir = filepath.Dir(dir)
			continue
		}
		id, err := ReadShardsIdentity(filepath.Join(s.runDir, ShardsFile))
		switch {
		case err == nil:
			s.run = id.Run
		case !errors.Is(err, os.ErrNotExist):
			return s, err
		}
		return s, nil
	}
	return stamp{}, nil
}

// fitStamp returns the place of the fit folder dir, without the run's
// identity, and whether dir is a fit folder: RUN/Lnn/chainK,
// RUN/Lnn/consensus or RUN/Lnn/consensus/chainK.
func fitStamp(dir string) (stamp, bool) {
	base, parent := filepath.Base(dir), filepath.Dir(dir)
	s := stamp{consensus: base == ConsensusDirName}
	if !s.consensus {
		var ok bool
		if s.chain, ok = parseNumbered(base, "chain"); !ok {
			return stamp{}, false
		}
		if filepath.Base(parent) == ConsensusDirName {
			parent, s.consensus = filepath.Dir(parent), true
		}
	}
	lDir := filepath.Base(parent)
	L, ok := parseNumbered(lDir, "L")
	if !ok || lDir != fmt.Sprintf("L%02d", L) {
		return stamp{}, false
	}
	s.L, s.runDir = L, filepath.Dir(parent)
	return s, true
}

// metadata is what writeTable records of s.
func (s stamp) metadata() (keys, values []string) {
	if s.run != "" {
		keys, values = append(keys, runKey), append(values, s.run)
	}
	if s.L > 0 {
		keys = append(keys, lKey, chainKey)
		values = append(values, strconv.Itoa(s.L), strconv.Itoa(s.chain))
	}
	return keys, values
}

// ErrOtherRun is matched (errors.Is) by the error of a table, or a fit
// mask, that another run or another fit wrote: copied into this one, it
// would be read as this fit's without a word (a mask from a run that held
// out 30% once scored 1.6 million entries the fit had trained on).
var ErrOtherRun = errors.New("written by another run or fit")

// check refuses a table whose metadata md says it belongs elsewhere than
// s, the place it is read from. In a run that records no identity (started
// before runs did), a table without the keys passes.
func (s stamp) check(path string, md arrow.Metadata) error {
	if s.consensus && md.FindKey(runKey) < 0 && md.FindKey(lKey) < 0 {
		return nil // a consensus written before its tables were stamped
	}
	if i := md.FindKey(runKey); s.run != "" && (i < 0 || md.Values()[i] != s.run) {
		got := "none (an older scpipe wrote it)"
		if i >= 0 {
			got = md.Values()[i]
		}
		return fmt.Errorf("%w: it records run %s, and %s is run %s (%s): a table copied from another run's fit",
			ErrOtherRun, got, s.runDir, s.run, filepath.Join(s.runDir, ShardsFile))
	}
	if s.L == 0 {
		return nil
	}
	iL, iC := md.FindKey(lKey), md.FindKey(chainKey)
	if iL < 0 || iC < 0 {
		return nil
	}
	L, errL := strconv.Atoi(md.Values()[iL])
	chain, errC := strconv.Atoi(md.Values()[iC])
	if errL != nil || errC != nil {
		return fmt.Errorf("%w: its fit is recorded as L = %q, chain %q", ErrOtherRun, md.Values()[iL], md.Values()[iC])
	}
	if L != s.L || chain != s.chain {
		return fmt.Errorf("%w: it was written by %s, and lies in the folder of %s", ErrOtherRun, fitName(L, chain), fitName(s.L, s.chain))
	}
	return nil
}

// fitName names the fit of L and chain as the errors do: chain 0 is the
// consensus of L.
func fitName(L, chain int) string {
	if chain == 0 {
		return fmt.Sprintf("the consensus of L = %d", L)
	}
	return fmt.Sprintf("the fit of L = %d, chain %d", L, chain)
}
