package inflate

import (
	"math/rand/v2"
	"testing"
)

// TestBuildTable builds tables of random complete codes, of every shape the
// primary and sub tables take, and checks that every code's replicas
// decode to its symbol with its length, that every other entry of an
// incomplete code is invalid, and that bad codes are refused.
func TestBuildTable(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	info := make([]uint32, 320)
	for s := range info {
		info[s] = entry(kindLiteral, 0, uint32(s))
	}
	tests := []struct {
		name       string
		lens       []uint8
		pb         uint
		allowEmpty bool
		ok         bool
	}{
		{"single code of length 1", []uint8{0, 1, 0}, 8, true, true},
		{"no code, allowed", make([]uint8, 30), 8, true, true},
		{"no code, refused", make([]uint8, 30), 8, false, false},
		{"over-subscribed", []uint8{1, 1, 1}, 7, false, false},
		{"incomplete", []uint8{1, 2, 0}, 7, false, false},
		{"two codes of length 15", append(make([]uint8, 100), 15, 15), 10, false, false},
	}
	for k := range 40 {
		n := []int{2, 19, 30, 286, 288}[k%5]
		pb := []uint{7, 8, 10}[k%3]
		used := 2 + r.IntN(n-1)
		tests = append(tests, struct {
			name       string
			lens       []uint8
			pb         uint
			allowEmpty bool
			ok         bool
		}{"random complete", randomCode(r, n, used), pb, false, true})
	}
	for _, tt := range tests {
		tab := make([]uint32, 1<<tt.pb+288<<(maxCodeLen-tt.pb))
		for i := range tab {
			tab[i] = 0xdeadbeef // garbage, as a reused Decoder holds
		}
		sorted := make([]uint16, len(tt.lens))
		if ok := buildTable(tab, tt.lens, info, tt.pb, tt.allowEmpty, sorted); ok != tt.ok {
			t.Fatalf("%s %v: built %v, want %v", tt.name, tt.lens, ok, tt.ok)
		}
		if !tt.ok {
			continue
		}
		if msg := checkTable(tab, tt.lens, info, tt.pb); msg != "" {
			t.Fatalf("%s (%d symbols, pb %d): %s", tt.name, len(tt.lens), tt.pb, msg)
		}
	}
}

// randomCode returns the lengths of a random complete prefix code of used
// of n symbols, none longer than 15: leaves of a binary tree grown by
// splitting random leaves, given to random symbols.
func randomCode(r *rand.Rand, n, used int) []uint8 {
	depths := []uint8{0}
	for len(depths) < used {
		i := r.IntN(len(depths))
		if depths[i] == maxCodeLen {
			continue
		}
		depths[i]++
		depths = append(depths, depths[i])
	}
	lens := make([]uint8, n)
	for i, s := range r.Perm(n)[:used] {
		lens[s] = depths[i]
	}
	return lens
}

// checkTable decodes every code of lens through tab by RFC 1951's
// canonical assignment and reports the first entry that is wrong, and
// whether entries no code reaches are invalid.
func checkTable(tab []uint32, lens []uint8, info []uint32, pb uint) string {
	var count [maxCodeLen + 1]int
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	var next [maxCodeLen + 2]int
	for l := 1; l <= maxCodeLen; l++ {
		next[l+1] = (next[l] + count[l]) << 1
	}
	primary := 1 << pb
	reached := make([]bool, len(tab))
	for s, l := range lens {
		if l == 0 {
			continue
		}
		code := next[l]
		next[l]++
		rev := reverse(code, int(l))
		if int(l) <= int(pb) {
			for i := rev; i < primary; i += 1 << l {
				if tab[i] != info[s]|uint32(l) {
					return "symbol's primary entry is wrong"
				}
				reached[i] = true
			}
			continue
		}
		p := rev & (primary - 1)
		e := tab[p]
		if e&kindMask != kindSub || e&bitsMask != uint32(pb) {
			return "long code's primary entry is not a subtable pointer"
		}
		reached[p] = true
		sub, sb := int(e>>16), int(e>>8&0xff)
		for j := rev >> pb; j < 1<<sb; j += 1 << (int(l) - int(pb)) {
			if tab[sub+j] != info[s]|uint32(int(l)-int(pb)) {
				return "symbol's subtable entry is wrong"
			}
			reached[sub+j] = true
		}
	}
	for i := range primary {
		if !reached[i] && tab[i] != kindInvalid {
			return "an entry no code reaches is not invalid"
		}
	}
	return ""
}
