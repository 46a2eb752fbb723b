package sqlite

import (
	"fmt"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// RawScan reads every row of the file at path through the store's row
// reader without decoding any: the reference of BenchmarkReplay.
func RawScan(path string) (int, error) {
	r, err := openRowReader(path)
	if err != nil {
		return 0, err
	}
	defer r.close()
	return r.countRows(0)
}

// RawInsertC writes evs (positions 1…, each its own stream) into a bare
// events table (no index) of a new file at path, through the C API with
// synchronous=FULL, in transactions of batch rows: the physical floor of
// BenchmarkAppend. Records are the events' own, hashes zero. It returns the
// time the inserts took (rows are built before).
func RawInsertC(path string, evs []domain.Event, batch int) (time.Duration, error) {
	w, err := openWriterWith(path, `PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; CREATE TABLE events (position INTEGER PRIMARY KEY, stream TEXT, version INTEGER, id BLOB, hash BLOB, record BLOB);`)
	if err != nil {
		return 0, err
	}
	defer w.close()
	rows := make([]domain.Event, len(evs))
	records := make([][]byte, len(evs))
	for i := range evs {
		rows[i] = evs[i]
		rows[i].Position, rows[i].Stream = uint64(i+1), fmt.Sprintf("order-%d", i)
		records[i] = appendRecord(nil, &rows[i])
	}
	start := time.Now()
	for i := 0; i < len(rows); i += batch {
		j := min(i+batch, len(rows))
		if err := w.Begin(); err != nil {
			return 0, err
		}
		if err := w.Insert(rows[i:j], records[i:j]); err != nil {
			return 0, err
		}
		if err := w.Commit(); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}
