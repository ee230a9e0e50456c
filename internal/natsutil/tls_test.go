package natsutil

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/internal/datadir"
)

// TestEnsureFleetCARace: processes making the CA in one directory at
// once end with one CA, whoever wins.
func TestEnsureFleetCARace(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	made := make([]bool, 8)
	for i := range made {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if made[i], err = EnsureFleetCA(dir); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	n := 0
	for _, m := range made {
		if m {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d callers made the CA, want 1", n)
	}
	ca, err := LoadFleetCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := LoadCAPool(datadir.CredsAt(dir).FleetCA())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Cert.Verify(x509.VerifyOptions{Roots: pool}); err != nil {
		t.Fatalf("fleet-ca.pem is not the CA in fleet-ca.key: %v", err)
	}
	if fi, _ := os.Stat(datadir.CredsAt(dir).FleetCAKey()); fi.Mode().Perm() != 0o600 {
		t.Errorf("fleet-ca.key mode %v, want 0600", fi.Mode().Perm())
	}
}

// TestEnsureNodeCert: a node keeps a fitting certificate and issues a
// new one when it is another CA's, another node's, misses a host or
// expires soon.
func TestEnsureNodeCert(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	for _, d := range []string{dir, other} {
		if _, err := EnsureFleetCA(d); err != nil {
			t.Fatal(err)
		}
	}
	cert, key := filepath.Join(dir, "tls", "node.pem"), filepath.Join(dir, "tls", "node.key")
	hosts := []string{"127.0.0.1", "10.0.0.1"}
	octa, _ := LoadFleetCA(other)
	ca, _ := LoadFleetCA(dir)
	for _, tc := range []struct {
		name   string
		before func()
		hosts  []string
		issued bool
	}{
		{"none yet", func() {}, hosts, true},
		{"fits", func() {}, hosts, false},
		{"a host more", func() {}, append(hosts, "vigil-a.example"), true},
		{"another CA's", func() { octa.Issue("n1", hosts, NodeValidity, cert, key) }, hosts, true},
		{"another node's", func() { ca.Issue("n2", hosts, NodeValidity, cert, key) }, hosts, true},
		{"expires within RenewBefore", func() { ca.Issue("n1", hosts, RenewBefore-time.Hour, cert, key) }, hosts, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.before()
			issued, err := EnsureNodeCert(dir, "n1", tc.hosts, cert, key)
			if err != nil {
				t.Fatal(err)
			}
			if issued != tc.issued {
				t.Fatalf("issued %v, want %v", issued, tc.issued)
			}
			c, err := LoadCerts(TLSFiles{Cert: cert, Key: key, CA: datadir.CredsAt(dir).FleetCA()})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range tc.hosts {
				if err := c.Leaf().VerifyHostname(h); err != nil {
					t.Errorf("not valid for %s: %v", h, err)
				}
			}
		})
	}
	if _, err := LoadCerts(TLSFiles{Cert: cert, Key: key, CA: datadir.CredsAt(other).FleetCA()}); err == nil {
		t.Error("a certificate of another CA was loaded")
	}
}
