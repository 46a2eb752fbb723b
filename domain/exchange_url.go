package domain

import (
	"net"
	"net/url"
	"strings"
)

// CheckExchangeURL checks an exchange entry's url (config.exchanges.<name>.url:
// the API host a connector talks to instead of the exchange's own, for a
// regional host or a proxy): an absolute URL with a host and nothing but
// an optional path prefix, https unless the host is a loopback address
// (127.0.0.1, ::1, localhost: a proxy or a fixture on the same machine),
// since the connector's requests carry the API key and signed requests.
// Anything else is EINVALID naming where.
func CheckExchangeURL(where string, v any) error {
	s, ok := v.(string)
	if !ok {
		return Errorf(EINVALID, "%s must be a URL string, e.g. https://api.binance.us", where)
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Opaque != "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return Errorf(EINVALID, "%s must be an absolute URL with a host and no credentials, query or fragment (e.g. https://api.binance.us), not %.80q", where, s)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !loopbackHost(u.Hostname()) {
			return Errorf(EINVALID, "%s must be https (http only for a loopback host: 127.0.0.1, ::1, localhost), not %.80q", where, s)
		}
	default:
		return Errorf(EINVALID, "%s must be an https URL, not %.80q", where, s)
	}
	return nil
}

// loopbackHost reports whether host is a loopback address or localhost.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
