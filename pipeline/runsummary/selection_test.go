package runsummary

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"math"
	"math/rand/v2"
	"testing"

	"scpipe/internal/rundir"
)

func TestConverged(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	for _, tc := range []struct {
		name     string
		agree    []float64
		programs []int
		stable   int
		rhat     float64
		want     string
	}{
		{"one chain", []float64{1}, []int{4}, 4, 1.0, ""},
		{"no R-hat", []float64{1, 0.99}, []int{4, 4}, 4, nan, ""},
		{"agree and settled", []float64{1, 0.95}, []int{4, 4}, 4, 1.02, "yes"},
		{"a chain below the agreement", []float64{1, 0.95, 0.89}, []int{4, 4, 4}, 4, 1.02, "no"},
		{"NaN agreement", []float64{1, nan}, []int{4, 0}, 0, 1.02, "no"},
		{"still drifting", []float64{1, 0.99}, []int{4, 4}, 4, 1.1, "no"},
		{"an unstable program of chain 1", []float64{1, 0.93}, []int{10, 10}, 9, 1.0, "no"},
		{"a program only chain 2 found", []float64{1, 0.95}, []int{19, 20}, 19, 1.0, "no"},
	} {
		if got := Converged(tc.agree, tc.programs, tc.stable, tc.rhat); got != tc.want {
			t.Errorf("%s: Converged(%v, %v, %d, %v) = %q, want %q", tc.name, tc.agree, tc.programs, tc.stable, tc.rhat, got, tc.want)
		}
	}
}

// TestRatioSE checks the standard error of a mean over entries clustered
// in cells against its definition on a hand-made case, and statistically:
// over many draws its average matches the spread of the estimate.
func TestRatioSE(t *testing.T) {
	t.Parallel()
	// Cells of 1, 2 and 3 entries summing 1, 2 and 6 (and one cell of no
	// entries, which does not count): r = 9/6 = 1.5, residuals −0.5, −1,
	// 1.5, C/(C−1) = 3/2, SE = sqrt(1.5 · 3.5) / 6.
	if got, want := ratioSE([]float64{1, 2, 6, 0}, []int32{1, 2, 3, 0}), math.Sqrt(1.5*3.5)/6; math.Abs(got-want) > 1e-15 {
		t.Errorf("ratioSE = %v, want %v", got, want)
	}
	if got := ratioSE([]float32{1, 5}, []int32{2, 0}); !math.IsNaN(got) {
		t.Errorf("one cell: ratioSE = %v, want NaN", got)
	}
	r := rand.New(rand.NewPCG(3, 4))
	const cells, trials = 300, 400
	var est, ses []float64
	for range trials {
		num, den := make([]float64, cells), make([]int32, cells)
		tot, n := 0.0, 0.0
		for c := range cells {
			den[c] = int32(5 + r.IntN(20))
			// Entries of one cell share a cell effect: correlated.
			effect := r.NormFloat64()
			for range den[c] {
				num[c] += -0.3 + 0.2*effect + 0.1*r.NormFloat64()
			}
			tot += num[c]
			n += float64(den[c])
		}
		est = append(est, tot/n)
		ses = append(ses, ratioSE(num, den))
	}
	m, sd := meanSD(est)
	meanSE, _ := meanSD(ses)
	if math.Abs(m+0.3) > 4*sd/math.Sqrt(trials) || math.Abs(meanSE/sd-1) > 0.15 {
		t.Errorf("estimates %.5f ± %.5f over %d trials; mean SE %.5f, want about the spread", m, sd, trials, meanSE)
	}
}

func meanSD(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x / float64(len(v))
	}
	for _, x := range v {
		sd += (x - mean) * (x - mean) / float64(len(v)-1)
	}
	return mean, math.Sqrt(sd)
}

