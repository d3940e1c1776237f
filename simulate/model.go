package simulate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"

	"scpipe/internal/bernoulli"
	"scpipe/shard"
)

// Params describe a planted dataset. Kind chooses the generative model;
// CodeDensity, UsageDensity, FlipOn and FlipOff belong to the OrMachine kind
// (the digits kind takes FlipOn and FlipOff too), SingleCell to the
// single-cell kind and Digits to the digits kind, and each must stay zero
// for the other kinds.
type Params struct {
	Kind         Kind
	Cells, Genes int     // N and D
	L            int     // number of planted programs
	CodeDensity  float64 // P(u_ld = 1): fraction of genes in a program
	UsageDensity float64 // P(z_nl = 1): fraction of cells using a program
	FlipOn       float64 // P(observed 1 | noise-free 0): background expression
	FlipOff      float64 // P(observed 0 | noise-free 1): dropout
	Missing      float64 // P(entry unobserved); only shards can hold missing entries
	Seed         uint64

	// ActivityPrograms are planted programs beyond the L identity
	// programs, as cNMF's simulation has beside its cell types: a shared
	// set of genes (an interferon or stress response) that each cell,
	// whatever identity programs it uses, switches on with probability
	// ActivityFraction, independently. They follow the identity programs
	// (programs L+1 … L+ActivityPrograms of the truth) and are drawn after
	// everything else, so that a simulation without them is the one drawn
	// before they existed. An OrMachine activity program holds each gene
	// with probability CodeDensity, a single-cell one
	// round(Genes·√(ProgramSizeMin·ProgramSizeMax)) genes (the middle of
	// the identity programs' sizes), drawn from the ordinary genes.
	ActivityPrograms int     `json:",omitzero"`
	ActivityFraction float64 `json:",omitzero"`

	SingleCell SingleCellParams `json:",omitzero"`
	Digits     DigitsParams     `json:",omitzero"`
	// Samples splits the cells into samples with their own depth and
	// background, and programs of one sample only (single-cell kind;
	// samples.go).
	Samples SampleParams `json:",omitzero"`
}

// DefaultParams is the embedded default of `scpipe demo`: a few thousand cells
// and genes, sparse like real data (about 7% ones, the density of the paper's
// mouse brain data), with six programs of distinct sizes to recover.
func DefaultParams() Params {
	return Params{
		Cells: 4000, Genes: 2000, L: 6,
		CodeDensity: 0.06, UsageDensity: 0.25,
		FlipOn: 0.01, FlipOff: 0.1,
		Seed: 1,
	}
}

