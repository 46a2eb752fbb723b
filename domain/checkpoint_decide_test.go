package domain

import "testing"

func TestDecideCheckpoint(t *testing.T) {
	c := func(size int64) CheckpointSigned {
		return CheckpointSigned{Origin: "tradeledger/log/1", Size: size, Root: "root", Note: "note"}
	}
	last := CheckpointState{Version: -1}
	e, err := DecideCheckpoint(last, c(10), decideClock)
	checkDecision(t, "first", e, err, TypeCheckpointSigned, "", "")
	if last, err = ApplyCheckpointEvent(last, &e[0]); err != nil || last.Size != 10 {
		t.Fatalf("applied %+v (%v), want size 10", last, err)
	}
	e[0].Version = 0
	last, _ = ApplyCheckpointEvent(CheckpointState{Version: -1}, &e[0])
	cases := []struct {
		name              string
		st                CheckpointState
		c                 CheckpointSigned
		types, code, text string
	}{
		{"grown", last, c(11), TypeCheckpointSigned, "", ""},
		{"same size", last, c(10), "", "", ""},
		{"shrunk", last, c(9), "", EINVALID, "below the last checkpoint's 10"},
		{"empty tree first", CheckpointState{Version: -1}, c(0), TypeCheckpointSigned, "", ""},
		{"no note", last, CheckpointSigned{Origin: "o", Size: 12, Root: "r"}, "", EINVALID, "signed note"},
	}
	for _, tc := range cases {
		events, err := DecideCheckpoint(tc.st, tc.c, decideClock)
		checkDecision(t, tc.name, events, err, tc.types, tc.code, tc.text)
	}
}
