package projections

import (
	"strconv"
	"strings"
	"testing"
)

// TestOrderIDOf: the digits-only path reads what strconv.ParseInt reads.
func TestOrderIDOf(t *testing.T) {
	for _, s := range []string{"order-0", "order-7", "order-007", "order-123456789012345678", "order-1234567890123456789",
		"order-9223372036854775807", "order-9223372036854775808", "order--1", "order-+1", "order-", "order-1x", "order-x",
		"orders-1", "oco-1", "", "order-00000000000000000001"} {
		id, ok := orderIDOf(s)
		d, isOrder := strings.CutPrefix(s, "order-")
		want, err := strconv.ParseInt(d, 10, 64)
		if wantOK := isOrder && err == nil; ok != wantOK || (ok && id != want) {
			t.Errorf("orderIDOf(%q) = %d, %v; want %d, %v", s, id, ok, want, wantOK)
		}
	}
}
