package http

import (
	"sync"

	"github.com/tradeledger/tradeledger/domain/argon2id"
)

// dummyHash is checked against when no password is registered, so that a
// refused login costs the same time whatever the reason (no timing oracle
// for "is a password set" or "was the padding right").
var dummyHash = sync.OnceValue(func() string {
	h, err := argon2id.Hash("no password is registered")
	if err != nil {
		panic(err)
	}
	return h
})
