package httpapi

import (
	"net"
	"strings"
	"testing"
)

func TestHostServed(t *testing.T) {
	hs, err := newHostSet([]string{"Vigil.Example.", "proxy.example:8443", "10.1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	loop := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7411}
	lan := &net.TCPAddr{IP: net.IPv4(192, 168, 1, 5), Port: 7411}
	port80 := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}
	cases := []struct {
		host  string
		local net.Addr
		want  bool
	}{
		{"127.0.0.1:7411", loop, true},
		{"localhost:7411", loop, true},
		{"LocalHost.:7411", loop, true},
		{"[::1]:7411", loop, true},
		{"localhost", loop, false},
		{"localhost:7412", loop, false},
		{"127.0.0.2:7411", loop, false},
		{"evil.example:7411", loop, false},
		{"localhost.evil.example:7411", loop, false},
		{"192.168.1.5:7411", lan, true},
		{"localhost:7411", lan, false},
		{"127.0.0.1:7411", lan, false},
		{"192.168.1.6:7411", lan, false},
		{"localhost", port80, true},
		{"127.0.0.1", port80, true},
		{"vigil.example", lan, true},
		{"vigil.example:7411", lan, true},
		{"vigil.example:1", nil, true},
		{"proxy.example:8443", nil, true},
		{"proxy.example", lan, false},
		{"10.1.2.3:9", nil, true},
		{"", loop, false},
		{"127.0.0.1:7411:1", loop, false},
		{"evil example:7411", loop, false},
		{"127.0.0.1:7411", nil, false},
	}
	for _, c := range cases {
		if got := hs.served(c.host, c.local); got != c.want {
			t.Errorf("served(%q, %v) = %v, want %v", c.host, c.local, got, c.want)
		}
	}
}

func TestHostSetRefusesBadNames(t *testing.T) {
	_, err := newHostSet([]string{"ok.example", "", "bad name", "x:99999", "http://x"})
	if err == nil {
		t.Fatal("bad hosts accepted")
	}
	for _, want := range []string{`""`, `"bad name"`, `"x:99999"`, `"http://x"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if strings.Contains(err.Error(), "ok.example") {
		t.Errorf("error %q names a good host", err)
	}
}

// FuzzSplitHost: splitHost never panics, and what it accepts is a valid,
// lower-case name that splits to itself again once joined.
func FuzzSplitHost(f *testing.F) {
	for _, s := range []string{"localhost:7411", "[::1]:80", "::1", "Evil.Example.", "a:b:c", "[", "x:", ":80", "1.2.3.4:65536", "é.example"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, port, err := splitHost(s)
		if err != nil {
			return
		}
		if name != strings.ToLower(name) || !validHostName(name) {
			t.Fatalf("splitHost(%q) = %q: not a valid lower-case name", s, name)
		}
		joined := name
		if port != "" {
			joined = net.JoinHostPort(name, port)
		} else if strings.Contains(name, ":") {
			joined = "[" + name + "]"
		}
		n2, p2, err := splitHost(joined)
		if err != nil || n2 != name || p2 != port {
			t.Fatalf("splitHost(%q) = %q %q, but %q splits to %q %q %v", s, name, port, joined, n2, p2, err)
		}
	})
}