// Validate reports the first parameter out of range.
func (p Params) Validate() error {
	switch {
	case p.Cells < 1 || p.Genes < 1:
		return fmt.Errorf("simulate: cells and genes must be positive (got %d × %d)", p.Cells, p.Genes)
	case p.Cells > shard.MaxDim:
		return fmt.Errorf("simulate: %d cells: at most %d, the most a shard folder holds", p.Cells, shard.MaxDim)
	case p.Genes > maxGenes:
		return fmt.Errorf("simulate: %d genes: at most %d", p.Genes, maxGenes)
	case p.L < 1 || p.L > 64:
		return fmt.Errorf("simulate: L must be in 1..64 (got %d)", p.L)
	case !(p.Missing >= 0 && p.Missing <= 1):
		return fmt.Errorf("simulate: missing must be in [0, 1] (got %v)", p.Missing)
	case p.ActivityPrograms < 0 || p.ActivityPrograms > 64-p.L: // not L+A, which a huge A overflows
		return fmt.Errorf("simulate: %d activity programs beside L = %d: want 0 or more, and at most 64 programs in all", p.ActivityPrograms, p.L)
	case p.ActivityPrograms > 0 && !(p.ActivityFraction > 0 && p.ActivityFraction <= 1):
		return fmt.Errorf("simulate: activity fraction must be in (0, 1] (got %v)", p.ActivityFraction)
	case p.ActivityPrograms == 0 && p.ActivityFraction != 0:
		return fmt.Errorf("simulate: an activity fraction (%v) without activity programs", p.ActivityFraction)
	case p.ActivityPrograms > 0 && p.Kind == Digits:
		return fmt.Errorf("simulate: the %s kind has no activity programs (its codes are the seven segments)", Digits)
	}
	if err := p.Samples.validate(p); err != nil {
		return err
	}
	if p.Kind != Digits && p.Digits != (DigitsParams{}) {
		return fmt.Errorf("simulate: digits parameters given for the %s kind (set Kind to %s)", p.Kind, Digits)
	}
	switch p.Kind {
	case Digits:
		if p.SingleCell != (SingleCellParams{}) {
			return fmt.Errorf("simulate: single-cell parameters given for the %s kind (set Kind to %s)", Digits, SingleCell)
		}
		return p.Digits.validate(p)
	case OrMachine:
		if p.SingleCell != (SingleCellParams{}) {
			return fmt.Errorf("simulate: single-cell parameters given for the %s kind (set Kind to %s)", OrMachine, SingleCell)
		}
		for _, q := range []struct {
			name string
			v    float64
		}{{"code density", p.CodeDensity}, {"usage density", p.UsageDensity}, {"flip-on", p.FlipOn}, {"flip-off", p.FlipOff}} {
			if !(q.v >= 0 && q.v <= 1) {
				return fmt.Errorf("simulate: %s must be in [0, 1] (got %v)", q.name, q.v)
			}
		}
		return nil
	case SingleCell:
		for _, q := range []struct {
			name string
			v    float64
		}{{"code density", p.CodeDensity}, {"usage density", p.UsageDensity}, {"flip-on", p.FlipOn}, {"flip-off", p.FlipOff}} {
			if q.v != 0 {
				return fmt.Errorf("simulate: %s belongs to the %s kind, not %s (got %v)", q.name, OrMachine, SingleCell, q.v)
			}
		}
		return p.SingleCell.validate(p.Genes, p.L)
	}
	return fmt.Errorf("simulate: unknown kind %d", p.Kind)
}

// Programs returns the number of planted programs: the L identity
// programs and the activity programs.
func (p Params) Programs() int { return p.L + p.ActivityPrograms + p.Samples.Programs }

// Truth is a planted model: the programs U and their usage Z, both stored as
// one bitset per program (over genes and over cells respectively), and for
// the single-cell kind the rates that detection depends on.
type Truth struct {
	Params
	U [][]uint64 // U[l]: bitset over genes, Genes bits; Programs() of them
	Z [][]uint64 // Z[l]: bitset over cells, Cells bits

	// The single-cell kind's draws (nil for the OrMachine kind): cell n's
	// size factor s_n, gene d's baseline rate μ_d and program lift ν_d, and
	// whether d is a housekeeping gene (a bitset over genes).
	SizeFactor   []float64
	Baseline     []float64
	Lift         []float64
	Housekeeping []uint64
	// Each sample's depth and background factors (nil without samples).
	SampleDepth, SampleBackground []float64

	// Workers is the number of goroutines that draw rows when writing; 0
	// means GOMAXPROCS. The output does not depend on it.
	Workers int
	// Free tells the free space that WriteShards and WriteMTX check the
	// output against before they draw it; nil asks the file system.
	Free FreeSpace
	// Log receives what writing has to say (a killed writer's leftovers
	// removed); nil: nowhere. The command's logger, so that --quiet
	// quiets it (it went to slog.Default, past --quiet).
	Log *slog.Logger

	words int       // words per cell row
	bins  []geneBin // single-cell kind: genes grouped by baseline rate

	barcodeOnce  sync.Once
	barcodeFixes map[int]string // the barcodes of the cells whose Barcode(n) an earlier cell has
}

// Words returns the number of uint64 words of one bit-packed cell row.
func (t *Truth) Words() int { return t.words }

