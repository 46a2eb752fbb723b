package domain

import (
	"testing"
	"time"
)

// TestDecideSnapshotDiscarded: a discarded snapshot is recorded once per
// file and position, and must name its file and a projection.
func TestDecideSnapshotDiscarded(t *testing.T) {
	clock := NewManualClock(time.Unix(10, 0))
	d := SnapshotDiscarded{File: "120.snap", Position: 120, Projections: []string{"ledger"}, Value: ".x", Snapshot: "9", Log: "1"}
	evs, err := DecideSnapshotDiscarded(nil, d, clock)
	if err != nil || len(evs) != 1 || evs[0].Type != TypeSnapshotDiscarded {
		t.Fatalf("first record: %v %v", evs, err)
	}
	recorded, err := ApplySnapshotEvent(nil, &evs[0])
	if err != nil {
		t.Fatal(err)
	}
	if evs, err := DecideSnapshotDiscarded(recorded, d, clock); err != nil || len(evs) != 0 {
		t.Fatalf("the same snapshot again: %v %v, want nothing to do", evs, err)
	}
	d.Position = 121
	if evs, _ := DecideSnapshotDiscarded(recorded, d, clock); len(evs) != 1 {
		t.Fatal("another position of the same name was not recorded")
	}
	for _, bad := range []SnapshotDiscarded{{Projections: []string{"x"}}, {File: "1.snap"}} {
		if _, err := DecideSnapshotDiscarded(nil, bad, clock); ErrorCode(err) != EINVALID {
			t.Errorf("%+v: %v, want EINVALID", bad, err)
		}
	}
}
