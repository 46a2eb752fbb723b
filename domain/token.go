package domain

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Scope is what an API token may do. Each scope includes the ones before
// it: read < trade < admin.
type Scope string

// Scopes.
const (
	// ScopeRead reads everything that is not a secret and changes nothing.
	ScopeRead Scope = "read"
	// ScopeTrade also places and cancels orders.
	ScopeTrade Scope = "trade"
	// ScopeAdmin may do everything, as a password login does.
	ScopeAdmin Scope = "admin"
)

func (s Scope) rank() int {
	switch s {
	case ScopeRead:
		return 1
	case ScopeTrade:
		return 2
	case ScopeAdmin:
		return 3
	}
	return 0
}

// Allows reports whether a token of scope s may do what needs scope need.
// An unknown scope allows nothing.
func (s Scope) Allows(need Scope) bool { return s.rank() > 0 && s.rank() >= need.rank() }

// ParseScope returns the scope named s, or an EINVALID error.
func ParseScope(s string) (Scope, error) {
	if sc := Scope(s); sc.rank() > 0 {
		return sc, nil
	}
	return "", Errorf(EINVALID, "scope %q: use read, trade or admin", s)
}

var tokenName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// CheckTokenName returns an EINVALID error unless name is 1–64 letters,
// digits, '.', '_' or '-' (starting with a letter or digit).
func CheckTokenName(name string) error {
	if !tokenName.MatchString(name) {
		return Errorf(EINVALID, "token name %q: use 1-64 letters, digits, '.', '_' or '-'", name)
	}
	return nil
}

// ParseTTL reads a token lifetime: a Go duration ("720h", "90m") or a
// whole number of days ("30d"). It must be positive.
func ParseTTL(s string) (time.Duration, error) {
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n > 100*365 {
			return 0, Errorf(EINVALID, "ttl %q: a number of days (30d) or a duration (720h)", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, Errorf(EINVALID, "ttl %q: a number of days (30d) or a duration (720h)", s)
		}
	}
	if d <= 0 {
		return 0, Errorf(EINVALID, "ttl %q must be positive", s)
	}
	return d, nil
}
