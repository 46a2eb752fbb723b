package engine

import (
	"strconv"
	"testing"
)

// TestParseDigits: what parseDigits reads, strconv.ParseInt reads the same.
func TestParseDigits(t *testing.T) {
	for _, s := range []string{"0", "7", "007", "123456789012345678", "1234567890123456789", "9223372036854775807",
		"-1", "+1", "", "1x", "x", " 1", "00000000000000000001"} {
		id, ok := parseDigits(s)
		want, err := strconv.ParseInt(s, 10, 64)
		if ok && (err != nil || id != want) {
			t.Errorf("parseDigits(%q) = %d; strconv.ParseInt %d, %v", s, id, want, err)
		}
		if !ok && len(s) > 0 && len(s) <= 18 && err == nil && s[0] != '+' && s[0] != '-' {
			t.Errorf("parseDigits(%q) left to strconv.ParseInt", s)
		}
	}
}
