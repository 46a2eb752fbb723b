package domain

import "strconv"

// DecideSnapshotDiscarded returns the SnapshotDiscarded recording d: the
// snapshot file and at least one projection must be named (EINVALID
// otherwise). A snapshot is discarded once per file and position: a second
// record of the same one (state holds those recorded, "file@position")
// is nothing to do.
func DecideSnapshotDiscarded(recorded map[string]bool, d SnapshotDiscarded, clock Clock) ([]Event, error) {
	if d.File == "" || len(d.Projections) == 0 {
		return nil, Errorf(EINVALID, "a discarded snapshot names its file and the projections that differ")
	}
	if recorded[SnapshotKey(d.File, d.Position)] {
		return nil, nil
	}
	return []Event{NewEvent(clock, TypeSnapshotDiscarded, d)}, nil
}

// SnapshotKey names a snapshot in DecideSnapshotDiscarded's state.
func SnapshotKey(file string, position uint64) string {
	return file + "@" + strconv.FormatUint(position, 10)
}

// ApplySnapshotEvent folds an event of the snapshots stream into the set
// of discarded snapshots (DecideSnapshotDiscarded's state); one that does
// not decode is EINVALID.
func ApplySnapshotEvent(recorded map[string]bool, e *Event) (map[string]bool, error) {
	if e.Type != TypeSnapshotDiscarded {
		return recorded, nil
	}
	d, err := Payload[SnapshotDiscarded](e)
	if err != nil {
		return recorded, err
	}
	if recorded == nil {
		recorded = map[string]bool{}
	}
	recorded[SnapshotKey(d.File, d.Position)] = true
	return recorded, nil
}
