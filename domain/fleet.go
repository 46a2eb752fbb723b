package domain

// The fleet read contract: what the fleet routes answer across the services
// (instances) that write to one analytics store, each instance's figures
// and the fleet's total in one reporting currency. Figures are converted
// fill by fill at the rates each instance logged (the PNL fold's
// conversion, domain/fold), never across instances; what an instance could
// not convert for want of a rate is listed apart in its own currency
// (Unconverted), never added to the converted figures nor across
// currencies. Counts are currency-free and always complete.

// FleetQuery selects a fleet answer: the reporting currency, the lot
// matching whose rows are read, and a range of trade time (ms; 0:
// unbounded; a bound is rounded down to its 15-minute slot) for the
// realized report and the exports.
type FleetQuery struct {
	Currency string
	Method   PnlMethod
	From, To int64
}

// Fleet instance statuses: only an instance whose rows are current is read
// and added to the total.
const (
	// FleetCurrent: its rows are of this release's schema and complete
	// up to Position.
	FleetCurrent = "current"
	// FleetRewriting: its rows are being written again from its log (an
	// upgrade's schema change): not read until done.
	FleetRewriting = "rewriting"
	// FleetNewer: its rows are of a newer release's schema: not read.
	FleetNewer = "newer"
	// FleetNoRows: the instance claimed its name but has no rows of the
	// query's method (its sink runs another, or has written nothing yet).
	FleetNoRows = "none"
)

// FleetFigures are realized figures in one currency (definitions in
// pnl.go, as in the overview's total): realized pnl, fees, invested (cost
// of the lots consumed by closing trades), Σ value of buys and sells,
// unmatched sold value, fill and closing-trade counts; Unconverted holds,
// per currency, the money of the fills that had no rate into the
// reporting currency (their counts are in the counts above), and
// UnconvertedFees, per asset in that asset, the fees charged in a third
// asset that had no rate at their fill's time (they are in no figure:
// fold.ValueFee).
type FleetFigures struct {
	Pnl                Number                 `json:"pnl"`
	Fees               Number                 `json:"fees"`
	Invested           Number                 `json:"invested"`
	BuyBaseValue       Number                 `json:"buyBaseValue"`
	SellBaseValue      Number                 `json:"sellBaseValue"`
	UnmatchedBaseValue Number                 `json:"unmatchedBaseValue"`
	NumberOfTrades     int64                  `json:"numberOfTrades"`
	BuyCount           int64                  `json:"buyCount"`
	SellCount          int64                  `json:"sellCount"`
	Winning            int64                  `json:"winning"`
	Losing             int64                  `json:"losing"`
	Breakeven          int64                  `json:"breakeven"`
	WinRate            string                 `json:"winRate"`
	Unconverted        map[string]Unconverted `json:"unconverted"`
	UnconvertedFees    map[string]Number      `json:"unconvertedFees,omitempty"`
}

// Add adds o's figures to f: money and counts, and Unconverted per
// currency. The win rate is set again from the counts.
func (f *FleetFigures) Add(o *FleetFigures) {
	for _, x := range [][2]*Number{{&f.Pnl, &o.Pnl}, {&f.Fees, &o.Fees}, {&f.Invested, &o.Invested},
		{&f.BuyBaseValue, &o.BuyBaseValue}, {&f.SellBaseValue, &o.SellBaseValue}, {&f.UnmatchedBaseValue, &o.UnmatchedBaseValue}} {
		*x[0] = Number(Decimal(*x[0]).Add(Decimal(*x[1])))
	}
	f.NumberOfTrades += o.NumberOfTrades
	f.BuyCount += o.BuyCount
	f.SellCount += o.SellCount
	f.Winning += o.Winning
	f.Losing += o.Losing
	f.Breakeven += o.Breakeven
	f.WinRate = WinRate(f.Winning, f.Losing, f.Breakeven)
	if f.Unconverted == nil {
		f.Unconverted = map[string]Unconverted{}
	}
	for c, u := range o.Unconverted {
		t := f.Unconverted[c]
		t.Pnl = Number(Decimal(t.Pnl).Add(Decimal(u.Pnl)))
		t.Invested = Number(Decimal(t.Invested).Add(Decimal(u.Invested)))
		t.Trades += u.Trades
		t.UnrealizedPnl = Number(Decimal(t.UnrealizedPnl).Add(Decimal(u.UnrealizedPnl)))
		f.Unconverted[c] = t
	}
	for a, x := range o.UnconvertedFees {
		if f.UnconvertedFees == nil {
			f.UnconvertedFees = map[string]Number{}
		}
		f.UnconvertedFees[a] = Number(Decimal(f.UnconvertedFees[a]).Add(Decimal(x)))
	}
}

