package gibbs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"testing"
)

// refCondCounts is Algorithm 1 of the paper written plainly: the observed
// columns that code l alone decides for a row with codes z, over columns
// whose codes are u[d][l], data x[d] and observed flags obs[d], and the ones
// among them. The paper's accumulator is 2·ones − all.
func refCondCounts(l int, z []bool, u [][]bool, x, obs []bool) (ones, all int64) {
	for d := range x {
		if !u[d][l] {
			continue
		}
		covered := false
		for k := range z {
			if k != l && z[k] && u[d][k] {
				covered = true
			}
		}
		if covered || !obs[d] {
			continue
		}
		all++
		if x[d] {
			ones++
		}
	}
	return ones, all
}

// refCondSum is the paper's accumulator, 2·ones − all of refCondCounts.
func refCondSum(l int, z []bool, u [][]bool, x, obs []bool) int64 {
	ones, all := refCondCounts(l, z, u, x, obs)
	return 2*ones - all
}

// refMismatch counts observed columns where x differs from OR_l z_l ∧ u_dl,
// and those that OR covers.
func refMismatch(z []bool, u [][]bool, x, obs []bool) (miss, covered int64) {
	for d := range x {
		pred := false
		for k := range z {
			pred = pred || z[k] && u[d][k]
		}
		if obs[d] && pred != x[d] {
			miss++
		}
		if obs[d] && pred {
			covered++
		}
	}
	return miss, covered
}

// refRowCounts is refMismatch packed as the kernels return it.
func refRowCounts(z []bool, u [][]bool, x, obs []bool) uint64 {
	return packCounts(refMismatch(z, u, x, obs))
}

// packBits packs b into words, bit j of word j/64.
func packBits(b []bool) []uint64 {
	w := make([]uint64, (len(b)+63)/64)
	for j, v := range b {
		if v {
			w[j/64] |= 1 << uint(j%64)
		}
	}
	return w
}

// interleave packs u (D × L) into the interleaved layout of condSums.
func interleave(u [][]bool, L int) []uint64 {
	w := make([]uint64, (len(u)+63)/64*L)
	for d, row := range u {
		for l, v := range row {
			if v {
				w[d/64*L+l] |= 1 << uint(d%64)
			}
		}
	}
	return w
}

