package node

import (
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// TestPrepareTLSRefusesInsecure: what must not run in clear is refused
// with the fix named, unless the lab mode says so; a single host on
// loopback needs nothing.
func TestPrepareTLSRefusesInsecure(t *testing.T) {
	cluster := natsutil.ClusterConfig{Name: "c", Listen: "127.0.0.1:-1"}
	for _, tc := range []struct {
		name    string
		cfg     Config
		refused bool
		tls     bool
	}{
		{"single host on loopback", Config{NATSListen: "127.0.0.1:4222", HTTPListen: "127.0.0.1:7411"}, false, false},
		{"empty host is loopback for NATS", Config{NATSListen: ":4222"}, false, false},
		{"NATS on every interface", Config{NATSListen: "0.0.0.0:4222"}, true, false},
		{"NATS on an address", Config{NATSListen: "10.0.0.1:4222"}, true, false},
		{"HTTP on every interface", Config{NATSListen: "127.0.0.1:4222", HTTPListen: ":7411"}, true, false},
		{"cluster on loopback without TLS", Config{NATSListen: "127.0.0.1:-1", Cluster: cluster, TLSMode: TLSOff}, true, false},
		{"cluster without TLS in the lab", Config{NATSListen: "127.0.0.1:-1", Cluster: cluster, TLSMode: TLSOff, InsecureLab: true}, false, false},
		{"NATS beyond loopback in the lab", Config{NATSListen: "0.0.0.0:4222", InsecureLab: true}, false, false},
		{"cluster: TLS by default", Config{NATSListen: "127.0.0.1:-1", Cluster: cluster}, false, true},
		{"single host with --tls on", Config{NATSListen: "0.0.0.0:4222", TLSMode: TLSOn}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.DataDir = t.TempDir()
			cfg.NodeName = "n1"
			cfg.Logger = slog.New(slog.DiscardHandler)
			err := PrepareTLS(&cfg)
			if tc.refused != errors.Is(err, ErrInsecure) {
				t.Fatalf("err %v, refused want %v", err, tc.refused)
			}
			if tc.refused && !strings.Contains(err.Error(), "--insecure-lab") {
				t.Errorf("the refusal names no fix: %v", err)
			}
			if !tc.refused && err != nil {
				t.Fatal(err)
			}
			if (cfg.Certs != nil) != tc.tls {
				t.Fatalf("TLS %v, want %v", cfg.Certs != nil, tc.tls)
			}
			if tc.tls && cfg.Certs.Leaf().VerifyHostname("127.0.0.1") != nil {
				t.Error("the node's own certificate does not cover loopback")
			}
		})
	}
}

// TestPrepareTLSOperatorFiles: the operator's certificate is used as
// given, and one the CA did not issue is refused.
func TestPrepareTLSOperatorFiles(t *testing.T) {
	ca := t.TempDir()
	if _, err := natsutil.EnsureFleetCA(ca); err != nil {
		t.Fatal(err)
	}
	c, err := natsutil.LoadFleetCA(ca)
	if err != nil {
		t.Fatal(err)
	}
	cert, key := filepath.Join(ca, "a.pem"), filepath.Join(ca, "a.key")
	if err := c.Issue("a", []string{"10.0.0.1"}, natsutil.NodeValidity, cert, key); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	if _, err := natsutil.EnsureFleetCA(other); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, ca string
		ok       bool
	}{
		{"its CA", datadir.CredsAt(ca).FleetCA(), true},
		{"another CA", datadir.CredsAt(other).FleetCA(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{DataDir: t.TempDir(), NodeName: "a", NATSListen: "10.0.0.1:4222", TLSCert: cert, TLSKey: key, TLSCA: tc.ca, Logger: slog.New(slog.DiscardHandler)}
			err := PrepareTLS(&cfg)
			if tc.ok != (err == nil) {
				t.Fatalf("err %v, want ok %v", err, tc.ok)
			}
			if tc.ok && cfg.Certs.Files().Cert != cert {
				t.Errorf("using %s, want the operator's %s", cfg.Certs.Files().Cert, cert)
			}
		})
	}
}