// FleetInstanceInfo says which instance a fleet answer's entry is and how
// current its rows are: the log position they reach and when its sink last
// wrote (ms).
type FleetInstanceInfo struct {
	Name      string `json:"name"`
	Status    string `json:"status"`
	Position  uint64 `json:"position"`
	UpdatedAt int64  `json:"updatedAt"`
}

// FleetOverview is GET fleet/overview: each instance's figures over all
// time in Currency, and the fleet's total (the current instances').
type FleetOverview struct {
	Currency  string              `json:"currency"`
	Method    string              `json:"method"`
	Instances []FleetInstanceView `json:"instances"`
	Total     FleetTotal          `json:"total"`
}

// FleetInstanceView is an instance's entry in the overview: its realized
// figures and the unrealized pnl of the lots it holds (at its pairs' last
// fill prices, converted at its latest rates; without one, in
// Unconverted), and its number of pairs.
type FleetInstanceView struct {
	FleetInstanceInfo
	Pairs         int    `json:"pairs"`
	UnrealizedPnl Number `json:"unrealizedPnl"`
	FleetFigures
}

// FleetTotal is the fleet's total: the sum of its current instances'
// figures (Instances of them).
type FleetTotal struct {
	Instances     int    `json:"instances"`
	Pairs         int    `json:"pairs"`
	UnrealizedPnl Number `json:"unrealizedPnl"`
	FleetFigures
}

// FleetRealized is GET fleet/reports/realized: per instance its pairs'
// realized figures over the range, each in its own quote, and the
// instance's in Currency; the fleet's total in Currency.
type FleetRealized struct {
	Currency  string                  `json:"currency"`
	Method    string                  `json:"method"`
	From      int64                   `json:"from"`
	To        int64                   `json:"to"` // 0: no end
	Instances []FleetRealizedInstance `json:"instances"`
	Total     FleetTotal              `json:"total"`
}

// FleetRealizedInstance is an instance's entry in the realized report.
type FleetRealizedInstance struct {
	FleetInstanceInfo
	Pairs []FleetPair `json:"pairs"`
	FleetFigures
}

// FleetPair is a pair's realized figures in its own quote (Unit): the
// fills of the range, whether or not they could be converted.
type FleetPair struct {
	Key                string `json:"key"`
	Unit               string `json:"unit"`
	Pnl                Number `json:"pnl"`
	Fees               Number `json:"fees"`
	Invested           Number `json:"invested"`
	BuyBaseValue       Number `json:"buyBaseValue"`
	SellBaseValue      Number `json:"sellBaseValue"`
	UnmatchedBaseValue Number `json:"unmatchedBaseValue"`
	NumberOfTrades     int64  `json:"numberOfTrades"`
	Winning            int64  `json:"winning"`
	Losing             int64  `json:"losing"`
	Breakeven          int64  `json:"breakeven"`
}

// FleetFill is one fill of an instance, as the fleet's fills export lists
// it: its figures in its pair's quote (realized pnl of the query's method).
type FleetFill struct {
	Instance, Exchange, Pair, Side string
	Time, OrderID                  int64
	FillID                         string
	Price, Quantity, Value         Decimal
	Fee                            Decimal
	FeeAsset                       string
	Pnl                            Decimal
	Position                       uint64
}
