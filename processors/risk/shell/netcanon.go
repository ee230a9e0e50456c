package shell

import (
	"net/netip"
	"strconv"
	"strings"
)

// canonicalHost is host as a resolver or a socket library would take it:
// lower case, without the trailing dot of a fully qualified name, an IPv4
// address written as one decimal, hex or octal number (2852039166,
// 0xa9fea9fe, 0251.0376.0251.0376) or inside an IPv4-mapped IPv6 address
// ([::ffff:169.254.169.254]) as its dotted quad. A filter that compares
// spellings misses these; every one of them reaches the same service.
func canonicalHost(h string) string {
	h = strings.ToLower(h)
	for {
		n := strings.TrimRight(strings.Trim(h, "[]"), ".")
		if n == h {
			break
		}
		h = n
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		if ip.Is4In6() {
			ip = ip.Unmap()
		}
		return ip.String()
	}
	if ip, ok := numericIPv4(h); ok {
		return ip
	}
	return h
}

// numericIPv4 reads the forms inet_aton accepts: one to four parts, each
// decimal, 0x-hex or 0-octal, the last filling the remaining bytes.
func numericIPv4(h string) (string, bool) {
	if h == "" || strings.Trim(h, "0123456789abcdefx.") != "" {
		return "", false
	}
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return "", false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		if p == "" {
			return "", false
		}
		base := 10
		switch {
		case strings.HasPrefix(p, "0x"):
			base, p = 16, p[2:]
			if p == "" {
				p = "0"
			}
		case len(p) > 1 && p[0] == '0':
			base = 8
		}
		v, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return "", false
		}
		vals[i] = v
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return "", false
		}
		n |= v << (24 - 8*uint(i))
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*uint(5-len(vals))) {
		return "", false
	}
	n |= last
	if len(parts) == 4 && !strings.ContainsAny(h, "x") && !hasLeadingZero(parts) {
		return "", false // a plain dotted quad: netip read it already, or it is not an address
	}
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}).String(), true
}

func hasLeadingZero(parts []string) bool {
	for _, p := range parts {
		if len(p) > 1 && p[0] == '0' {
			return true
		}
	}
	return false
}

// metadataAddr reports whether host (as a URL gives it) is a cloud
// metadata service in any spelling, and names it. The bare name
// "metadata" is Google Cloud's, resolved through the search domain.
func metadataAddr(host string) (string, bool) {
	c := canonicalHost(host)
	if c == "metadata" {
		return "metadata.google.internal", true
	}
	for _, h := range metadataHosts {
		if c == strings.Trim(h, "[]") {
			return h, true
		}
	}
	return "", false
}