// TestRecommendL checks the one-standard-error rule on per-cell held-out
// scores: a smaller L within one standard error of the best is chosen, one
// clearly worse is not, whatever the map's order.
func TestRecommendL(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	const cells = 2000
	base := make([]float32, cells)
	for i := range base {
		base[i] = float32(-20 + 3*r.NormFloat64())
	}
	// shift returns base moved per cell by noise of sd whose mean over the
	// cells is exactly d, so that each case's answer is fixed.
	shift := func(d, sd float64) []float32 {
		noise := make([]float64, cells)
		m := 0.0
		for i := range noise {
			noise[i] = sd * r.NormFloat64()
			m += noise[i] / cells
		}
		v := make([]float32, cells)
		for i := range v {
			v[i] = base[i] + float32(d+noise[i]-m)
		}
		return v
	}
	entries := make([]int32, cells)
	for i := range entries {
		entries[i] = 20
	}
	for _, tc := range []struct {
		name string
		per  map[int][]float32
		want int
	}{
		{"nothing held out", map[int][]float32{}, 0},
		{"more codes help until 4", map[int][]float32{2: shift(-2, 1), 3: shift(-1, 1), 4: shift(0, 1), 5: shift(0.001, 1), 6: shift(-0.002, 1)}, 4},
		{"flat: the smallest", map[int][]float32{2: shift(0, 0.5), 3: shift(0.001, 0.5), 4: shift(0.002, 0.5)}, 2},
		{"best is the largest", map[int][]float32{2: shift(-3, 1), 3: shift(-2, 1), 4: shift(-1, 1), 5: shift(0, 1)}, 5},
	} {
		for range 5 { // maps iterate in a different order each time
			if got := recommendL(tc.per, entries).L; got != tc.want {
				t.Errorf("%s: recommendL = %d, want %d", tc.name, got, tc.want)
				break
			}
		}
	}
	if got := recommendL(map[int][]float32{2: shift(0, 1)}, make([]int32, cells)); got.L != 0 {
		t.Errorf("no entry held out: recommendL = %+v, want L = 0", got)
	}
	// Past the elbow: 6 captures 98% of the gain from 2; 8 is better by
	// many standard errors but by under 5% of the gain, so 6.
	per := map[int][]float32{2: shift(-4, 0.2), 4: shift(-1, 0.2), 6: shift(-0.08, 0.2), 8: shift(0, 0.2)}
	sel := recommendL(per, entries)
	if sel.L != 6 || sel.Best != 8 {
		t.Errorf("elbow: recommendL = %d (best %d), want 6 (best 8)", sel.L, sel.Best)
	}
	// The numbers behind it, per held-out entry: the gaps are the shifts
	// over 20 entries, the elbow 5% of the largest, and the paired standard
	// error that of the noise's difference, far below the unpaired ones.
	for L, d := range map[int]float64{2: 4, 4: 1, 6: 0.08, 8: 0} {
		if math.Abs(sel.Gap[L]-d/20) > 1e-6 {
			t.Errorf("elbow: gap of L = %d is %v, want %v", L, sel.Gap[L], d/20)
		}
	}
	if want := 0.05 * 4 / 20; math.Abs(sel.Elbow-want) > 1e-6 {
		t.Errorf("elbow: %v, want %v", sel.Elbow, want)
	}
	// The difference of two independent noises of sd 0.2 has sd 0.2·√2
	// per cell: its standard error per entry is that / √cells / 20.
	if want := 0.2 * math.Sqrt2 / math.Sqrt(cells) / 20; math.Abs(sel.GapSE[6]/want-1) > 0.1 || sel.GapSE[8] != 0 {
		t.Errorf("elbow: paired standard errors %v at 6 and %v at 8, want about %v and 0", sel.GapSE[6], sel.GapSE[8], want)
	}
	if !sel.within(6) || sel.within(4) || sel.within(3) {
		t.Errorf("elbow: within the tolerance 4 %v, 6 %v, 3 (not fitted) %v; want false, true, false", sel.within(4), sel.within(6), sel.within(3))
	}
}

