package domain

import "testing"

func TestDecideLogCutAccepted(t *testing.T) {
	ok := LogCutAccepted{Kept: 207, TreeRecords: 209, LostFrom: 208, LostTo: 209, Problem: "the event log was cut at its end"}
	cases := []struct {
		name              string
		c                 LogCutAccepted
		types, code, text string
	}{
		{"cut", ok, TypeLogCutAccepted, "", ""},
		{"tree and log cut together", LogCutAccepted{Kept: 207, TreeRecords: 207, Checkpoint: &CheckpointSigned{Size: 209}, LostFrom: 208, LostTo: 210, Problem: "cut"}, TypeLogCutAccepted, "", ""},
		{"nothing found", LogCutAccepted{Kept: 207, TreeRecords: 209, LostFrom: 208, LostTo: 209}, "", EINVALID, "what was found"},
		{"no positions", LogCutAccepted{Kept: 207, TreeRecords: 209, Problem: "p"}, "", EINVALID, "positions lost"},
		{"backwards", LogCutAccepted{Kept: 207, TreeRecords: 209, LostFrom: 209, LostTo: 208, Problem: "p"}, "", EINVALID, "positions lost"},
		{"keeps more than the tree", LogCutAccepted{Kept: 210, TreeRecords: 209, LostFrom: 208, LostTo: 209, Problem: "p"}, "", EINVALID, "keeps 210"},
	}
	for _, tc := range cases {
		events, err := DecideLogCutAccepted(tc.c, decideClock)
		checkDecision(t, tc.name, events, err, tc.types, tc.code, tc.text)
	}
}
