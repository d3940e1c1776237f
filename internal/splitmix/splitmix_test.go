package splitmix

import "testing"

// TestReference compares At with the first outputs of the reference
// implementation (splitmix64.c of Vigna's xoshiro page, whose next()
// advances the state by Golden and mixes it), from seeds 0 and
// 1234567, printed by that C code.
func TestReference(t *testing.T) {
	for _, tc := range []struct {
		seed uint64
		want []uint64
	}{
		{0, []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f, 0xf88bb8a8724c81ec, 0x1b39896a51a8749b}},
		{1234567, []uint64{0x599ed017fb08fc85, 0x2c73f08458540fa5, 0x883ebce5a3f27c77, 0x3fbef740e9177b3f, 0xe3b8346708cb5ecd}},
	} {
		for i, want := range tc.want {
			if got := At(tc.seed, uint64(i)); got != want {
				t.Errorf("At(%d, %d) = %#x, want %#x", tc.seed, i, got, want)
			}
		}
	}
}

// TestMixBijective: undoing each step of Mix (xor-shifts and products with
// odd constants are invertible) gives back its input, over a spread of
// inputs; a changed constant or shift breaks it.
func TestMixBijective(t *testing.T) {
	unshift := func(z uint64, s uint) uint64 {
		x := z
		for range 64 / s {
			x = z ^ x>>s
		}
		return x
	}
	inverse := func(m uint64) uint64 { // m·inverse ≡ 1 mod 2⁶⁴ by Newton's iteration
		x := m
		for range 6 {
			x *= 2 - m*x
		}
		return x
	}
	for _, z := range []uint64{0, 1, 2, Golden, 1<<63 | 1, ^uint64(0), 0x0123456789abcdef} {
		y := unshift(Mix(z), 31)
		y = unshift(y*inverse(0x94d049bb133111eb), 27)
		y = unshift(y*inverse(0xbf58476d1ce4e5b9), 30)
		if y != z {
			t.Errorf("Mix(%#x) = %#x does not invert to its input (got %#x)", z, Mix(z), y)
		}
	}
}
