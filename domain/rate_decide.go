package domain

// DecideRateObserved returns the event that records a rate the core
// observed (RateObserved on RateStream(r.Exchange)): EINVALID when the
// exchange, base or quote is missing, base and quote are one asset, or the
// rate is not positive. An observation does not depend on the stream's
// state: a command appends it at any version.
func DecideRateObserved(clock Clock, r RateObserved) ([]Event, error) {
	switch {
	case r.Exchange == "":
		return nil, Errorf(EINVALID, "rate: exchange is required")
	case r.Base == "" || r.Quote == "":
		return nil, Errorf(EINVALID, "rate on %s: base and quote are required", r.Exchange)
	case r.Base == r.Quote:
		return nil, Errorf(EINVALID, "rate on %s: %s in %s is not a rate", r.Exchange, r.Base, r.Quote)
	case r.Rate.Sign() <= 0:
		return nil, Errorf(EINVALID, "rate of %s in %s on %s must be positive, not %s", r.Base, r.Quote, r.Exchange, r.Rate)
	}
	return []Event{NewEvent(clock, TypeRateObserved, r)}, nil
}
