package domain

// CheckpointState is what the checkpoints stream says of its last
// checkpoint: the stream's version (-1 before the first) and that
// checkpoint's tree size.
type CheckpointState struct {
	Version int64
	Size    int64
}

// ApplyCheckpointEvent folds one checkpoints-stream event into st; a
// CheckpointSigned that does not decode is EINVALID.
func ApplyCheckpointEvent(st CheckpointState, e *Event) (CheckpointState, error) {
	st.Version = e.Version
	if e.Type != TypeCheckpointSigned {
		return st, nil
	}
	var c CheckpointSigned
	if err := e.Decode(&c); err != nil {
		return st, err
	}
	st.Size = c.Size
	return st, nil
}

// DecideCheckpoint returns the CheckpointSigned recording c, signed over a
// tree of c.Size records: none when the last checkpoint already has that
// size (nothing new to sign), EINVALID when c is smaller than the last
// one (the log never shrinks: a tree that did was cut or replaced, and a
// checkpoint of it would contradict the last one) or not a whole
// checkpoint.
func DecideCheckpoint(st CheckpointState, c CheckpointSigned, clock Clock) ([]Event, error) {
	switch {
	case c.Origin == "" || c.Root == "" || c.Note == "" || c.Size < 0:
		return nil, Errorf(EINVALID, "a checkpoint needs an origin, a size, a root and its signed note")
	case st.Version >= 0 && c.Size < st.Size:
		return nil, Errorf(EINVALID, "checkpoint of %d records is below the last checkpoint's %d: the log must not shrink", c.Size, st.Size)
	case st.Version >= 0 && c.Size == st.Size:
		return nil, nil
	}
	return []Event{NewEvent(clock, TypeCheckpointSigned, c)}, nil
}