func TestCondSumsMatchesAlgorithm1(t *testing.T) {
	t.Parallel()
	sizes := []int{1, 2, 63, 64, 65, 127, 128, 129, 191, 192, 193, 1000}
	for _, L := range []int{1, 2, 3, 5, 10} {
		for _, masked := range []bool{false, true} {
			for _, D := range sizes {
				t.Run(fmt.Sprintf("L%d/D%d/masked=%v", L, D, masked), func(t *testing.T) {
					r := &testRNG{s: uint64(L*100000 + D*2 + map[bool]int{false: 0, true: 1}[masked])}
					for trial := range 20 {
						density := []float64{0.05, 0.3, 0.5, 0.9}[trial%4]
						u := make([][]bool, D)
						for d := range u {
							u[d] = make([]bool, L)
							for l := range u[d] {
								u[d][l] = r.bern(density)
							}
						}
						z := make([]bool, L)
						var active uint64
						for l := range z {
							z[l] = r.bern(0.5)
							if z[l] {
								active |= 1 << uint(l)
							}
						}
						x, obs := make([]bool, D), make([]bool, D)
						for d := range x {
							x[d] = r.bern(0.4)
							obs[d] = !masked || r.bern(0.7)
						}
						// Guard words after every slice catch reads past the row.
						guard := func(w []uint64) []uint64 { return append(w, ^uint64(0), ^uint64(0))[:len(w)] }
						codes := guard(interleave(u, L))
						xw, ow := guard(packBits(x)), guard(packBits(obs))
						if !masked {
							ow = make([]uint64, len(xw), len(xw)+2)
							for i := range ow {
								ow[i] = ^uint64(0) // padding bits set, as in Sampler.ones
							}
							ow = guard(ow)
						}
						// The codes l ≥ from, as after a flip of code from−1, and a
						// random subset of them, as when some codes are dead.
						for k := range 2 * L {
							from, codeSet := k/2, codesFrom(k/2, L)
							if k%2 == 1 {
								codeSet &= r.next()
							}
							var acc [MaxL]uint64
							for i := range acc {
								acc[i] = 7 // sentinel: codes not wanted must stay untouched
							}
							miss := condSums(&acc, active, codeSet, L, codes, xw, ow)
							if want := refRowCounts(z, u, x, obs); miss != want {
								t.Fatalf("trial %d from %d: mismatch and covered %#x, want %#x", trial, from, miss, want)
							}
							// condSumsMode(…, false) leaves out popcount(S & obs), which is
							// what the full sums give for a row of zeros.
							var accX [MaxL]uint64
							for i := range accX {
								accX[i] = 7
							}
							if missX := condSumsMode(&accX, active, codeSet, L, codes, xw, ow, false); missX != miss {
								t.Fatalf("trial %d from %d: condSumsMode(…, false) mismatch %d, condSums %d", trial, from, missX, miss)
							}
							condSums(&accX, active, codeSet, L, codes, make([]uint64, len(xw)), ow)
							if accX != acc {
								t.Fatalf("trial %d codes %b: condSumsMode(…, false) plus the sums of zeros %v, condSums %v", trial, codeSet, accX[:L], acc[:L])
							}
							for l := range MaxL {
								want := uint64(7)
								if codeSet>>uint(l)&1 != 0 {
									want += packCounts(refCondCounts(l, z, u, x, obs))
								}
								if acc[l] != want {
									t.Fatalf("trial %d codes %b: acc[%d] = %d, want %d", trial, codeSet, l, acc[l], want)
								}
							}
						}
					}
				})
			}
		}
	}
}

// codesFrom returns the set of codes from … L−1.
func codesFrom(from, L int) uint64 {
	return (1<<uint(L) - 1) &^ (1<<uint(from) - 1)
}

// TestCondSums2MatchesGeneral checks the unrolled kernel of codes 0 and 1
// against the general loop (the fast path switched off), at L = 2 and at
// L = 3 with code 2 neither active nor wanted.
func TestCondSums2MatchesGeneral(t *testing.T) {
	t.Parallel()
	r := &testRNG{s: 99}
	for _, L := range []int{2, 3} {
		for _, words := range []int{0, 1, 2, 3, 17} {
			codes := make([]uint64, L*words)
			x, obs := make([]uint64, words), make([]uint64, words)
			for trial := range 50 {
				for i := range codes {
					codes[i] = r.next() & r.next()
				}
				for i := range x {
					x[i], obs[i] = r.next(), r.next()|r.next()
				}
				active := uint64(trial % 4)
				for want := range uint64(4) {
					for _, full := range []bool{true, false} {
						var a, b [MaxL]uint64
						ma := condSums2(&a, active, want, L, codes, x, obs, active&1-1, active>>1&1-1, full)
						mb := condSumsL(&b, active, want, L, codes, x, obs, full)
						if a != b || ma != mb {
							t.Fatalf("L %d words %d active %b codes %b full %v: unrolled %v/%d, general %v/%d", L, words, active, want, full, a[:2], ma, b[:2], mb)
						}
					}
				}
			}
		}
	}
}

