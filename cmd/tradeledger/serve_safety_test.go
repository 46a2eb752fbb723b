package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// observed returns a logger recording every entry at info and above.
func observed() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.InfoLevel)
	return zap.New(core), logs
}

// messages returns the logged messages, one per line, with level.
func messages(logs *observer.ObservedLogs) string {
	var b strings.Builder
	for _, e := range logs.All() {
		b.WriteString(e.Level.String() + " " + e.Message)
		for _, f := range e.Context {
			if f.Type == zapcore.StringType {
				b.WriteString(" " + f.Key + "=" + f.String)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// A second serve on the same data dir is refused at start, naming the
// process that serves it; operator commands keep working beside it; once
// the first stops, serve starts again.
func TestOneServePerDataDir(t *testing.T) {
	t.Setenv("TRADELEDGER_WALLET", "0x7f3a9c2b4e5d6f708192a3b4c5d6e7f8")
	t.Setenv("TRADELEDGER_PASSWORD", "first password")
	dir := filepath.Join(t.TempDir(), "data")
	first := startServe(t, dir)
	defer first.Close()

	second := NewMain()
	second.Config.Data, second.Config.Listen, second.Config.FilesListen = dir, "127.0.0.1:0", ""
	second.Logger = zap.NewNop()
	err := second.Run(context.Background())
	second.Close()
	if err == nil || !strings.Contains(err.Error(), "already served by process "+strconv.Itoa(os.Getpid())) || !strings.Contains(err.Error(), "one serve per data dir") {
		t.Fatalf("second serve on the same dir: %v, want a refusal naming the serving process", err)
	}

	// Read-only commands, and the appending ones, run beside it.
	for _, args := range [][]string{
		{"verify", "--data", dir},
		{"replay", "--data", dir, "--position", "2"},
		{"restore", "--data", dir, "--out", filepath.Join(t.TempDir(), "restored")},
		{"wallet", "--data", dir},
		{"import", "--data", dir, "--from", gunbotExampleDir},
	} {
		if out, errOut, err := importRun(t, args...); err != nil {
			t.Fatalf("%s beside a serving process: %v\n%s%s", args[0], err, out, errOut)
		}
	}
	if _, err := passwdRun(t, dir, "second password\n"); err != nil {
		t.Fatalf("passwd beside a serving process: %v", err)
	}

	first.Close()
	again := startServe(t, dir)
	again.Close()
}

// --listen defaults to loopback; a listener beyond it without TLS is
// warned about at start, as is a service nobody can log in to; the log
// says per exchange whether it trades on paper.
func TestServeStartLog(t *testing.T) {
	if got := NewMain().Config.Listen; got != "127.0.0.1:3000" {
		t.Fatalf("default --listen %q, want 127.0.0.1:3000", got)
	}
	for url, want := range map[string]bool{
		"http://127.0.0.1:3000": true, "http://[::1]:3000": true, "https://127.0.0.2:1": true,
		"http://0.0.0.0:3000": false, "http://[::]:3000": false, "http://192.168.1.10:3000": false, "": false,
	} {
		if got := isLoopbackURL(url); got != want {
			t.Errorf("isLoopbackURL(%q) = %v, want %v", url, got, want)
		}
	}

	t.Setenv("TRADELEDGER_WALLET", "0x7f3a9c2b4e5d6f708192a3b4c5d6e7f8")
	t.Setenv("TRADELEDGER_PASSWORD", "")
	logger, logs := observed()
	m := NewMain()
	m.Config.Data, m.Config.Listen, m.Config.FilesListen = filepath.Join(t.TempDir(), "data"), "0.0.0.0:0", "127.0.0.1:0"
	m.Logger = logger
	if err := m.Run(context.Background()); err != nil {
		m.Close()
		t.Fatal(err)
	}
	m.Close()
	got := messages(logs)
	for _, want := range []string{
		"warn no password is set: login is impossible until `tradeledger passwd` runs",
		"warn the API listens beyond this machine without TLS",
		"info exchange connector exchange=binance connector=paper reason=bot.SIMULATOR is true",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("start-up log lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "files listener listens beyond") {
		t.Errorf("warned about a loopback files listener:\n%s", got)
	}
}

// Orders placed, filled, cancelled and rejected, and the bot's start, each
// give one info line; history replayed at start gives none.
func TestServeLogsOrders(t *testing.T) {
	logger, logs := observed()
	e := startTradingE2EWith(t, logger)
	base := map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.01}
	e.startManualPair("binance", "USDT-BTC")
	e.cycle("60000")
	e.order("trade/buy/market", base)
	ls := e.order("trade/sell", map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 0.01, "price": 70000})
	if status, out := e.post("trade/cancel", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "id": strconv.FormatInt(ls, 10), "price": 70000, "type": "limit"}}, ""); status != 200 {
		t.Fatalf("trade/cancel = %d %v", status, out)
	}
	e.post("trade/buy/market", map[string]any{"data": map[string]any{"exch": "binance", "pair": "USDT-BTC", "amt": 1000}}, "") // more than the balance
	e.head()
	if err := e.m.Runner.WaitFor(context.Background(), e.head()); err != nil {
		t.Fatal(err)
	}
	got := messages(logs)
	for _, want := range []string{"info configuration changed", "info bot started", "info order placed", "info order filled", "info order cancelled", "info order rejected"} {
		if strings.Count(got, want) < 1 {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "info order filled"); n != 1 {
		t.Errorf("%d order filled lines, want 1:\n%s", n, got)
	}
	if strings.Contains(got, "e2e trading password") || strings.Contains(got, e2eWallet) {
		t.Errorf("a secret in the log:\n%s", got)
	}
}
