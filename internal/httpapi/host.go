package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Host and Origin: the API answers only the Host values it serves, so a
// web page on another name that a DNS server rebinds to this address (a
// DNS-rebinding attack: the browser believes it talks to evil.example,
// and sends Host: evil.example) gets 421 Misdirected Request on every
// route, before any handler runs, and so spends no limit (pairing's rate
// limit included). The Hosts served are
//
//   - the address the connection arrived on (its local IP and port, which
//     is the listen address, or for a wildcard listen the interface's);
//   - when that address is loopback, localhost, 127.0.0.1 and [::1] with
//     its port;
//   - the names configured (Config.Hosts, `vigil serve --http-host`): a
//     bare name matches with no port (behind a reverse proxy on 80 or
//     443) or with the connection's port; NAME:PORT matches exactly.
//
// A Host without a port matches the connection's address only on port 80.
// A browser's Origin (checkSameOrigin) must name one of the same hosts;
// it is never compared with the request's own Host, which the attacker's
// page chooses as much as its Origin.

// ErrHost: a configured host name is not a host name.
var ErrHost = errors.New("httpapi: a host is a DNS name or an IP address, with an optional :port")

// hostSet is the names configured beyond the connection's own address,
// lower-cased, without a trailing dot.
type hostSet struct {
	// bare are the names configured without a port: they match with any
	// port, or none.
	bare map[string]bool
	// exact are the NAME:PORT configured, as net.JoinHostPort spells them.
	exact map[string]bool
}

// newHostSet parses the configured hosts, naming every bad one.
func newHostSet(hosts []string) (hostSet, error) {
	hs := hostSet{bare: map[string]bool{}, exact: map[string]bool{}}
	var errs []error
	for _, h := range hosts {
		name, port, err := splitHost(h)
		if err != nil || name == "" {
			errs = append(errs, fmt.Errorf("host %q: %w", h, ErrHost))
			continue
		}
		if port == "" {
			hs.bare[name] = true
		} else {
			hs.exact[net.JoinHostPort(name, port)] = true
		}
	}
	return hs, errors.Join(errs...)
}

// splitHost splits a Host value into its lower-cased name (an IPv6
// address without brackets) and port ("" when absent).
func splitHost(h string) (name, port string, err error) {
	h = strings.ToLower(strings.TrimSpace(h))
	if h == "" {
		return "", "", ErrHost
	}
	if strings.HasPrefix(h, "[") || strings.Count(h, ":") == 1 {
		if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
			name = h[1 : len(h)-1]
		} else if name, port, err = net.SplitHostPort(h); err != nil {
			return "", "", err
		}
	} else {
		name = h
	}
	name = strings.TrimSuffix(name, ".")
	if port != "" {
		if p, ok := parsePort(port); !ok || p == 0 {
			return "", "", ErrHost
		}
	}
	if !validHostName(name) {
		return "", "", ErrHost
	}
	return name, port, nil
}

func parsePort(s string) (int, bool) {
	if s == "" || len(s) > 5 {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n <= 65535
}

// validHostName: an IP address, or a DNS name of letters, digits, - and .
func validHostName(name string) bool {
	if _, err := netip.ParseAddr(name); err == nil {
		return true
	}
	if name == "" || len(name) > 253 {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// served reports whether host (a Host header, or an Origin's host) names
// this server for a connection whose local address is local (nil when
// unknown: only the configured names match then).
func (hs hostSet) served(host string, local net.Addr) bool {
	name, port, err := splitHost(host)
	if err != nil {
		return false
	}
	if hs.bare[name] || (port != "" && hs.exact[net.JoinHostPort(name, port)]) {
		return true
	}
	ap, ok := addrPort(local)
	if !ok {
		return false
	}
	lport := fmt.Sprint(ap.Port())
	if port != lport && !(port == "" && lport == "80") {
		return false
	}
	if ip, err := netip.ParseAddr(name); err == nil {
		if ip.Unmap() == ap.Addr().Unmap() {
			return true
		}
		// A connection to loopback may name 127.0.0.1 or ::1.
		return ap.Addr().IsLoopback() && (ip == netip.IPv6Loopback() || ip.Unmap() == netip.AddrFrom4([4]byte{127, 0, 0, 1}))
	}
	return ap.Addr().IsLoopback() && name == "localhost"
}

// addrPort is a TCP address as a netip.AddrPort.
func addrPort(a net.Addr) (netip.AddrPort, bool) {
	if a == nil {
		return netip.AddrPort{}, false
	}
	if t, ok := a.(*net.TCPAddr); ok {
		return t.AddrPort(), true
	}
	ap, err := netip.ParseAddrPort(a.String())
	return ap, err == nil
}

// localAddr is the address the request's connection arrived on.
func localAddr(ctx context.Context) net.Addr {
	a, _ := ctx.Value(http.LocalAddrContextKey).(net.Addr)
	return a
}

// hostServed reports whether r's Host names this server.
func (s *Server) hostServed(r *http.Request) bool {
	return s.hosts.served(r.Host, localAddr(r.Context()))
}

// originServed reports whether a browser Origin (scheme://host[:port])
// names this server: one of the hosts it serves, over http or https.
func (s *Server) originServed(r *http.Request, origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" || u.User != nil || u.Host == "" {
		return false
	}
	host := u.Host
	if u.Port() == "" && u.Scheme == "https" {
		// https://name: a TLS proxy in front; only a configured name can be it.
		return s.hosts.bare[strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")]
	}
	return s.hosts.served(host, localAddr(r.Context()))
}

// checkHost answers 421 for a request whose Host this server does not
// serve, before the mux: no route, no limit, no log entry is reached.
func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostServed(r) {
			s.metrics.refused("misdirected")
			w.Header().Set("Cache-Control", "no-store")
			writeError(w, &apiError{Status: http.StatusMisdirectedRequest, Field: "Host", reason: "misdirected",
				Message: fmt.Sprintf("this server does not serve Host %q: use its address (or localhost), or start it with --http-host NAME", clip(r.Host, 256))})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// clip bounds a string echoed in an error.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return cut(s, n)
}
