package domain

import "time"

// TokenRecord is what the log knows of a scoped API token (never the
// token itself).
type TokenRecord struct {
	Name    string
	Scope   Scope
	ID      string
	Expires time.Time
	Revoked bool
}

// TokenState is what token commands decide against: the latest token of
// each name.
type TokenState struct {
	Latest map[string]TokenRecord
}

// ApplyTokenEvent folds one tokens-stream event into st (st.Latest is
// created when nil; a payload that does not decode is EINVALID).
func ApplyTokenEvent(st TokenState, e *Event) (TokenState, error) {
	if st.Latest == nil {
		st.Latest = map[string]TokenRecord{}
	}
	switch e.Type {
	case TypeTokenCreated:
		var c TokenCreated
		if err := e.Decode(&c); err != nil {
			return st, err
		}
		st.Latest[c.Name] = TokenRecord{Name: c.Name, Scope: c.Scope, ID: c.ID, Expires: time.UnixMilli(c.Expires).UTC()}
	case TypeTokenRevoked:
		var r TokenRevoked
		if err := e.Decode(&r); err != nil {
			return st, err
		}
		if t, ok := st.Latest[r.Name]; ok && t.ID == r.ID {
			t.Revoked = true
			st.Latest[r.Name] = t
		}
	}
	return st, nil
}

// DecideTokenCreate returns the TokenCreated of a token issued as c (its
// id and expiry; the token itself is not recorded): EINVALID for a bad
// name, ECONFLICT while a token of that name is active at the clock's now.
func DecideTokenCreate(st TokenState, c TokenCreated, clock Clock) ([]Event, error) {
	if err := CheckTokenName(c.Name); err != nil {
		return nil, err
	}
	if t, ok := st.Latest[c.Name]; ok && !t.Revoked && clock.Now().Before(t.Expires) {
		return nil, Errorf(ECONFLICT, "a token named %q is active; revoke it first or choose another name", c.Name)
	}
	return []Event{NewEvent(clock, TypeTokenCreated, c)}, nil
}

// DecideTokenRevoke returns the TokenRevoked of the latest token named
// name, or no events when it is revoked already: ENOTFOUND when there is
// none.
func DecideTokenRevoke(st TokenState, name string, clock Clock) ([]Event, error) {
	if err := CheckTokenName(name); err != nil {
		return nil, err
	}
	t, ok := st.Latest[name]
	if !ok {
		return nil, Errorf(ENOTFOUND, "no token named %q", name)
	}
	if t.Revoked {
		return nil, nil
	}
	return []Event{NewEvent(clock, TypeTokenRevoked, TokenRevoked{Name: t.Name, ID: t.ID})}, nil
}
