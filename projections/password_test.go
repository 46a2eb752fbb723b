package projections_test

import (
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/secrets"
	"github.com/tradeledger/tradeledger/projections"
)

func TestPasswordProjection(t *testing.T) {
	clock := domain.NewManualClock(time.Unix(1700000000, 0))
	p := projections.NewPassword()
	if p.IsRegistered() || p.Generation() != 0 {
		t.Fatalf("empty projection: registered %v, generation %d", p.IsRegistered(), p.Generation())
	}
	ev := func(stream, typ string, data any) *domain.Event {
		e := domain.NewEvent(clock, typ, data)
		e.Stream = stream
		return &e
	}
	steps := []struct {
		event      *domain.Event
		wantErr    bool
		hash       string
		generation int64
	}{
		{ev(domain.StreamCredentials, domain.TypePasswordSet, domain.PasswordSet{Hash: "$argon2id$a", Generation: 1}), false, "$argon2id$a", 1},
		{ev(domain.StreamCredentials, domain.TypeExchangeKeysSet, domain.ExchangeKeysSet{Exchange: "binance"}), false, "$argon2id$a", 1},
		{ev(domain.StreamCredentials, domain.TypePasswordSet, domain.PasswordSet{Hash: "$argon2id$b", Generation: 2}), false, "$argon2id$b", 2},
		// A generation that does not increase could revive revoked tokens.
		{ev(domain.StreamCredentials, domain.TypePasswordSet, domain.PasswordSet{Hash: "$argon2id$old", Generation: 2}), true, "$argon2id$b", 2},
		{ev(domain.StreamCredentials, domain.TypePasswordSet, domain.PasswordSet{Hash: "", Generation: 3}), true, "$argon2id$b", 2},
		{&domain.Event{Stream: domain.StreamCredentials, Type: domain.TypePasswordSet, Data: []byte(`{"hash":5}`)}, true, "$argon2id$b", 2},
		{ev(domain.StreamAuth, domain.TypeLoginFailed, domain.LoginFailed{RemoteAddr: "10.0.0.1", Reason: secrets.LoginReasonPassword}), false, "$argon2id$b", 2},
		{ev(domain.StreamAuth, domain.TypeLoginSucceeded, domain.LoginSucceeded{Subject: "admin", RemoteAddr: "10.0.0.1"}), false, "$argon2id$b", 2},
		{ev(domain.StreamAuth, domain.TypeLoginFailed, domain.LoginFailed{RemoteAddr: "10.0.0.1", Reason: secrets.LoginReasonFormat}), false, "$argon2id$b", 2},
	}
	for i, s := range steps {
		err := p.Apply(s.event)
		if (err != nil) != s.wantErr {
			t.Fatalf("step %d: Apply err = %v, want error %v", i, err, s.wantErr)
		}
		if hash, gen := p.Current(); hash != s.hash || gen != s.generation || p.Generation() != gen || !p.IsRegistered() {
			t.Fatalf("step %d: Current = %q, %d; want %q, %d", i, hash, gen, s.hash, s.generation)
		}
	}
	if ok, failed := p.Logins(); ok != 1 || failed != 2 {
		t.Fatalf("Logins = %d, %d; want 1, 2", ok, failed)
	}
}
