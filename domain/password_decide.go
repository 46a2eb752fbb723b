package domain

import "github.com/tradeledger/tradeledger/domain/secrets"

// MinPasswordLength is the shortest login password a command sets.
const MinPasswordLength = 8

// CheckNewPassword returns EINVALID when password cannot be the login
// password: shorter than MinPasswordLength or longer than
// MaxLoginPasswordBytes.
func CheckNewPassword(password string) error {
	if len(password) < MinPasswordLength {
		return Errorf(EINVALID, "password must be at least %d characters", MinPasswordLength)
	}
	if len(password) > secrets.MaxLoginPasswordBytes {
		return Errorf(EINVALID, "password must be at most %d bytes", secrets.MaxLoginPasswordBytes)
	}
	return nil
}

// PasswordState is what password commands decide against: the generation
// of the last PasswordSet (0: no password yet).
type PasswordState struct {
	Generation int64
}

// ApplyPasswordEvent folds one credentials-stream event into st (other
// types leave it unchanged; a PasswordSet that does not decode is EINVALID).
func ApplyPasswordEvent(st PasswordState, e *Event) (PasswordState, error) {
	if e.Type != TypePasswordSet {
		return st, nil
	}
	var d PasswordSet
	if err := e.Decode(&d); err != nil {
		return st, err
	}
	st.Generation = max(st.Generation, d.Generation)
	return st, nil
}

// DecidePasswordSet returns the PasswordSet of hash (an argon2id PHC
// string, never the password) as the next generation, which revokes the
// tokens of older ones. With onlyIfNone it returns no events once a
// password exists (the first password from the environment).
func DecidePasswordSet(st PasswordState, hash string, onlyIfNone bool, clock Clock) ([]Event, error) {
	if hash == "" {
		return nil, Errorf(EINVALID, "password hash is empty")
	}
	if onlyIfNone && st.Generation > 0 {
		return nil, nil
	}
	return []Event{NewEvent(clock, TypePasswordSet, PasswordSet{Hash: hash, Generation: st.Generation + 1})}, nil
}