// TestCondSums3MatchesGeneral checks the unrolled L = 3 kernel against
// condSumsL for every set of active and wanted codes.
func TestCondSums3MatchesGeneral(t *testing.T) {
	t.Parallel()
	r := &testRNG{s: 98}
	for _, words := range []int{0, 1, 2, 3, 17} {
		codes := make([]uint64, 3*words)
		x, obs := make([]uint64, words), make([]uint64, words)
		for trial := range 40 {
			for i := range codes {
				codes[i] = r.next() & r.next()
			}
			for i := range x {
				x[i], obs[i] = r.next(), r.next()|r.next()
			}
			active := uint64(trial % 8)
			for want := range uint64(8) {
				for _, full := range []bool{true, false} {
					var a, b [MaxL]uint64
					ma := condSums3(&a, active, want, codes, x, obs, full)
					mb := condSumsL(&b, active, want, 3, codes, x, obs, full)
					if a != b || ma != mb {
						t.Fatalf("words %d active %b codes %b full %v: unrolled %v/%d, general %v/%d", words, active, want, full, a[:3], ma, b[:3], mb)
					}
				}
			}
		}
	}
}

// FuzzCondSums compares the kernel with Algorithm 1 on fuzzed rows.
func FuzzCondSums(f *testing.F) {
	f.Add(uint64(1), uint8(2), uint16(65), uint64(3))
	f.Add(uint64(7), uint8(5), uint16(1), uint64(0))
	f.Add(uint64(9), uint8(1), uint16(128), uint64(1))
	f.Fuzz(func(t *testing.T, seed uint64, l8 uint8, d16 uint16, active uint64) {
		L, D := int(l8%12)+1, int(d16%300)+1
		active &= 1<<uint(L) - 1
		r := &testRNG{s: seed}
		u := make([][]bool, D)
		x, obs := make([]bool, D), make([]bool, D)
		for d := range D {
			u[d] = make([]bool, L)
			for l := range L {
				u[d][l] = r.bern(0.3)
			}
			x[d], obs[d] = r.bern(0.5), r.bern(0.8)
		}
		z := make([]bool, L)
		for l := range L {
			z[l] = active>>uint(l)&1 != 0
		}
		from := int(seed % uint64(L))
		var acc [MaxL]uint64
		miss := condSums(&acc, active, codesFrom(from, L), L, interleave(u, L), packBits(x), packBits(obs))
		if want := refRowCounts(z, u, x, obs); miss != want {
			t.Fatalf("mismatch and covered %#x, want %#x", miss, want)
		}
		for l := from; l < L; l++ {
			if want := packCounts(refCondCounts(l, z, u, x, obs)); acc[l] != want {
				t.Fatalf("acc[%d] = %d, want %d", l, acc[l], want)
			}
		}
	})
}

// TestAcceptMatchesExp checks the shortcut of accept against u < e^c on the
// values of u where it matters.
func TestAcceptMatchesExp(t *testing.T) {
	t.Parallel()
	us := []float64{0, 0x1p-53, 0x3p-53, 0x1p-30, 0.3, 1 - 0x1p-53} // multiples of 2⁻⁵³, as uniformAt returns
	for _, c := range []float64{-1e6, -746, -745, -700, -40, -37.6, -37.5, -37.4, -36, -1, -1e-9} {
		for _, u := range us {
			if got, want := accept(c, u), u < math.Exp(c); got != want {
				t.Errorf("accept(%v, %v) = %v, want %v", c, u, got, want)
			}
		}
	}
	// The bound 2^(⌈c·log₂e⌉+1) must never refuse a u below e^c: try u just
	// below, at and above e^c and the bound, for c at and near multiples of ln 2
	// (where ⌈c·log₂e⌉ is most sensitive to rounding) and at random.
	r := &testRNG{s: 5}
	for i := range 200000 {
		var c float64
		if i%2 == 0 {
			c = -float64(r.intn(60)) * math.Ln2
			c = math.Nextafter(c, c+float64(r.intn(3))-1)
		} else {
			c = -40 * r.float()
		}
		if c >= 0 {
			continue
		}
		e := math.Exp(c)
		k := math.Ceil(c*math.Log2E) + 1
		for _, v := range []float64{e, 2 * e, math.Ldexp(1, int(k)), r.float()} {
			u := math.Floor(v*0x1p53) * 0x1p-53 // a multiple of 2⁻⁵³, as uniformAt returns
			for _, u := range []float64{u - 0x1p-53, u, u + 0x1p-53} {
				if u < 0 || u >= 1 {
					continue
				}
				if got, want := accept(c, u), u < e; got != want {
					t.Fatalf("accept(%v, %v) = %v, want %v", c, u, got, want)
				}
			}
		}
	}
}

