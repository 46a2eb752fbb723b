package domain

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/secrets"
)

// A number the decimal package refuses is EINVALID naming the number, as it
// was when the decimal was part of this package: through ErrorCode and
// ErrorMessage, wrapped or not, and through AsError, which the adapters ask
// before passing a domain error on.
func TestDecimalParseErrorIsInvalid(t *testing.T) {
	_, err := decimal.ParseDecimal("1.2.3")
	if err == nil {
		t.Fatal("ParseDecimal(1.2.3) succeeded")
	}
	for _, e := range []error{err, fmt.Errorf("field price: %w", err)} {
		if got := ErrorCode(e); got != EINVALID {
			t.Errorf("ErrorCode(%v) = %s, want %s", e, got, EINVALID)
		}
		if got := ErrorMessage(e); !strings.Contains(got, `"1.2.3"`) {
			t.Errorf("ErrorMessage(%v) = %q, want it to name the number", e, got)
		}
		de, ok := AsError(e)
		if !ok || de.Code != EINVALID || de.Message != ErrorMessage(e) {
			t.Errorf("AsError(%v) = %v, %v; want EINVALID with the message", e, de, ok)
		}
		if got, want := err.Error(), Errorf(EINVALID, "%s", de.Message).Error(); got != want {
			t.Errorf("text %q, want %q (a domain.Error's)", got, want)
		}
	}
	if _, ok := AsError(errors.New("disk full")); ok {
		t.Error("AsError(plain error) = true, want false")
	}
	if got := ErrorCode(errors.New("disk full")); got != EINTERNAL {
		t.Errorf("ErrorCode(plain error) = %s, want %s", got, EINTERNAL)
	}
}

// The secrets package's refusals are the domain errors they stand for: a
// master key of the wrong size EINVALID, a login password that does not
// decrypt EUNAUTHORIZED with its reason, each with a domain.Error's text.
func TestSecretErrorsAreDomainErrors(t *testing.T) {
	_, err := secrets.NewSecretBox([]byte("short"))
	if got := ErrorCode(err); got != EINVALID {
		t.Errorf("NewSecretBox(short key): code %s (%v), want %s", got, err, EINVALID)
	}
	_, err = secrets.DecryptLoginPassword("ENC:not base64!", "a wallet of 16 bytes or more")
	if got := ErrorCode(fmt.Errorf("login: %w", err)); got != EUNAUTHORIZED {
		t.Errorf("DecryptLoginPassword(garbage): code %s (%v), want %s", got, err, EUNAUTHORIZED)
	}
	if got, want := ErrorMessage(err), secrets.LoginReasonFormat; got != want {
		t.Errorf("DecryptLoginPassword(garbage): message %q, want %q", got, want)
	}
	if got, want := err.Error(), Errorf(EUNAUTHORIZED, "%s", secrets.LoginReasonFormat).Error(); got != want {
		t.Errorf("text %q, want %q (a domain.Error's)", got, want)
	}
}
