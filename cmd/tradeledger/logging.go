package main

import (
	"fmt"
	"io"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// The formats of serve's log (--log-format).
const (
	LogFormatAuto    = "auto"    // console on a terminal, JSON otherwise
	LogFormatConsole = "console" // for a person: time, level, message, fields
	LogFormatJSON    = "json"    // one JSON object per line, for log collectors
)

// newLogger returns a logger at level (debug, info, warn, error) writing to
// w in format (LogFormatAuto, LogFormatConsole or LogFormatJSON). Lines
// carry their caller, and errors a stack trace, in both formats.
func newLogger(level, format string, w io.Writer) (*zap.Logger, error) {
	lvl, err := zap.ParseAtomicLevel(level)
	if err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	var enc zapcore.Encoder
	switch format {
	case LogFormatAuto, "":
		if isTerminal(w) {
			enc = consoleEncoder()
		} else {
			enc = zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
		}
	case LogFormatConsole:
		enc = consoleEncoder()
	case LogFormatJSON:
		enc = zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	default:
		return nil, fmt.Errorf("--log-format %q: use auto, console or json", format)
	}
	out := zapcore.Lock(zapcore.AddSync(w))
	return zap.New(zapcore.NewCore(enc, out, lvl), zap.AddCaller(), zap.AddStacktrace(zap.ErrorLevel), zap.ErrorOutput(out)), nil
}

// cliLogger is the log of a one-shot command (passwd, import, export, …):
// console lines on w from level up, for the person who ran it.
func cliLogger(w io.Writer, level zapcore.Level) *zap.Logger {
	return zap.New(zapcore.NewCore(consoleEncoder(), zapcore.Lock(zapcore.AddSync(w)), level))
}

func consoleEncoder() zapcore.Encoder {
	cfg := zap.NewDevelopmentEncoderConfig()
	cfg.EncodeTime = zapcore.ISO8601TimeEncoder
	return zapcore.NewConsoleEncoder(cfg)
}
