package lookup3

import "testing"

func TestSum(t *testing.T) {
	t.Parallel()
	// Reference values from Bob Jenkins' lookup3.c driver5 (initval 0).
	for _, tc := range []struct {
		in   string
		want uint32
	}{{"", 0xdeadbeef}, {"Four score and seven years ago", 0x17770551}} {
		if got := Sum([]byte(tc.in)); got != tc.want {
			t.Errorf("Sum(%q) = %#x, want %#x", tc.in, got, tc.want)
		}
	}
}