// New draws the planted programs and their usage (and for the single-cell
// kind the genes' rates and the cells' depths). Each program keeps at least
// one gene, so that every planted program is recoverable in principle.
// Once ctx is done it stops, with ctx's error: tens of millions of cells
// take seconds.
func New(ctx context.Context, p Params) (*Truth, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	t := &Truth{Params: p, words: (p.Genes + 63) / 64}
	r := rand.New(rand.NewPCG(p.Seed, 0x5ca1ab1e))
	switch p.Kind {
	case SingleCell:
		t.drawSingleCell(ctx, r)
	case Digits:
		t.drawDigits()
	default:
		t.U = make([][]uint64, p.L)
		for l := range t.U {
			t.U[l] = t.drawCode(ctx, r)
		}
		t.Z = make([][]uint64, p.L)
		for l := range t.Z {
			t.Z[l] = make([]uint64, (p.Cells+63)/64)
			setRandom(ctx, t.Z[l], p.Cells, p.UsageDensity, r)
		}
	}
	t.drawActivity(ctx, r)
	t.drawSamples(r)
	// A draw stopped part way leaves the rest undrawn: the Truth is
	// thrown away.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return t, nil
}

// drawCode draws an OrMachine program: each gene with probability
// CodeDensity, and at least one.
func (t *Truth) drawCode(ctx context.Context, r *rand.Rand) []uint64 {
	u := make([]uint64, t.words)
	setRandom(ctx, u, t.Genes, t.CodeDensity, r)
	if popcount(u) == 0 {
		g := r.IntN(t.Genes)
		u[g/64] |= 1 << (g % 64)
	}
	return u
}

// drawActivity draws the activity programs after the identity programs'
// draws: each one's genes (drawCode, or for the single-cell kind a sample
// of the ordinary genes), then the cells using it, each with probability
// ActivityFraction whatever its identity.
func (t *Truth) drawActivity(ctx context.Context, r *rand.Rand) {
	for range t.ActivityPrograms {
		var u []uint64
		if t.Kind == SingleCell {
			u = make([]uint64, t.words)
			var ordinary []int
			for g := range t.Genes {
				if !bit(t.Housekeeping, g) {
					ordinary = append(ordinary, g)
				}
			}
			for _, g := range sample(ordinary, t.SingleCell.activitySize(t.Genes), r) {
				u[g/64] |= 1 << (g % 64)
			}
		} else {
			u = t.drawCode(ctx, r)
		}
		z := make([]uint64, (t.Cells+63)/64)
		setRandom(ctx, z, t.Cells, t.ActivityFraction, r)
		t.U, t.Z = append(t.U, u), append(t.Z, z)
	}
}

// CleanRow writes the noise-free row of cell n into dst (Words() words).
func (t *Truth) CleanRow(n int, dst []uint64) {
	clear(dst)
	for l := range t.Z {
		if t.Z[l][n/64]>>(n%64)&1 == 0 {
			continue
		}
		for i, w := range t.U[l] {
			dst[i] |= w
		}
	}
}

// Row writes the observed (noisy) row of cell n into dst; clean is scratch of
// the same length and holds the noise-free row afterwards. The row depends
// only on (Seed, n).
func (t *Truth) Row(n int, dst, clean []uint64) {
	t.RowCounts(n, dst, clean, nil)
}

// RowCounts is Row that also writes, when counts is not nil (Genes long),
// the UMI count of every observed one: counts[g] ≥ 1 where dst has bit g,
// other entries are left unspecified. The counts do not change the row.
func (t *Truth) RowCounts(n int, dst, clean []uint64, counts []uint32) {
	if t.Kind == SingleCell {
		t.singleCellRow(n, dst, clean, counts, rand.New(rand.NewPCG(t.Seed^singleCellStream, uint64(n)+1)))
		return
	}
	t.orMachineRow(n, dst, clean)
	if counts != nil {
		geometricCounts(t.Seed, n, dst, counts)
	}
}

