package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// The start log's serving line names the dashboard's address, and the
// dashboard is there.
func TestServeLogsTheDashboardURL(t *testing.T) {
	t.Setenv("TRADELEDGER_WALLET", "0x7f3a9c2b4e5d6f708192a3b4c5d6e7f8")
	t.Setenv("TRADELEDGER_PASSWORD", "start log password")
	m := NewMain()
	m.Config.Data, m.Config.Listen, m.Config.FilesListen = filepath.Join(t.TempDir(), "data"), "127.0.0.1:0", ""
	logger, logs := observed()
	m.Logger = logger
	if err := m.Run(context.Background()); err != nil {
		m.Close()
		t.Fatal(err)
	}
	defer m.Close()
	want := m.Server.URL() + "/"
	if !strings.Contains(messages(logs), "info serving dashboard="+want+" api=") {
		t.Fatalf("no serving line naming the dashboard %s in:\n%s", want, messages(logs))
	}
	resp, err := http.Get(want)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "<title>Tradeledger</title>") {
		t.Fatalf("GET %s = %d %.200s, want the dashboard", want, resp.StatusCode, body)
	}
}

func TestDashboardURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:3000": "http://127.0.0.1:3000/",
		"https://0.0.0.0:3000":  "https://localhost:3000/",
		"http://[::]:3000":      "http://localhost:3000/",
		"http://192.168.1.5:80": "http://192.168.1.5:80/",
		"http://[::1]:3000":     "http://[::1]:3000/",
	} {
		if got := dashboardURL(in); got != want {
			t.Errorf("dashboardURL(%s) = %s, want %s", in, got, want)
		}
	}
}
