package projections

import (
	"sync"

	"github.com/tradeledger/tradeledger/domain"
)

// Password is the read model of the login password: the current argon2id
// hash (PasswordSet in the credentials stream), its generation, and counts
// of logins (LoginSucceeded, LoginFailed in the auth stream). It is safe for
// concurrent use.
type Password struct {
	mu         sync.RWMutex
	hash       string
	generation int64
	succeeded  int64
	failed     int64
}

// NewPassword returns an empty Password projection: no password registered,
// generation 0.
func NewPassword() *Password { return &Password{} }

// Name implements Projection.
func (p *Password) Name() string { return "password" }

// Apply implements Projection. A PasswordSet replaces the hash and
// generation; a generation that does not increase is refused with EINVALID
// (and ignored), since accepting it could revive revoked tokens.
func (p *Password) Apply(e *domain.Event) error {
	switch e.Type {
	case domain.TypePasswordSet:
		var d domain.PasswordSet
		if err := e.Decode(&d); err != nil {
			return err
		}
		if d.Hash == "" {
			return domain.Errorf(domain.EINVALID, "event %s/%d: PasswordSet without a hash", e.Stream, e.Version)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if d.Generation <= p.generation {
			return domain.Errorf(domain.EINVALID, "event %s/%d: PasswordSet generation %d does not follow %d",
				e.Stream, e.Version, d.Generation, p.generation)
		}
		p.hash, p.generation = d.Hash, d.Generation
	case domain.TypeLoginSucceeded:
		p.mu.Lock()
		p.succeeded++
		p.mu.Unlock()
	case domain.TypeLoginFailed:
		p.mu.Lock()
		p.failed++
		p.mu.Unlock()
	}
	return nil
}

// Current returns the current hash ("" when no password is registered) and
// its generation, read together.
func (p *Password) Current() (hash string, generation int64) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.hash, p.generation
}

// Generation returns the current password generation (0 before the first
// password). Tokens carry it; a change revokes older tokens.
func (p *Password) Generation() int64 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.generation
}

// IsRegistered reports whether a password has been set.
func (p *Password) IsRegistered() bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.hash != ""
}

// Logins returns how many logins succeeded and failed over the whole log.
func (p *Password) Logins() (succeeded, failed int64) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.succeeded, p.failed
}
