package domain

import (
	"testing"

	"github.com/tradeledger/tradeledger/domain/secrets"
)

func TestDecideFiles(t *testing.T) {
	cases := []struct {
		name              string
		decide            func() ([]Event, error)
		types, code, text string
	}{
		{"write", func() ([]Event, error) {
			return DecideFileWrite(FileCustomEditor, CustomEditorFileName, []byte(`{"a":1}`), decideClock)
		}, TypeFileWritten, "", ""},
		{"write not JSON", func() ([]Event, error) {
			return DecideFileWrite(FileCustomEditor, CustomEditorFileName, []byte(`[1]`), decideClock)
		}, "", EINVALID, "document"},
		{"write bad name", func() ([]Event, error) {
			return DecideFileWrite(FileStrategy, "../x.js", []byte(`x`), decideClock)
		}, "", EINVALID, "filename"},
		{"create new", func() ([]Event, error) {
			return DecideFileCreate(false, FileBackup, BackupFileName(1), []byte(`{}`), decideClock)
		}, TypeFileWritten, "", ""},
		{"create existing", func() ([]Event, error) {
			return DecideFileCreate(true, FileBackup, BackupFileName(1), []byte(`{}`), decideClock)
		}, "", ECONFLICT, "exists"},
		{"delete", func() ([]Event, error) {
			return DecideFileDelete(true, FileStrategy, "mine.js", decideClock)
		}, TypeFileDeleted, "", ""},
		{"delete missing", func() ([]Event, error) {
			return DecideFileDelete(false, FileStrategy, "mine.js", decideClock)
		}, "", ENOTFOUND, `strategy file "mine.js" not found`},
	}
	for _, tc := range cases {
		events, err := tc.decide()
		checkDecision(t, tc.name, events, err, tc.types, tc.code, tc.text)
	}
	events, _ := DecideFileWrite(FileStrategy, "mine.js", []byte("let x = 1"), decideClock)
	var fw FileWritten
	if err := events[0].Decode(&fw); err != nil {
		t.Fatal(err)
	}
	if fw.Kind != FileStrategy || fw.Name != "mine.js" || string(fw.Content) != `"let x = 1"` || fw.SHA256 != FileSHA256([]byte("let x = 1")) {
		t.Fatalf("payload=%+v", fw)
	}
}

func TestDecideSystem(t *testing.T) {
	cases := []struct {
		running, start bool
		types          string
	}{
		{false, true, TypeSystemStarted},
		{true, true, ""},
		{true, false, TypeSystemStopped},
		{false, false, ""},
	}
	for _, tc := range cases {
		if got := eventTypes(DecideSystem(tc.running, tc.start, decideClock)); got != tc.types {
			t.Fatalf("running %v, start %v: events=%q, want %q", tc.running, tc.start, got, tc.types)
		}
	}
}

func TestDecideLogins(t *testing.T) {
	var f LoginFailed
	if err := DecideLoginFailed("10.0.0.1", secrets.LoginReasonPassword, decideClock)[0].Decode(&f); err != nil || f.RemoteAddr != "10.0.0.1" || f.Reason != secrets.LoginReasonPassword {
		t.Fatalf("LoginFailed=%+v, %v", f, err)
	}
	var s LoginSucceeded
	if err := DecideLoginSucceeded("login", "10.0.0.1", decideClock)[0].Decode(&s); err != nil || s.Subject != "login" || s.RemoteAddr != "10.0.0.1" {
		t.Fatalf("LoginSucceeded=%+v, %v", s, err)
	}
}