// TestLogSelectionScoresTheMostLikelyChain checks that the per-L log line
// states the held-out score the recommendation used, that of the L's
// chain of highest log-likelihood, not chain 1's: on pbmc3k-600 the line
// of the best L (gap 0) once showed a lower score than the recommended
// L's.
func TestLogSelectionScoresTheMostLikelyChain(t *testing.T) {
	t.Parallel()
	row := func(L, chain int, loglik, logpred, se float64, gap float64) rundir.SummaryRow {
		return rundir.SummaryRow{L: L, Chain: chain, LogLik: loglik, HeldoutLogPred: logpred, HeldoutLogPredSE: se,
			LogPredGap: gap, Agreement: 0.5, Converged: "no", Programs: L, StablePrograms: 1}
	}
	for _, tc := range []struct {
		name      string
		rows      []rundir.SummaryRow
		wantPred  float64
		wantSE    float64
		wantChain int
	}{
		{"chain 2 more likely", []rundir.SummaryRow{row(6, 1, -1302, -0.2337, 0.0031, 0), row(6, 2, -1301, -0.2333, 0.0033, 0)}, -0.2333, 0.0033, 2},
		{"chain 1 more likely", []rundir.SummaryRow{row(4, 1, -1300, -0.2334, 0.0032, 0), row(4, 2, -1301, -0.2332, 0.0034, 0)}, -0.2334, 0.0032, 1},
		{"a tie keeps chain 1", []rundir.SummaryRow{row(4, 1, -1300, -0.2334, 0.0032, 0), row(4, 2, -1300, -0.2332, 0.0034, 0)}, -0.2334, 0.0032, 1},
	} {
		var buf bytes.Buffer
		logSelection(slog.New(slog.NewJSONHandler(&buf, nil)), tc.rows)
		var line struct {
			Pred  float64 `json:"heldout_logpred"`
			SE    float64 `json:"se"`
			Chain int     `json:"heldout_chain"`
		}
		first, _, _ := bytes.Cut(buf.Bytes(), []byte("\n"))
		if err := json.Unmarshal(first, &line); err != nil {
			t.Fatalf("%s: %v in %s", tc.name, err, first)
		}
		if line.Pred != tc.wantPred || line.SE != tc.wantSE || line.Chain != tc.wantChain {
			t.Errorf("%s: logged heldout_logpred %g se %g chain %d, want %g, %g, chain %d (%s)",
				tc.name, line.Pred, line.SE, line.Chain, tc.wantPred, tc.wantSE, tc.wantChain, first)
		}
	}
}

// TestHeldRatesLeaveRHat requires rates held since the burn-in, which
// differ between chains but are constant within each, to be left out of
// R̂, while a drifting log-likelihood still shows.
func TestHeldRatesLeaveRHat(t *testing.T) {
	level := func(shift float64) []float64 {
		v := make([]float64, 40)
		for i := range v {
			v[i] = shift + float64((i*7)%11)
		}
		return v
	}
	held := func(x float64) []float64 {
		v := make([]float64, 40)
		for i := range v {
			v[i] = x
		}
		return v
	}
	traces := []sampleTrace{
		{logLik: level(0), lambda: held(math.NaN()), dropout: held(0.4), background: held(0.05)},
		{logLik: level(0), lambda: held(math.NaN()), dropout: held(0.41), background: held(0.051)},
	}
	d := chainDiagnostics(nil, traces)
	if !(d.rhat < 1.1) || !(d.rhatWithin < 1.1) {
		t.Errorf("held rates: R̂ %v, within %v; want those of the log-likelihood alone", d.rhat, d.rhatWithin)
	}
	for i := range traces[1].logLik {
		traces[1].logLik[i] += 3 * float64(i)
	}
	if d := chainDiagnostics(nil, traces); !(d.rhatWithin > 1.1) {
		t.Errorf("a drifting log-likelihood beside held rates: R̂ within %v", d.rhatWithin)
	}
}

// TestRestingChainsConverge requires chains whose state no longer moves
// (a constant log-likelihood, as a planted run recovered exactly gives)
// to keep an R̂ of 1, not to be left out as a held parameter would.
func TestRestingChainsConverge(t *testing.T) {
	flat := make([]float64, 40)
	for i := range flat {
		flat[i] = -1234.5
	}
	d := chainDiagnostics(nil, []sampleTrace{{logLik: flat, dropout: flat}, {logLik: flat, dropout: flat}})
	if d.rhatWithin != 1 {
		t.Errorf("resting chains: R̂ within %v, want 1", d.rhatWithin)
	}
}
