package projections

import (
	"sort"
	"sync"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// TokenInfo is what is known of a scoped API token (never the token).
type TokenInfo struct {
	Name    string
	Scope   domain.Scope
	ID      string // the JWT's jti
	Created time.Time
	Expires time.Time
	Revoked bool
}

// Tokens is the read model of scoped API tokens, fed by the tokens stream.
type Tokens struct {
	mu     sync.RWMutex
	byID   map[string]*TokenInfo
	byName map[string]*TokenInfo // the latest token of each name
}

// NewTokens returns an empty Tokens.
func NewTokens() *Tokens {
	return &Tokens{byID: map[string]*TokenInfo{}, byName: map[string]*TokenInfo{}}
}

// Name implements Projection.
func (t *Tokens) Name() string { return "tokens" }

// Apply implements Projection: TokenCreated adds a token, TokenRevoked
// marks it revoked. A payload that does not decode is EINVALID and changes
// nothing.
func (t *Tokens) Apply(e *domain.Event) error {
	switch e.Type {
	case domain.TypeTokenCreated:
		var c domain.TokenCreated
		if err := e.Decode(&c); err != nil {
			return err
		}
		info := &TokenInfo{Name: c.Name, Scope: c.Scope, ID: c.ID, Created: time.UnixMilli(e.Time).UTC(), Expires: time.UnixMilli(c.Expires).UTC()}
		t.mu.Lock()
		t.byID[c.ID] = info
		t.byName[c.Name] = info
		t.mu.Unlock()
	case domain.TypeTokenRevoked:
		var rv domain.TokenRevoked
		if err := e.Decode(&rv); err != nil {
			return err
		}
		t.mu.Lock()
		if info := t.byID[rv.ID]; info != nil {
			info.Revoked = true
		}
		t.mu.Unlock()
	}
	return nil
}

// Active returns the scope of the token with id when it exists, is not
// revoked and has not expired at now.
func (t *Tokens) Active(id string, now time.Time) (domain.Scope, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	info := t.byID[id]
	if info == nil || info.Revoked || !now.Before(info.Expires) {
		return "", false
	}
	return info.Scope, true
}

// Latest returns the newest token named name.
func (t *Tokens) Latest(name string) (TokenInfo, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	info := t.byName[name]
	if info == nil {
		return TokenInfo{}, false
	}
	return *info, true
}

// List returns every token ever created, by creation time.
func (t *Tokens) List() []TokenInfo {
	t.mu.RLock()
	out := make([]TokenInfo, 0, len(t.byID))
	for _, info := range t.byID {
		out = append(out, *info)
	}
	t.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].Name < out[j].Name
	})
	return out
}
