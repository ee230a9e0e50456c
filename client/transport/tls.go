package transport

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nats-io/nats.go"
)

// FleetCAFile is the fleet CA's certificate in a credentials directory,
// beside the role seeds (`vigil creds create` makes it; a fleet copies
// the directory to every node and client).
const FleetCAFile = "fleet-ca.pem"

// LoadCAPool reads a PEM file of CA certificates.
func LoadCAPool(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the TLS CA %s: %w (pass --tls-ca FILE: the fleet's fleet-ca.pem)", path, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("TLS CA %s holds no PEM certificate (pass the fleet's fleet-ca.pem)", path)
	}
	return pool, nil
}

// CAFor is the CA a client of credsFile verifies its server against:
// ca when set, else the FleetCAFile beside credsFile when there is one,
// else "" (no TLS: a single host on loopback).
func CAFor(ca, credsFile string) string {
	if ca != "" || credsFile == "" {
		return ca
	}
	p := filepath.Join(filepath.Dir(credsFile), FleetCAFile)
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) || err != nil {
		return ""
	}
	return p
}

// TLSOption makes a connection require TLS and verify the server's
// certificate against the CA in file (the server's name, or its address,
// must be in the certificate).
func TLSOption(file string) (nats.Option, error) {
	pool, err := LoadCAPool(file)
	if err != nil {
		return nil, err
	}
	return func(o *nats.Options) error {
		if o.TLSConfig == nil {
			o.TLSConfig = &tls.Config{}
		}
		o.TLSConfig.RootCAs = pool
		o.TLSConfig.MinVersion = tls.VersionTLS12
		o.Secure = true
		return nil
	}, nil
}
