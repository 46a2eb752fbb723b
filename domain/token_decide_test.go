package domain

import (
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain/secrets"
)

func tokenState(t *testing.T, events ...Event) TokenState {
	t.Helper()
	var st TokenState
	for i := range events {
		var err error
		if st, err = ApplyTokenEvent(st, &events[i]); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func TestDecideTokens(t *testing.T) {
	now := decideClock.Now()
	created := func(name, id string, expires time.Time) Event {
		return NewEvent(decideClock, TypeTokenCreated, TokenCreated{Name: name, Scope: ScopeRead, ID: id, Expires: expires.UnixMilli()})
	}
	revoked := func(name, id string) Event {
		return NewEvent(decideClock, TypeTokenRevoked, TokenRevoked{Name: name, ID: id})
	}
	active := tokenState(t, created("ci", "id1", now.Add(time.Hour)))
	expired := tokenState(t, created("ci", "id1", now))
	wasRevoked := tokenState(t, created("ci", "id1", now.Add(time.Hour)), revoked("ci", "id1"))
	// A revocation of an older token of the name leaves the latest active.
	olderRevoked := tokenState(t, created("ci", "id1", now.Add(time.Hour)), created("ci", "id2", now.Add(time.Hour)), revoked("ci", "id1"))
	next := TokenCreated{Name: "ci", Scope: ScopeTrade, ID: "id3", Expires: now.Add(time.Hour).UnixMilli()}
	cases := []struct {
		name              string
		decide            func() ([]Event, error)
		types, code, text string
	}{
		{"create new name", func() ([]Event, error) { return DecideTokenCreate(TokenState{}, next, decideClock) }, TypeTokenCreated, "", ""},
		{"create over active", func() ([]Event, error) { return DecideTokenCreate(active, next, decideClock) }, "", ECONFLICT, `a token named "ci" is active`},
		{"create over expired", func() ([]Event, error) { return DecideTokenCreate(expired, next, decideClock) }, TypeTokenCreated, "", ""},
		{"create over revoked", func() ([]Event, error) { return DecideTokenCreate(wasRevoked, next, decideClock) }, TypeTokenCreated, "", ""},
		{"create over older revoked", func() ([]Event, error) { return DecideTokenCreate(olderRevoked, next, decideClock) }, "", ECONFLICT, "is active"},
		{"create bad name", func() ([]Event, error) {
			return DecideTokenCreate(TokenState{}, TokenCreated{Name: "a b"}, decideClock)
		}, "", EINVALID, ""},
		{"revoke active", func() ([]Event, error) { return DecideTokenRevoke(active, "ci", decideClock) }, TypeTokenRevoked, "", ""},
		{"revoke revoked", func() ([]Event, error) { return DecideTokenRevoke(wasRevoked, "ci", decideClock) }, "", "", ""},
		{"revoke unknown", func() ([]Event, error) { return DecideTokenRevoke(active, "other", decideClock) }, "", ENOTFOUND, `no token named "other"`},
	}
	for _, tc := range cases {
		events, err := tc.decide()
		checkDecision(t, tc.name, events, err, tc.types, tc.code, tc.text)
	}
	events, _ := DecideTokenRevoke(olderRevoked, "ci", decideClock)
	var r TokenRevoked
	if err := events[0].Decode(&r); err != nil || r.ID != "id2" {
		t.Fatalf("revoked %+v (%v), want the latest token id2", r, err)
	}
}

func TestDecidePasswordSet(t *testing.T) {
	var st PasswordState
	for i, gen := range []int64{1, 3, 2} {
		e := NewEvent(decideClock, TypePasswordSet, PasswordSet{Hash: "h", Generation: gen})
		var err error
		if st, err = ApplyPasswordEvent(st, &e); err != nil {
			t.Fatal(err)
		}
		if i == 0 && st.Generation != 1 {
			t.Fatalf("generation=%d after the first PasswordSet", st.Generation)
		}
	}
	cases := []struct {
		name              string
		st                PasswordState
		hash              string
		onlyIfNone        bool
		types, code, text string
		generation        int64
	}{
		{"first", PasswordState{}, "h1", false, TypePasswordSet, "", "", 1},
		{"next after the highest", st, "h1", false, TypePasswordSet, "", "", 4},
		{"first only if none", PasswordState{}, "h1", true, TypePasswordSet, "", "", 1},
		{"only if none, one exists", st, "h1", true, "", "", "", 0},
		{"empty hash", st, "", false, "", EINVALID, "hash", 0},
	}
	for _, tc := range cases {
		events, err := DecidePasswordSet(tc.st, tc.hash, tc.onlyIfNone, decideClock)
		checkDecision(t, tc.name, events, err, tc.types, tc.code, tc.text)
		if len(events) == 1 {
			var d PasswordSet
			if err := events[0].Decode(&d); err != nil || d.Generation != tc.generation || d.Hash != tc.hash {
				t.Fatalf("%s: payload %+v (%v), want generation %d", tc.name, d, err, tc.generation)
			}
		}
	}
}

func TestCheckNewPassword(t *testing.T) {
	for _, tc := range []struct {
		pw   string
		code string
	}{{"", EINVALID}, {"short", EINVALID}, {"eight ch", ""}, {strings.Repeat("x", secrets.MaxLoginPasswordBytes), ""}, {strings.Repeat("x", secrets.MaxLoginPasswordBytes+1), EINVALID}} {
		if got := ErrorCode(CheckNewPassword(tc.pw)); got != tc.code {
			t.Fatalf("CheckNewPassword(%d bytes)=%q, want %q", len(tc.pw), got, tc.code)
		}
	}
}
