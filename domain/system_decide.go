package domain

// DecideSystem returns the event that starts (start true) or stops the
// bot core, or none when it is already in that state (running).
func DecideSystem(running, start bool, clock Clock) []Event {
	switch {
	case running == start:
		return nil
	case start:
		return []Event{NewEvent(clock, TypeSystemStarted, SystemStarted{})}
	}
	return []Event{NewEvent(clock, TypeSystemStopped, SystemStopped{})}
}
