package secrets

import "fmt"

// SecretError is the error of a credential, key or login password this
// package refuses. Code is the domain error code it stands for ("invalid"
// for a malformed value or key, "unauthorized" for a login password that
// does not decrypt); domain.AsError, ErrorCode and ErrorMessage read it
// through DomainError, and its text is that of the domain.Error it stands
// for.
type SecretError struct {
	Code    string
	Message string
}

func (e *SecretError) Error() string {
	return fmt.Sprintf("tradeledger error: code=%s message=%s", e.Code, e.Message)
}

// DomainError returns the domain error code and message e stands for.
func (e *SecretError) DomainError() (code, message string) { return e.Code, e.Message }

func invalidf(format string, args ...any) *SecretError {
	return &SecretError{Code: "invalid", Message: fmt.Sprintf(format, args...)}
}

func unauthorized(reason string) *SecretError {
	return &SecretError{Code: "unauthorized", Message: reason}
}
