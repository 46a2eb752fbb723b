package domain

// DecideLogCutAccepted returns the LogCutAccepted recording an operator's
// decision to go on with a log cut at its end: EINVALID unless it names
// what was lost (a problem, and lost positions from LostFrom to LostTo)
// and keeps no more records than the tree held.
func DecideLogCutAccepted(c LogCutAccepted, clock Clock) ([]Event, error) {
	switch {
	case c.Problem == "":
		return nil, Errorf(EINVALID, "a log cut is accepted only with what was found")
	case c.LostFrom == 0 || c.LostTo < c.LostFrom:
		return nil, Errorf(EINVALID, "a log cut names the positions lost, from %d to %d", c.LostFrom, c.LostTo)
	case c.Kept < 0 || c.Kept > c.TreeRecords && c.TreeRecords > 0:
		return nil, Errorf(EINVALID, "a log cut keeps %d of the tree's %d records", c.Kept, c.TreeRecords)
	}
	return []Event{NewEvent(clock, TypeLogCutAccepted, c)}, nil
}
