package main

import (
	"io"
	"strings"
	"testing"
)

// --trusted-proxies (and its env twin) takes CIDRs or addresses; anything
// else stops serve before it starts, naming the flag.
func TestServeTrustedProxiesFlag(t *testing.T) {
	env := &Env{Stdout: io.Discard, Stderr: io.Discard}
	m := NewMain()
	if err := m.ParseFlags([]string{"--trusted-proxies", "10.0.0.0/8, 192.0.2.7"}, env); err != nil {
		t.Fatal(err)
	}
	if got := m.Config.TrustedProxies; got != "10.0.0.0/8, 192.0.2.7" {
		t.Fatalf("TrustedProxies = %q", got)
	}
	err := NewMain().ParseFlags([]string{"--trusted-proxies", "10.0.0.0/8,proxy.local"}, env)
	if err == nil || !strings.Contains(err.Error(), "--trusted-proxies") || !strings.Contains(err.Error(), "proxy.local") {
		t.Fatalf("bad CIDR: err = %v", err)
	}
	t.Setenv("TRADELEDGER_TRUSTED_PROXIES", "172.16.0.0/12")
	m = NewMain()
	if err := m.ParseFlags(nil, env); err != nil || m.Config.TrustedProxies != "172.16.0.0/12" {
		t.Fatalf("env twin: %q, %v", m.Config.TrustedProxies, err)
	}
}