// TestKernels: the portable kernel is always there and last; Config.Kernel
// selects each kernel for its own Sampler ("" the first), and an unknown
// name is refused with the list of kernels.
func TestKernels(t *testing.T) {
	ks := Kernels()
	if len(ks) == 0 || ks[len(ks)-1] != goKernel {
		t.Fatalf("Kernels() = %v, want the Go kernel last", ks)
	}
	data, err := NewData(randomMatrix(&testRNG{s: 1}, 70, 50, 0.2, 0), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.L, cfg.BurnIn, cfg.Samples, cfg.StartSweeps = 3, 1, 1, 1
	for _, k := range append([]string{""}, ks...) {
		cfg.Kernel = k
		s, err := NewSampler(context.Background(), data, cfg)
		if err != nil {
			t.Fatal(err)
		}
		want := k
		if k == "" {
			want = ks[0]
		}
		if s.Kernel() != want || s.vector != (want != goKernel) || (s.vector && s.kernel.name != want) {
			t.Errorf("Kernel %q: sampler's Kernel() = %s, vector %v, variant %q; want %s", k, s.Kernel(), s.vector, s.kernel.name, want)
		}
	}
	cfg.Kernel = "avx9000"
	if _, err := NewSampler(context.Background(), data, cfg); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), goKernel) {
		t.Errorf("unknown kernel: error %v, want ErrConfig listing the kernels", err)
	}
}

// TestCondSumsLiftMatchesCounts checks condSumsLift against condSums and a
// direct count of each code's ones by level.
func TestCondSumsLiftMatchesCounts(t *testing.T) {
	t.Parallel()
	r := &testRNG{s: 43}
	for _, L := range []int{1, 2, 5} {
		const words = 5
		codes := make([]uint64, words*L)
		for i := range codes {
			codes[i] = r.next() & r.next()
		}
		x, obs := make([]uint64, words), make([]uint64, words)
		for w := range words {
			x[w], obs[w] = r.next(), r.next()|r.next()
		}
		level := make([]uint8, 64*words)
		lift := make([][]uint64, 3)
		for j := range lift {
			lift[j] = make([]uint64, words)
		}
		for c := range level {
			level[c] = uint8(r.next() % 8)
			for j := range 3 {
				if level[c]>>uint(j)&1 != 0 {
					lift[j][c/64] |= 1 << uint(c%64)
				}
			}
		}
		active := r.next() & (1<<uint(L) - 1)
		want := uint64(1)<<uint(L) - 1
		var acc, lev, ref [MaxL]uint64
		miss := condSumsLift(&acc, &lev, active, want, L, codes, x, obs, lift)
		if refMiss := condSums(&ref, active, want, L, codes, x, obs); refMiss != miss || ref != acc {
			t.Fatalf("L%d: counts %v/%#x, condSums %v/%#x", L, acc[:L], miss, ref[:L], refMiss)
		}
		for l := range L {
			var sum uint64
			for c := range level {
				w, b := c/64, uint(c%64)
				var cov1, cov2 uint64
				for a := active &^ (1 << uint(l)); a != 0; a &= a - 1 {
					u := codes[w*L+bits.TrailingZeros64(a)]
					cov2 |= cov1 & u
					cov1 |= u
				}
				_ = cov2
				if codes[w*L+l]>>b&1 != 0 && (cov1>>b)&1 == 0 && obs[w]>>b&1 != 0 && x[w]>>b&1 != 0 {
					sum += uint64(level[c])
				}
			}
			if lev[l] != sum {
				t.Errorf("L%d code %d: level sum %d, direct count %d", L, l, lev[l], sum)
			}
		}
	}
}
