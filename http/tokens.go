package http

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
)

// Scoped API tokens (tradeledger token create): JWTs signed like a login's
// token, with the claims sub "token:NAME", jti (the id the TokenCreated
// event records; the token itself is never stored), exp and scope. Every
// request checks the id against Authenticator.Grants, so `token revoke`
// takes effect at once, and the scope against the route (scopeAllows).

// TokenSubjectPrefix starts the subject of scoped tokens, so that the
// events their requests cause name the token as actor.
const TokenSubjectPrefix = "token:"

// Grants, set on an Authenticator, says whether the scoped token with id is
// active at now (created, not revoked, not expired) and its scope.
type Grants func(id string, now time.Time) (domain.Scope, bool)

// IssueScoped signs a token named name with scope, valid for ttl from now,
// and returns it with its id (the jti to record in TokenCreated) and
// expiry. The caller shows the token once and stores only the id.
func (a *Authenticator) IssueScoped(name string, scope domain.Scope, ttl time.Duration) (token, id string, expires time.Time, err error) {
	if len(a.Secret) < MinSecretBytes {
		return "", "", time.Time{}, domain.Errorf(domain.EUNAVAILABLE, "token secret is not configured")
	}
	if _, err := domain.ParseScope(string(scope)); err != nil {
		return "", "", time.Time{}, err
	}
	var jti [16]byte
	if _, err := rand.Read(jti[:]); err != nil {
		return "", "", time.Time{}, err
	}
	now := a.Clock.Now()
	id, expires = hex.EncodeToString(jti[:]), now.Add(ttl)
	claims := tokenClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   TokenSubjectPrefix + name,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(expires),
			ID:        id,
		},
		Scope: scope,
	}
	token, err = jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(a.Secret)
	return token, id, expires, err
}

// checkGrant finishes VerifyScoped for a token whose signature and times
// were checked: a login's token must be of the current password
// generation; a scoped one must be active in Grants with the same scope
// (asked again after CatchUp the first time it is not).
func (a *Authenticator) checkGrant(v verifiedToken, now time.Time) (string, domain.Scope, error) {
	if v.scope == "" {
		if v.generation != a.generation() {
			return "", "", domain.Errorf(domain.EUNAUTHORIZED, "token was revoked by a password change")
		}
		return v.subject, domain.ScopeAdmin, nil
	}
	if a.Grants == nil {
		return "", "", domain.Errorf(domain.EUNAUTHORIZED, "scoped tokens are not accepted here")
	}
	scope, ok := a.Grants(v.id, now)
	if !ok && a.catchUpFor(v.id) {
		scope, ok = a.Grants(v.id, now)
	}
	if !ok || scope != v.scope {
		return "", "", domain.Errorf(domain.EUNAUTHORIZED, "token was revoked or is unknown")
	}
	return v.subject, scope, nil
}

// routeScopes names the scope of routes that do not follow the default
// rule (GET reads: ScopeRead; any other method changes something:
// ScopeAdmin): POST routes that only read, and the trading routes.
var routeScopes = map[string]domain.Scope{
	"POST /api/v1/balances":                domain.ScopeRead,
	"POST /api/v1/assets/total":            domain.ScopeRead,
	"POST /api/v1/coremem":                 domain.ScopeRead,
	"POST /api/v1/coremem/single":          domain.ScopeRead,
	"POST /api/v1/coremem/raw":             domain.ScopeRead,
	"POST /api/v1/chart/data":              domain.ScopeRead,
	"POST /api/v1/pnl/overview":            domain.ScopeRead,
	"POST /api/v1/files/acvar/get":         domain.ScopeRead,
	"POST /api/v1/files/backup":            domain.ScopeRead,
	"POST /api/v1/files/backup/get":        domain.ScopeRead,
	"POST /api/v1/files/state/get":         domain.ScopeRead,
	"POST /api/v1/files/strategy/get":      domain.ScopeRead,
	"POST /api/v1/files/custom-editor/get": domain.ScopeRead,
	"POST /api/v1/trade/buy":               domain.ScopeTrade,
	"POST /api/v1/trade/sell":              domain.ScopeTrade,
	"POST /api/v1/trade/buy/market":        domain.ScopeTrade,
	"POST /api/v1/trade/sell/market":       domain.ScopeTrade,
	"POST /api/v1/trade/buy/stoplimit":     domain.ScopeTrade,
	"POST /api/v1/trade/sell/stoplimit":    domain.ScopeTrade,
	"POST /api/v1/trade/buy/trailingstop":  domain.ScopeTrade,
	"POST /api/v1/trade/sell/trailingstop": domain.ScopeTrade,
	"POST /api/v1/trade/buy/oco":           domain.ScopeTrade,
	"POST /api/v1/trade/sell/oco":          domain.ScopeTrade,
	"POST /api/v1/trade/close":             domain.ScopeTrade,
	"POST /api/v1/trade/close/market":      domain.ScopeTrade,
	"POST /api/v1/trade/cancel":            domain.ScopeTrade,
}

// neededScope is the scope r's route needs.
func neededScope(r *http.Request) domain.Scope {
	route := ""
	if cr := mux.CurrentRoute(r); cr != nil {
		route, _ = cr.GetPathTemplate()
	}
	if sc, ok := routeScopes[r.Method+" "+route]; ok {
		return sc
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return domain.ScopeRead
	}
	return domain.ScopeAdmin
}

// scopeAllows returns an EFORBIDDEN error (403) when a token of scope may
// not make request r.
func scopeAllows(r *http.Request, scope domain.Scope) error {
	if need := neededScope(r); !scope.Allows(need) {
		return domain.Errorf(domain.EFORBIDDEN, "this token's scope (%s) does not allow %s %s (needs %s)", scope, r.Method, r.URL.Path, need)
	}
	return nil
}