// orMachineRow is Row for the OrMachine kind.
func (t *Truth) orMachineRow(n int, dst, clean []uint64) {
	t.CleanRow(n, clean)
	copy(dst, clean)
	r := rand.New(rand.NewPCG(t.Seed, uint64(n)+1))
	// Dropout: clear noise-free ones; background: set noise-free zeros.
	bernoulli.Each(t.Genes, t.FlipOff, r, func(g int) {
		if clean[g/64]>>(g%64)&1 == 1 {
			dst[g/64] &^= 1 << (g % 64)
		}
	})
	bernoulli.Each(t.Genes, t.FlipOn, r, func(g int) {
		if clean[g/64]>>(g%64)&1 == 0 {
			dst[g/64] |= 1 << (g % 64)
		}
	})
}

// ObservedRow writes the observed-entry mask of cell n into dst: each entry
// is missing independently with probability Missing. It depends only on
// (Seed, n).
func (t *Truth) ObservedRow(n int, dst []uint64) {
	for i := range dst {
		dst[i] = ^uint64(0)
	}
	if g := t.Genes % 64; g != 0 {
		dst[len(dst)-1] = 1<<g - 1
	}
	r := rand.New(rand.NewPCG(t.Seed^0x6d697373, uint64(n)+1))
	bernoulli.Each(t.Genes, t.Missing, r, func(g int) { dst[g/64] &^= 1 << (g % 64) })
}

// geometricCounts gives each observed one of the OrMachine kind a count of
// 1 + Geometric(½), from its own stream per cell, so that the files look like
// UMI counts; the model itself has no counts.
func geometricCounts(seed uint64, n int, row []uint64, counts []uint32) {
	r := rand.New(rand.NewPCG(seed^0xc0ffee, uint64(n)+1))
	for i, word := range row {
		for word != 0 {
			g := i*64 + bits.TrailingZeros64(word)
			word &= word - 1
			counts[g] = 1 + uint32(math.Floor(-math.Log(1-r.Float64())/math.Ln2))
		}
	}
}

// Detection returns P(x_ng = 1), the probability that cell n's gene g is
// observed as 1 under the planted model.
func (t *Truth) Detection(n, g int) float64 {
	covered := false
	for l := range t.Z {
		covered = covered || (bit(t.Z[l], n) && bit(t.U[l], g))
	}
	if t.Kind == SingleCell {
		rate := t.Baseline[g]
		if covered {
			rate += t.Lift[g]
		}
		return -math.Expm1(-t.SizeFactor[n] * rate)
	}
	if covered {
		return 1 - t.FlipOff
	}
	return t.FlipOn
}

func bit(ws []uint64, i int) bool { return ws[i/64]>>(i%64)&1 == 1 }

// setRandom sets each of the first n bits of dst independently with
// probability p.
func setRandom(ctx context.Context, dst []uint64, n int, p float64, r *rand.Rand) {
	k := 0
	bernoulli.EachWhile(n, p, r, func(i int) bool {
		dst[i/64] |= 1 << (i % 64)
		k++
		return k%(1<<16) != 0 || ctx.Err() == nil
	})
}

func popcount(ws []uint64) int {
	n := 0
	for _, w := range ws {
		n += bits.OnesCount64(w)
	}
	return n
}

// ProgramGenes returns the genes of program l in increasing order.
func (t *Truth) ProgramGenes(l int) []int {
	return ones(t.U[l])
}

// ProgramCells returns the cells using program l in increasing order.
func (t *Truth) ProgramCells(l int) []int {
	return ones(t.Z[l])
}

func ones(ws []uint64) []int {
	out := make([]int, 0, popcount(ws))
	for i, w := range ws {
		for w != 0 {
			out = append(out, i*64+bits.TrailingZeros64(w))
			w &= w - 1
		}
	}
	return out
}

// errNoOutput is returned for an empty output path.
var errNoOutput = errors.New("simulate: no output path given")
