// This Source Code Form is subject to the terms of the Mozilla Public
// License, v. 2.0. If a copy of the MPL was not distributed with this file,
// You can obtain one at https://mozilla.org/MPL/2.0/.
//
// The SQL event store of github.com/hallgren/eventsourcing, module
// github.com/hallgren/eventsourcing/eventstore/sql v0.5.0 (commit
// dfb318aa95915d9239af400cdb467b43a2923fa1: sql.go, iterator.go,
// migrate.go), copied for BenchmarkPeer because the Go module proxy does not
// serve that module (its core module, v0.4.0, is served and imported).
// Changes: one file in package sqlite_test; the names SQL, iterator and
// createTable prefixed with peer; Open's doc and the code otherwise as
// published.

package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hallgren/eventsourcing/core"
)

// peerSQL event store handler
type peerSQL struct {
	db   *sql.DB
	lock *sync.Mutex
}

// peerOpen connection to database
func peerOpen(db *sql.DB) *peerSQL {
	return &peerSQL{
		db: db,
	}
}

// peerOpenWithSingelWriter prevents multiple writers to save events concurrently
//
// Multiple go routines writing concurrently to sqlite could produce sqlite to lock.
// https://www.sqlite.org/cgi/src/doc/begin-concurrent/doc/begin_concurrent.md
//
// "If there is significant contention for the writer lock, this mechanism can
// be inefficient. In this case it is better for the application to use a mutex
// or some other mechanism that supports blocking to ensure that at most one
// writer is attempting to COMMIT a BEGIN CONCURRENT transaction at a time.
// This is usually easier if all writers are part of the same operating system process."
func peerOpenWithSingelWriter(db *sql.DB) *peerSQL {
	return &peerSQL{
		db:   db,
		lock: &sync.Mutex{},
	}
}

// Close the connection
func (s *peerSQL) Close() {
	s.db.Close()
}

// Save persists events to the database
func (s *peerSQL) Save(events []core.Event) error {
	// If no event return no error
	if len(events) == 0 {
		return nil
	}

	if s.lock != nil {
		// prevent multiple writers
		s.lock.Lock()
		defer s.lock.Unlock()
	}
	aggregateID := events[0].AggregateID
	aggregateType := events[0].AggregateType

	tx, err := s.db.BeginTx(context.Background(), nil)
	if err != nil {
		return errors.New(fmt.Sprintf("could not start a write transaction, %v", err))
	}
	defer tx.Rollback()

	var currentVersion core.Version
	var version int
	selectStm := `Select version from events where id=? and type=? order by version desc limit 1`
	err = tx.QueryRow(selectStm, aggregateID, aggregateType).Scan(&version)
	if err != nil && err != sql.ErrNoRows {
		return err
	} else if err == sql.ErrNoRows {
		// if no events are saved before set the current version to zero
		currentVersion = core.Version(0)
	} else {
		// set the current version to the last event stored
		currentVersion = core.Version(version)
	}

	// Make sure no other has saved event to the same aggregate concurrently
	if core.Version(currentVersion)+1 != events[0].Version {
		return core.ErrConcurrency
	}

	var lastInsertedID int64
	insert := `Insert into events (id, version, reason, type, timestamp, data, metadata) values ($1, $2, $3, $4, $5, $6, $7)`
	for i, event := range events {
		res, err := tx.Exec(insert, event.AggregateID, event.Version, event.Reason, event.AggregateType, event.Timestamp.Format(time.RFC3339), event.Data, event.Metadata)
		if err != nil {
			return err
		}
		lastInsertedID, err = res.LastInsertId()
		if err != nil {
			return err
		}
		// override the event in the slice exposing the GlobalVersion to the caller
		events[i].GlobalVersion = core.Version(lastInsertedID)
	}
	return tx.Commit()
}

// Get the events from database
func (s *peerSQL) Get(ctx context.Context, id string, aggregateType string, afterVersion core.Version) (core.Iterator, error) {
	selectStm := `Select seq, id, version, reason, type, timestamp, data, metadata from events where id=? and type=? and version>? order by version asc`
	rows, err := s.db.QueryContext(ctx, selectStm, id, aggregateType, afterVersion)
	if err != nil {
		return nil, err
	}
	return &peerIterator{rows: rows}, nil
}

// All iterate over all event in GlobalEvents order
func (s *peerSQL) All(start core.Version, count uint64) (core.Iterator, error) {
	selectStm := `Select seq, id, version, reason, type, timestamp, data, metadata from events where seq >= ? order by seq asc LIMIT ?`
	rows, err := s.db.Query(selectStm, start, count)
	if err != nil {
		return nil, err
	}
	return &peerIterator{rows: rows}, nil
}

type peerIterator struct {
	rows *sql.Rows
}

// Next return true if there are more data
func (i *peerIterator) Next() bool {
	return i.rows.Next()
}

// Value return the an event
func (i *peerIterator) Value() (core.Event, error) {
	var globalVersion core.Version
	var version core.Version
	var id, reason, typ, timestamp string
	var data, metadata []byte

	if err := i.rows.Scan(&globalVersion, &id, &version, &reason, &typ, &timestamp, &data, &metadata); err != nil {
		return core.Event{}, err
	}

	t, err := time.Parse(time.RFC3339, timestamp)
	if err != nil {
		return core.Event{}, err
	}

	event := core.Event{
		AggregateID:   id,
		Version:       version,
		GlobalVersion: globalVersion,
		AggregateType: typ,
		Timestamp:     t,
		Data:          data,
		Metadata:      metadata,
		Reason:        reason,
	}
	return event, nil
}

// Close closes the iterator
func (i *peerIterator) Close() {
	i.rows.Close()
}

const peerCreateTable = `create table events (seq INTEGER PRIMARY KEY AUTOINCREMENT, id VARCHAR NOT NULL, version INTEGER, reason VARCHAR, type VARCHAR, timestamp VARCHAR, data BLOB, metadata BLOB);`

// Migrate the database
func (s *peerSQL) Migrate() error {
	sqlStmt := []string{
		peerCreateTable,
		`create unique index id_type_version on events (id, type, version);`,
		`create index id_type on events (id, type);`,
	}
	return s.migrate(sqlStmt)
}

func (s *peerSQL) migrate(stm []string) error {
	tx, err := s.db.BeginTx(context.Background(), nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()

	// check if the migration is already done
	rows, err := tx.Query(`Select count(*) from events`)
	if err == nil {
		rows.Close()
		return nil
	}

	for _, b := range stm {
		_, err := tx.Exec(b)
		if err != nil {
			return err
		}
	}
	return tx.Commit()
}
