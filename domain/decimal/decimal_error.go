package decimal

import "fmt"

// ParseError is the error of a string, JSON value or float that is not a
// number a Decimal holds: malformed, too large, or with more than
// DecimalPlaces decimals. Message says which, naming the value.
// domain.ErrorCode reports it as EINVALID and domain.ErrorMessage as
// Message (through DomainError), and its text is that of a domain.Error of code EINVALID, so that
// a request carrying such a number is answered 400 naming it, as before
// the decimal had a package of its own.
type ParseError struct {
	Message string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("tradeledger error: code=invalid message=%s", e.Message)
}

// DomainError returns the domain error e stands for: code "invalid"
// (domain.EINVALID) and Message.
func (e *ParseError) DomainError() (code, message string) { return "invalid", e.Message }

func invalidf(format string, args ...any) *ParseError {
	return &ParseError{Message: fmt.Sprintf(format, args...)}
}
