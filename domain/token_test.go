package domain

import (
	"testing"
	"time"
)

func TestScopesAndTTL(t *testing.T) {
	for _, c := range []struct {
		have, need Scope
		ok         bool
	}{
		{ScopeRead, ScopeRead, true}, {ScopeRead, ScopeTrade, false}, {ScopeRead, ScopeAdmin, false},
		{ScopeTrade, ScopeRead, true}, {ScopeTrade, ScopeTrade, true}, {ScopeTrade, ScopeAdmin, false},
		{ScopeAdmin, ScopeAdmin, true}, {Scope("root"), ScopeRead, false}, {Scope(""), ScopeRead, false},
	} {
		if got := c.have.Allows(c.need); got != c.ok {
			t.Errorf("%q.Allows(%q) = %v", c.have, c.need, got)
		}
	}
	for in, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "720h": 720 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := ParseTTL(in); err != nil || got != want {
			t.Errorf("ParseTTL(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "0d", "-1d", "d", "1y", "0s", "99999d"} {
		if _, err := ParseTTL(bad); ErrorCode(err) != EINVALID {
			t.Errorf("ParseTTL(%q) err = %v, want EINVALID", bad, err)
		}
	}
	if _, err := ParseScope("write"); ErrorCode(err) != EINVALID {
		t.Errorf("ParseScope(write) = %v", err)
	}
}
