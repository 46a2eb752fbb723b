package domain

import (
	"errors"
	"fmt"
)

// Error codes. Every error that crosses a package boundary on purpose carries
// one of these; the HTTP layer maps them to status codes in one place.
const (
	EINVALID      = "invalid"      // bad input: 400
	EUNAUTHORIZED = "unauthorized" // missing or bad credentials: 401
	EFORBIDDEN    = "forbidden"    // credentials whose scope does not allow the call: 403
	ENOTFOUND     = "not_found"    // unknown resource: 404
	ECONFLICT     = "conflict"     // version conflict or state conflict: 409
	ETOOLARGE     = "too_large"    // body or value over a limit: 413
	ETOOMANY      = "too_many"     // rate limited: 429
	EMEDIATYPE    = "media_type"   // a body in a format the call does not take: 415
	EUNAVAILABLE  = "unavailable"  // a backend (event store, exchange) is down: 503
	EINTERNAL     = "internal"     // a bug or an unexpected failure: 500
)

// Error is the application error: a code for machines and a message for
// people. Messages are safe to show to API clients; they never contain
// secrets or Go error strings of unexpected failures.
type Error struct {
	Code    string
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("tradeledger error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code string, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsError returns the first *Error in err's chain, or, for an error of a
// domain sub-package that stands for one (a *decimal.ParseError or a
// *jsonscan.JSONError: EINVALID; a *secrets.SecretError), the *Error it
// stands for; false when err holds neither. Code that passes domain errors
// through (or maps them to a status) asks AsError rather than errors.As, so
// that a malformed number stays EINVALID wherever it was parsed.
func AsError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	var se subError
	if errors.As(err, &se) {
		code, message := se.DomainError()
		return &Error{Code: code, Message: message}, true
	}
	return nil, false
}

// subError is the error of a domain sub-package that cannot import domain
// (decimal.ParseError, jsonscan.JSONError, secrets.SecretError): the code
// (one of this file's) and message of the *Error it stands for.
type subError interface {
	error
	DomainError() (code, message string)
}

// ErrorCode returns the code of the first *Error in err's chain (AsError),
// EINTERNAL for any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	} else if e, ok := AsError(err); ok {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message of the first *Error in err's chain
// (AsError), and "internal error" for any other non-nil error, so unexpected
// details never reach a client.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	} else if e, ok := AsError(err); ok {
		return e.Message
	}
	return "internal error"
}
