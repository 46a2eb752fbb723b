package engine

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"

	"github.com/tradeledger/tradeledger/domain"
)

// keyID is the Idempotency-Key as kept: 128 bits of its SHA-256, so that
// a million keys cost a fixed 16 bytes each whatever their length. The
// hash is the same in every process, as a read-model snapshot keeps the
// ids a later start reads back (a per-process seed could not be), and a
// client cannot choose keys that collide. It costs about 100 ns per
// keyed order replayed.
type keyID struct{ a, b uint64 }

func keyIDOf(key string) keyID {
	h := sha256.Sum256([]byte(key))
	return keyID{binary.LittleEndian.Uint64(h[0:]), binary.LittleEndian.Uint64(h[8:])}
}

// keyRecord is what a used Idempotency-Key answered: the order (for an
// OCO, its limit leg, whose OrderRequested carries the key) and the OCO.
type keyRecord struct {
	orderID int64
	ocoID   int64
	fp      uint64 // fingerprintBits of the request; 0: not recorded
}

// keyClaims are the Idempotency-Keys whose first request is in progress,
// beside the answered ones Orders keeps from the log: a retry waits for
// the first request's answer instead of reading a half-written order.
type keyClaims struct {
	orders  *Orders
	mu      sync.Mutex // held while Orders' keys are read for a claim
	pending map[string]*keyEntry
}

// keyEntry is a key whose first request is in progress; done closes when
// it is settled.
type keyEntry struct {
	done chan struct{}
}

// claim claims an Idempotency-Key. fresh: no request used it, the caller
// places the order and must settle the claim. Otherwise rec is the first
// request's answer. A claim in progress is waited for; if it placed
// nothing, the key is free again and claimed anew.
func (k *keyClaims) claim(ctx context.Context, key string) (rec keyRecord, fresh bool, err error) {
	for {
		k.mu.Lock()
		if ke, ok := k.pending[key]; ok {
			k.mu.Unlock()
			select {
			case <-ke.done:
				continue
			case <-ctx.Done():
				return keyRecord{}, false, ctx.Err()
			}
		}
		if rec, ok := k.orders.key(key); ok {
			k.mu.Unlock()
			return rec, false, nil
		}
		if k.pending == nil {
			k.pending = map[string]*keyEntry{}
		}
		k.pending[key] = &keyEntry{done: make(chan struct{})}
		k.mu.Unlock()
		return keyRecord{}, true, nil
	}
}

// settle ends a fresh claim with its outcome; a request that placed
// nothing (orderID 0) frees the key for a retry.
func (k *keyClaims) settle(key string, orderID, ocoID int64, fp string) {
	k.mu.Lock()
	ke := k.pending[key]
	delete(k.pending, key)
	if orderID != 0 {
		k.orders.recordKey(key, keyRecord{orderID: orderID, ocoID: ocoID, fp: fingerprintBits(fp)})
	}
	k.mu.Unlock()
	if ke != nil {
		close(ke.done)
	}
}

// reuse answers a request whose Idempotency-Key already answered one: the
// first answer when the requests are the same, ECONFLICT when they differ.
// done is false when the key is unused. A key whose first request is
// still placing is waited for: its order is recorded (OrderRequested)
// before the exchange answers, and answering from that half-written state
// would say the exchange did not answer while it is still asked.
func (k *keyClaims) reuse(ctx context.Context, key, fp string) (id int64, done bool, err error) {
	for {
		k.mu.Lock()
		ke, inFlight := k.pending[key]
		rec, ok := k.orders.key(key)
		k.mu.Unlock()
		if inFlight {
			select {
			case <-ke.done:
				continue
			case <-ctx.Done():
				return 0, true, ctx.Err()
			}
		}
		if !ok {
			return 0, false, nil
		}
		id, err = k.answer(ctx, rec, fp)
		return id, true, err
	}
}

// answer is the answer to a request whose Idempotency-Key was used: the
// first request's id (its OCO's for an OCO) and the outcome of its order;
// ECONFLICT if the first request was a different one (fp).
func (k *keyClaims) answer(ctx context.Context, rec keyRecord, fp string) (int64, error) {
	if rec.fp != 0 && rec.fp != fingerprintBits(fp) {
		return 0, errKeyReused()
	}
	o, ok, err := k.orders.lookup(ctx, rec.orderID)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, domain.Errorf(domain.EINTERNAL, "order %d vanished", rec.orderID)
	}
	id := rec.orderID
	if rec.ocoID != 0 {
		id = rec.ocoID
	}
	return id, answerOrder(o)
}

// requestFingerprint is the digest recorded with an Idempotency-Key: the
// operation (order, oco or close) and every field of the request as the
// client gave it (before a market price or a close amount is resolved).
// Endpoints differ in operation, side or kind, so one key used on two
// endpoints differs too. A request without a key has none ("").
func requestFingerprint(op string, req domain.OrderRequest) string {
	if req.IdempotencyKey == "" {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s",
		op, req.Exchange, req.Pair, req.Side, req.Kind, req.Amount, req.Price, req.StopPrice, req.LimitPrice)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// fingerprintBits is the part of a fingerprint kept in memory (64 bits);
// 0 for none (events written before fingerprints existed).
func fingerprintBits(fp string) uint64 {
	if len(fp) < 16 {
		return 0
	}
	v, err := strconv.ParseUint(fp[:16], 16, 64)
	if err != nil {
		return 0
	}
	return v
}

// errKeyReused is the answer to an Idempotency-Key used before with a
// different request.
func errKeyReused() error {
	return domain.Errorf(domain.ECONFLICT, "Idempotency-Key reused with a different request")
}

// answerOrder is the result of an order as a command answer: nil once the
// order is placed (or held), EINVALID with the reason if it was rejected,
// EUNAVAILABLE while it is pending reconciliation.
func answerOrder(o domain.Order) error {
	switch o.State {
	case domain.OrderStateRejected:
		return domain.Errorf(domain.EINVALID, "order %d rejected: %s", o.OrderID, o.Reason)
	case domain.OrderStateRequested:
		return domain.Errorf(domain.EUNAVAILABLE, "%s did not answer; order %d is pending reconciliation", o.Exchange, o.OrderID)
	}
	return nil
}
