package domain

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
)

func TestDecimalAppendTrimmed(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{"0", "0"},
		{"3", "3"},
		{"-3", "-3"},
		{"12.5", "12.5"},
		{"12.50000000", "12.5"},
		{"-0.00012", "-0.00012"},
		{"0.00000001", "0.00000001"},
		{"1000.10000001", "1000.10000001"},
		{"92233720368.54775807", "92233720368.54775807"},
		{"-92233720368.54775807", "-92233720368.54775807"},
	} {
		if got := string(MustDecimal(c.in).AppendTrimmed([]byte("x"))); got != "x"+c.want {
			t.Errorf("AppendTrimmed(%s) = %q, want %q", c.in, got, "x"+c.want)
		}
	}
}

// AppendTrimmed is Append with the trailing zeros (and a bare point) cut,
// for any value; and Number marshals with it.
func TestDecimalAppendTrimmedMatchesAppend(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 100000; i++ {
		d := NewDecimal(rng.Int63n(1<<uint(rng.Intn(63))), -8)
		if rng.Intn(2) == 0 {
			d = d.Neg()
		}
		full := string(d.Append(nil))
		want := strings.TrimSuffix(strings.TrimRight(full, "0"), ".")
		if got := string(d.AppendTrimmed(nil)); got != want {
			t.Fatalf("AppendTrimmed(%s) = %q, want %q", full, got, want)
		}
		b, _ := json.Marshal(Number(d))
		if string(b) != want {
			t.Fatalf("Number(%s) marshals to %s, want %s", full, b, want)
		}
	}
}
