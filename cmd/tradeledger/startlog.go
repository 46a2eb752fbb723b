package main

import (
	"net"
	"strings"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/projections"
)

// logStartWarnings warns about a service nobody can log in to, and about
// listeners open beyond this machine without TLS.
func (m *Main) logStartWarnings(passwords *projections.Password) {
	if !passwords.IsRegistered() {
		m.Logger.Warn("no password is set: login is impossible until `tradeledger passwd` runs (or TRADELEDGER_PASSWORD is set at first start)")
	}
	s := m.Server
	if url := s.URL(); !isLoopbackURL(url) && (s.TLSCertFile == "" || s.TLSKeyFile == "") {
		m.Logger.Warn("the API listens beyond this machine without TLS: passwords and tokens cross the network in clear; give --tls-cert and --tls-key, or listen on 127.0.0.1", zap.String("api", url))
	}
	if url := s.FilesURL(); url != "" && !isLoopbackURL(url) {
		m.Logger.Warn("the files listener listens beyond this machine without TLS: configuration and tokens cross the network in clear; --files-listen 127.0.0.1:PORT keeps it local", zap.String("files", url))
	}
}

// dashboardURL is where a browser on this machine finds the dashboard
// of the main listener at apiURL (scheme://host:port): its root, with an
// unspecified listen address (0.0.0.0, ::) named localhost, which a
// browser can open.
func dashboardURL(apiURL string) string {
	scheme, hostport, _ := strings.Cut(apiURL, "://")
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return apiURL + "/"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + "/"
}

// isLoopbackURL reports whether a listener URL (scheme://host:port) is
// bound to a loopback address only.
func isLoopbackURL(url string) bool {
	_, hostport, _ := strings.Cut(url, "://")
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
