package http

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
)

// DefaultTokenTTL is how long a token is valid unless --token-ttl says else.
const DefaultTokenTTL = 24 * time.Hour

// Authenticator issues and checks the API's bearer tokens: HS256 JWTs with
// sub, iat, exp, jti and the password generation ("gen"), so that a password
// change revokes every earlier token.
type Authenticator struct {
	// Secret is the HS256 key (32 random bytes from the data directory).
	Secret []byte
	// TokenTTL is the lifetime of issued tokens.
	TokenTTL time.Duration
	// Clock dates tokens and checks expiry.
	Clock domain.Clock
	// Generation returns the current password generation; tokens of an
	// older generation are refused.
	Generation func() int64
}

// tokenClaims are the JWT claims of an API token.
type tokenClaims struct {
	jwt.RegisteredClaims
	Generation int64 `json:"gen"`
}

// IssueToken returns a signed token for subject at the current password
// generation.
func (a *Authenticator) IssueToken(subject string) (string, error) {
	now := a.Clock.Now()
	var jti [16]byte
	if _, err := rand.Read(jti[:]); err != nil {
		return "", err
	}
	claims := tokenClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   subject,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(a.TokenTTL)),
			ID:        hex.EncodeToString(jti[:]),
		},
		Generation: a.generation(),
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(a.Secret)
}

func (a *Authenticator) generation() int64 {
	if a.Generation == nil {
		return 0
	}
	return a.Generation()
}

// Verify checks a token and returns its subject. Only HS256 with our secret
// is accepted; expired tokens and tokens of an older password generation
// are EUNAUTHORIZED.
func (a *Authenticator) Verify(token string) (string, error) {
	var claims tokenClaims
	_, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return a.Secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithTimeFunc(a.Clock.Now),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
	)
	if err != nil {
		return "", domain.Errorf(domain.EUNAUTHORIZED, "invalid or expired token")
	}
	if claims.Generation != a.generation() {
		return "", domain.Errorf(domain.EUNAUTHORIZED, "token was revoked by a password change")
	}
	return claims.Subject, nil
}

func (s *Server) registerAuthRoutes(r *mux.Router) {}

// requireToken lets a request through only with a valid bearer token, and
// puts its subject in the context.
func (s *Server) requireToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Auth == nil {
			Error(w, r, domain.Errorf(domain.EUNAVAILABLE, "authentication is not configured"))
			return
		}
		h := r.Header.Get("Authorization")
		scheme, token, ok := strings.Cut(h, " ")
		if h == "" {
			Error(w, r, domain.Errorf(domain.EUNAUTHORIZED, "missing Authorization header"))
			return
		} else if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			Error(w, r, domain.Errorf(domain.EUNAUTHORIZED, "Authorization header must be \"Bearer <token>\""))
			return
		}
		sub, err := s.Auth.Verify(strings.TrimSpace(token))
		if err != nil {
			Error(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxSubject, sub)))
	})
}
