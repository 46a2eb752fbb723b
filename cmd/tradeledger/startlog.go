package main

import (
	"net"
	"strings"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
)

// hasRealConnector reports whether exchange has a connector that trades
// for real wired into this build. This is the one place that decides it
// (the config routes refuse bot.SIMULATOR false for an exchange without
// one, and the start-up log reads it): none yet, so every exchange trades
// on the paper simulator.
func (m *Main) hasRealConnector(exchange string) bool { return false }

// logTradingModes logs, per configured exchange, whether it trades on
// paper or for real.
func (m *Main) logTradingModes(cfg domain.Config) {
	for _, name := range cfg.ExchangeNames() {
		switch {
		case cfg.Simulator():
			m.Logger.Info("exchange trades on paper (bot.SIMULATOR is true)", zap.String("exchange", name))
		case m.hasRealConnector(name):
			m.Logger.Info("exchange trades for real (bot.SIMULATOR is false)", zap.String("exchange", name))
		default:
			m.Logger.Warn("exchange trades on paper although bot.SIMULATOR is false: there is no real connector for it", zap.String("exchange", name))
		}
	}
}

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
