package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestServeRefusesInsecure: `vigil serve` beyond loopback, or in a
// cluster, without TLS exits non-zero naming the fix, before it starts
// anything.
func TestServeRefusesInsecure(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"NATS on every interface", []string{"--nats-listen", "0.0.0.0:0", "--http-listen", ""}},
		{"HTTP on every interface", []string{"--nats-listen", "127.0.0.1:0", "--http-listen", ":0"}},
		{"cluster with --tls off", []string{"--nats-listen", "127.0.0.1:0", "--http-listen", "", "--cluster", "c", "--cluster-listen", "127.0.0.1:0", "--tls", "off"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			args := append([]string{"serve", "--data", t.TempDir(), "--seal-interval", "0"}, tc.args...)
			code := run(t.Context(), args, strings.NewReader(""), &bytes.Buffer{}, &stderr)
			if code == 0 {
				t.Fatal("serve started")
			}
			for _, want := range []string{"insecure setup refused", "--insecure-lab", "--tls"} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr has no %q:\n%s", want, stderr.String())
				}
			}
		})
	}
}
