package http_test

import (
	"database/sql"
	"sync/atomic"
	"testing"

	"github.com/tradeledger/tradeledger/domain/audit"
)

// TestVerifyFailureNotifies: audit/verify on a sound log calls no hook; on
// a tampered one it hands the summary to OnVerifyFailure (the webhooks'
// verifyFailures).
func TestVerifyFailureNotifies(t *testing.T) {
	a := newAuditServer(t)
	var calls atomic.Int32
	var faults atomic.Int64
	a.Server.Audit.OnVerifyFailure(func(sum audit.VerifySummary) {
		calls.Add(1)
		faults.Store(sum.FaultCount)
	})
	a.append(t, "order-1", "Tested", map[string]string{"n": "0001"})
	a.append(t, "order-1", "Tested", map[string]string{"n": "0002"})
	if code, body := a.get(t, "/api/v1/audit/verify", nil); code != 200 || calls.Load() != 0 {
		t.Fatalf("sound log: %d %s, hook called %d times", code, body, calls.Load())
	}
	db, err := sql.Open("sqlite3", "file:"+a.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE events SET record = CAST(replace(CAST(record AS TEXT), '"0002"', '"9992"') AS BLOB) WHERE position = 2`); err != nil {
		t.Fatal(err)
	}
	a.get(t, "/api/v1/audit/verify", nil)
	if calls.Load() != 1 || faults.Load() != 1 {
		t.Fatalf("tampered log: hook called %d times with %d faults, want once with 1", calls.Load(), faults.Load())
	}
}
