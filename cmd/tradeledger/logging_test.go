package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/zap"
)

// TestLogFormat: --log-format json writes one JSON object per line, console
// writes lines for a person, auto writes JSON where the log does not go to
// a terminal (a pipe, a file, journald), and an unknown format names the
// flag. serve takes the flag and its environment twin.
func TestLogFormat(t *testing.T) {
	for _, tt := range []struct {
		format string
		json   bool
	}{{LogFormatJSON, true}, {LogFormatConsole, false}, {LogFormatAuto, true}} {
		var buf bytes.Buffer
		logger, err := newLogger("info", tt.format, &buf)
		if err != nil {
			t.Fatal(err)
		}
		logger.Info("listening", zap.String("listen", "127.0.0.1:3000"))
		line := strings.TrimSpace(buf.String())
		var obj map[string]any
		isJSON := json.Unmarshal([]byte(line), &obj) == nil
		if isJSON != tt.json || !strings.Contains(line, "listening") || !strings.Contains(line, "127.0.0.1:3000") {
			t.Errorf("%s: %q, want JSON %v", tt.format, line, tt.json)
		}
		if !tt.json && !strings.Contains(line, "\tINFO\t") {
			t.Errorf("%s: %q, want a tab-separated line with its level", tt.format, line)
		}
	}
	if _, err := newLogger("info", "xml", &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "--log-format") {
		t.Errorf("log format xml: %v, want an error naming --log-format", err)
	}
	m := NewMain()
	if err := m.ParseFlags([]string{"--log-format", "console"}, &Env{Stderr: &bytes.Buffer{}}); err != nil || m.Config.LogFormat != LogFormatConsole {
		t.Errorf("--log-format console: %q, %v", m.Config.LogFormat, err)
	}
	t.Setenv("TRADELEDGER_LOG_FORMAT", "json")
	m = NewMain()
	if err := m.ParseFlags(nil, &Env{Stderr: &bytes.Buffer{}}); err != nil || m.Config.LogFormat != LogFormatJSON {
		t.Errorf("TRADELEDGER_LOG_FORMAT=json: %q, %v", m.Config.LogFormat, err)
	}
}
