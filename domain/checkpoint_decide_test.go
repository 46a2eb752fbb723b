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

func TestWitnessRecords(t *testing.T) {
	cos := func(size int64) CheckpointCosigned {
		return CheckpointCosigned{Origin: "o", Size: size, Root: "r", Witness: "w", Key: "w+1+k", Signature: "— w x\n"}
	}
	if _, err := DecideCheckpointCosigned(CheckpointCosigned{Origin: "o"}, decideClock); ErrorCode(err) != EINVALID {
		t.Fatalf("incomplete cosignature: %v, want EINVALID", err)
	}
	records := map[string]WitnessRecord{}
	apply := func(es []Event, err error) {
		t.Helper()
		if err != nil || len(es) != 1 {
			t.Fatalf("decided %v, %v", es, err)
		}
		if err := ApplyWitnessEvent(records, &es[0]); err != nil {
			t.Fatal(err)
		}
	}
	apply(DecideCheckpointCosigned(cos(10), decideClock))
	apply(DecideCheckpointCosigned(cos(8), decideClock)) // late answer to an older checkpoint
	if got := records["w+1+k"].Cosigned.Size; got != 10 {
		t.Fatalf("cosigned size = %d, want 10 (an older one does not go back)", got)
	}
	ref := WitnessRefused{Origin: "o", Size: 12, Root: "r2", Witness: "w", Key: "w+1+k", WitnessSize: 11, Status: 422}
	apply(DecideWitnessRefused(records["w+1+k"], ref, decideClock))
	if es, err := DecideWitnessRefused(records["w+1+k"], ref, decideClock); err != nil || len(es) != 0 {
		t.Fatalf("the same refusal again: %v, %v, want nothing", es, err)
	}
	if records["w+1+k"].Refused == nil || records["w+1+k"].Cosigned.Size != 10 {
		t.Fatalf("record = %+v", records["w+1+k"])
	}
	apply(DecideCheckpointCosigned(cos(13), decideClock))
	if records["w+1+k"].Refused != nil {
		t.Fatal("a later cosignature did not clear the refusal")
	}
}
