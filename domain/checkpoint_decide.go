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

// DecideCheckpointCosigned returns the CheckpointCosigned recording c:
// EINVALID unless it names the checkpoint (origin, size, root), the
// witness (name and key) and carries its signature line.
func DecideCheckpointCosigned(c CheckpointCosigned, clock Clock) ([]Event, error) {
	if c.Origin == "" || c.Root == "" || c.Size < 0 || c.Witness == "" || c.Key == "" || c.Signature == "" {
		return nil, Errorf(EINVALID, "a cosignature needs the checkpoint's origin, size and root, the witness's name and key, and its signature line")
	}
	return []Event{NewEvent(clock, TypeCheckpointCosigned, c)}, nil
}

// DecideWitnessRefused returns the WitnessRefused recording r: none when
// the last record of that witness (last) is already this refusal (the
// same witness refused the same checkpoint: nothing new), EINVALID when r
// does not name the checkpoint and the witness.
func DecideWitnessRefused(last WitnessRecord, r WitnessRefused, clock Clock) ([]Event, error) {
	if r.Origin == "" || r.Root == "" || r.Size < 0 || r.Witness == "" || r.Key == "" {
		return nil, Errorf(EINVALID, "a refusal needs the checkpoint's origin, size and root and the witness's name and key")
	}
	if p := last.Refused; p != nil && p.Origin == r.Origin && p.Size == r.Size && p.Root == r.Root && p.WitnessSize == r.WitnessSize {
		return nil, nil
	}
	return []Event{NewEvent(clock, TypeWitnessRefused, r)}, nil
}

// WitnessRecord is what the checkpoints stream says of one witness: the
// last checkpoint it cosigned (nil: none) and its refusal since, if any
// (a later cosignature clears it).
type WitnessRecord struct {
	Cosigned *CheckpointCosigned
	Refused  *WitnessRefused
}

// ApplyWitnessEvent folds a CheckpointCosigned or WitnessRefused into
// records (keyed by the witness's verifier key); other events leave it
// as it is. A payload that does not decode is EINVALID.
func ApplyWitnessEvent(records map[string]WitnessRecord, e *Event) error {
	switch e.Type {
	case TypeCheckpointCosigned:
		var c CheckpointCosigned
		if err := e.Decode(&c); err != nil {
			return err
		}
		r := records[c.Key]
		if r.Cosigned == nil || c.Origin != r.Cosigned.Origin || c.Size >= r.Cosigned.Size {
			r.Cosigned, r.Refused = &c, nil
		}
		records[c.Key] = r
	case TypeWitnessRefused:
		var c WitnessRefused
		if err := e.Decode(&c); err != nil {
			return err
		}
		r := records[c.Key]
		r.Refused = &c
		records[c.Key] = r
	}
	return nil
}
