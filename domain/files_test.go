package domain

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidateFileName(t *testing.T) {
	for _, tc := range []struct {
		kind, name string
		ok         bool
	}{
		{FileStrategy, "mine.js", true},
		{FileStrategy, "mine.json", false},
		{FileStrategy, ".js", false},
		{FileStrategy, "../mine.js", false},
		{FileStrategy, "a/mine.js", false},
		{FileStrategy, `a\mine.js`, false},
		{FileStrategy, "mi..ne.js", false},
		{FileStrategy, ".hidden.js", false},
		{FileStrategy, "tab\t.js", false},
		{FileStrategy, strings.Repeat("a", MaxFileNameLen) + ".js", false},
		{FileACVar, "autoconfig-variables.json", true},
		{FileACVar, "vars.js", false},
		{FileState, "binance-USDT-BTC-state.json", true},
		{FileState, "binance-USDT-BTC.json", false},
		{FileAutoconfig, "autoconfig.json", true},
		{FileAutoconfig, "other.json", false},
		{FileCustomEditor, "custom-editor.json", true},
		{FileBackup, "autoconfig.json.1700000000000", true},
		{FileBackup, "autoconfig.json.", false},
		{FileBackup, "autoconfig.json.-1", false},
		{FileBackup, "config.js.1700000000000", false},
		{"nope", "x.json", false},
		{FileStrategy, "", false},
	} {
		err := ValidateFileName(tc.kind, tc.name)
		if (err == nil) != tc.ok || (err != nil && ErrorCode(err) != EINVALID) {
			t.Errorf("ValidateFileName(%s, %q)=%v, want ok=%v", tc.kind, tc.name, err, tc.ok)
		}
	}
}

func TestNewFileWritten(t *testing.T) {
	fw, err := NewFileWritten(FileAutoconfig, AutoconfigFileName, []byte("{ \"a\" : 1 }"))
	if err != nil || string(fw.Content) != `{"a":1}` || fw.SHA256 != FileSHA256([]byte(`{"a":1}`)) {
		t.Fatalf("fw=%+v %v", fw, err)
	}
	fw, err = NewFileWritten(FileStrategy, "s.js", []byte("let x = \"y\"\n"))
	if err != nil || string(fw.Content) != `"let x = \"y\"\n"` || fw.SHA256 != FileSHA256([]byte("let x = \"y\"\n")) {
		t.Fatalf("fw=%+v %v", fw, err)
	}
	for _, tc := range []struct {
		kind, name, content, want string
	}{
		{FileAutoconfig, AutoconfigFileName, "[1]", "document must be a JSON object"},
		{FileAutoconfig, AutoconfigFileName, "{", "document not valid JSON"},
		{FileStrategy, "s.js", strings.Repeat("x", MaxFileBytes+1), "document is larger than"},
		{FileStrategy, "s.txt", "x", "must end in .js"},
	} {
		if _, err := NewFileWritten(tc.kind, tc.name, []byte(tc.content)); !invalidAsWanted(err, tc.want) {
			t.Errorf("NewFileWritten(%s, %s)=%v, want %q", tc.kind, tc.name, err, tc.want)
		}
	}
}

// FuzzFileName: a name ValidateFileName accepts is a plain file name in
// one directory (no separator, no "..", no leading dot, no control
// character, valid UTF-8 so that it survives JSON unchanged, at most
// MaxFileNameLen bytes) for every kind.
func FuzzFileName(f *testing.F) {
	for _, s := range []string{"a.js", "../a.js", "a/b.js", `a\b.js`, ".a.js", "a..js", "autoconfig.json", "autoconfig.json.1700000000000",
		"binance-USDT-BTC-state.json", "vars.json", "custom-editor.json", "a\x00.js", "\xff.js", "c:x.js", strings.Repeat("a", 126) + ".js"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		for _, kind := range FileKinds {
			if ValidateFileName(kind, name) != nil {
				continue
			}
			if len(name) > MaxFileNameLen || strings.ContainsAny(name, `/\:`) || strings.Contains(name, "..") || strings.HasPrefix(name, ".") ||
				filepath.Base(name) != name || filepath.Clean(name) != name || hasControl(name) {
				t.Fatalf("%s name %q accepted", kind, name)
			}
			b, _ := json.Marshal(name)
			var back string
			if json.Unmarshal(b, &back) != nil || back != name {
				t.Fatalf("%s name %q does not survive JSON: %q", kind, name, back)
			}
		}
	})
}
