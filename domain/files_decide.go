package domain

// DecideFileWrite returns the FileWritten that sets a file's content
// (NewFileWritten's rules: EINVALID naming "filename" or "document").
func DecideFileWrite(kind, name string, content []byte, clock Clock) ([]Event, error) {
	fw, err := NewFileWritten(kind, name, content)
	if err != nil {
		return nil, err
	}
	return []Event{NewEvent(clock, TypeFileWritten, fw)}, nil
}

// DecideFileCreate is DecideFileWrite for a file that must not exist yet
// (an autoconfig backup): ECONFLICT when exists.
func DecideFileCreate(exists bool, kind, name string, content []byte, clock Clock) ([]Event, error) {
	if exists {
		return nil, Errorf(ECONFLICT, "%s file %q exists", kind, name)
	}
	return DecideFileWrite(kind, name, content, clock)
}

// DecideFileDelete returns the FileDeleted of a file: ENOTFOUND when it
// does not exist.
func DecideFileDelete(exists bool, kind, name string, clock Clock) ([]Event, error) {
	if !exists {
		return nil, Errorf(ENOTFOUND, "%s file %q not found", kind, name)
	}
	return []Event{NewEvent(clock, TypeFileDeleted, FileDeleted{Kind: kind, Name: name})}, nil
}
