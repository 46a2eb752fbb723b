package engine

import (
	"context"
	"errors"
	"sync"

	"github.com/tradeledger/tradeledger/domain"
)

func (t *Trader) exchange(name string) (domain.Exchange, error) {
	if t.Exchange == nil {
		return nil, domain.Errorf(domain.EUNAVAILABLE, "no exchange connectors are configured")
	}
	x, err := t.Exchange(name)
	if domain.ErrorCode(err) == domain.ENOTFOUND {
		return nil, domain.Errorf(domain.EINVALID, "field \"exch\": unknown exchange %q", name)
	} else if err != nil {
		return nil, err
	}
	return x, nil
}

// exchangeCallContext bounds one call to a connector by t.Timeout
// (DefaultTimeout when unset): a call not answered by then is an unknown
// outcome, never a wait for ever.
func (t *Trader) exchangeCallContext(ctx context.Context) (context.Context, context.CancelFunc) {
	d := t.Timeout
	if d <= 0 {
		d = DefaultTimeout
	}
	return context.WithTimeout(ctx, d)
}

// exchangeError turns connector failures that are not domain errors into
// EUNAVAILABLE (a network problem, a timeout).
func exchangeError(err error) error {
	if err == nil {
		return nil
	}
	var de *domain.Error
	if errors.As(err, &de) {
		return err
	}
	return domain.Errorf(domain.EUNAVAILABLE, "exchange unavailable: %v", err)
}

func (t *Trader) exLock(exchange string) *sync.Mutex {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	l, ok := t.exLocks[exchange]
	if !ok {
		l = &sync.Mutex{}
		t.exLocks[exchange] = l
	}
	return l
}
