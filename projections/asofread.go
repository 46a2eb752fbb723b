package projections

import (
	"context"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/books"
)

// The API's reads of past states (http.PastStates): the state as of an
// instant in trade time (AsOf), or, for the zero time, of the whole log
// as it is now — what a read under another lot matching method than the
// live one is answered from. Each is Get: a kept state caught up with the
// log, or one built now; its errors are Get's.

// apiCut is the cut of a read at: AsOf(at), or the whole log for the zero
// time.
func apiCut(at time.Time) Cut {
	if at.IsZero() {
		return Cut{}
	}
	return AsOf(at.UnixMilli())
}

// PnlAt returns the PNL reader (the Ledger) of the state at at under
// method.
func (ss *States) PnlAt(ctx context.Context, at time.Time, method domain.PnlMethod) (PnlReader, error) {
	st, err := ss.Get(ctx, apiCut(at), method)
	if err != nil {
		return nil, err
	}
	return st.Ledger, nil
}

// BooksAt returns the books' source (the Ledger) of the state at at under
// method.
func (ss *States) BooksAt(ctx context.Context, at time.Time, method domain.PnlMethod) (books.Source, error) {
	st, err := ss.Get(ctx, apiCut(at), method)
	if err != nil {
		return nil, err
	}
	return st.Ledger, nil
}

// BalancesAt returns each exchange's last observed balances in the state
// at at (the state under method: the one the PNL reads of that instant
// share).
func (ss *States) BalancesAt(ctx context.Context, at time.Time, method domain.PnlMethod) ([]domain.BalancesObserved, error) {
	st, err := ss.Get(ctx, apiCut(at), method)
	if err != nil {
		return nil, err
	}
	return st.Balances.Balances(), nil
}
