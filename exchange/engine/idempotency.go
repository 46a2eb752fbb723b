package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/maphash"
	"strconv"

	"github.com/tradeledger/tradeledger/domain"
)

// keyID is the Idempotency-Key as kept: 128 bits of hash, so that a
// million keys cost a fixed 16 bytes each whatever their length. The map
// is rebuilt from the log by every process, so the hash need not be
// stable across processes: two maphash values under random seeds (a
// fraction of a SHA-256's cost on every replayed order, and a client
// cannot choose keys that collide without knowing the seeds).
type keyID struct{ a, b uint64 }

// keySeeds are the Trader's two maphash seeds (set by init).
type keySeeds struct{ a, b maphash.Seed }

func (t *Trader) keyIDOf(key string) keyID {
	return keyID{maphash.String(t.seeds.a, key), maphash.String(t.seeds.b, key)}
}

// keyRecord is what a used Idempotency-Key answered: the order (for an
// OCO, its limit leg, whose OrderRequested carries the key) and the OCO.
type keyRecord struct {
	orderID int64
	ocoID   int64
	fp      uint64 // fingerprintBits of the request; 0: not recorded
}

// keyEntry is a key whose first request is in progress; done closes when
// it is settled.
type keyEntry struct {
	done chan struct{}
}

// claimKey claims an Idempotency-Key. fresh: no request used it, the
// caller places the order and must settle the claim. Otherwise rec is the
// first request's answer. A claim in progress is waited for; if it placed
// nothing, the key is free again and claimed anew.
func (t *Trader) claimKey(ctx context.Context, key string) (rec keyRecord, fresh bool, err error) {
	kid := t.keyIDOf(key)
	for {
		t.mu.Lock()
		t.init()
		if ke, ok := t.pending[key]; ok {
			t.mu.Unlock()
			select {
			case <-ke.done:
				continue
			case <-ctx.Done():
				return keyRecord{}, false, ctx.Err()
			}
		}
		if rec, ok := t.keys[kid]; ok {
			t.mu.Unlock()
			return rec, false, nil
		}
		t.pending[key] = &keyEntry{done: make(chan struct{})}
		t.mu.Unlock()
		return keyRecord{}, true, nil
	}
}

// settleKey ends a fresh claim with its outcome; a request that placed
// nothing (orderID 0) frees the key for a retry.
func (t *Trader) settleKey(key string, orderID, ocoID int64, fp string) {
	t.mu.Lock()
	ke := t.pending[key]
	delete(t.pending, key)
	if orderID != 0 {
		t.keys[t.keyIDOf(key)] = keyRecord{orderID: orderID, ocoID: ocoID, fp: fingerprintBits(fp)}
	}
	t.mu.Unlock()
	if ke != nil {
		close(ke.done)
	}
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

// reuseKey answers a request whose Idempotency-Key already answered one:
// the first answer when the requests are the same, ECONFLICT when they
// differ. done is false when the key is unused. A key whose first request
// is still placing is waited for: its order is recorded (OrderRequested)
// before the exchange answers, and answering from that half-written
// state would say the exchange did not answer while it is still asked.
func (t *Trader) reuseKey(ctx context.Context, key, fp string) (id int64, done bool, err error) {
	for {
		t.mu.Lock()
		t.init()
		ke, inFlight := t.pending[key]
		rec, ok := t.keys[t.keyIDOf(key)]
		t.mu.Unlock()
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
		id, err = t.answerKey(ctx, rec, fp)
		return id, true, err
	}
}

// answerKey is the answer to a request whose Idempotency-Key was used: the
// first request's id (its OCO's for an OCO) and the outcome of its order;
// ECONFLICT if the first request was a different one (fp).
func (t *Trader) answerKey(ctx context.Context, rec keyRecord, fp string) (int64, error) {
	if rec.fp != 0 && rec.fp != fingerprintBits(fp) {
		return 0, errKeyReused()
	}
	o, ok, err := t.lookup(ctx, rec.orderID)
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
