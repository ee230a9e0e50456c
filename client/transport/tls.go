package transport

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

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

// TLSOption makes a connection verify the server's certificate against
// the CA in file (the server's name, or its address, must be in the
// certificate). With require the connection is TLS or none; without it,
// a server that offers no TLS is spoken to in clear (see TLSRequired).
func TLSOption(file string, require bool) (nats.Option, error) {
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
		if require {
			o.Secure = true
		}
		return nil
	}, nil
}

// TLSRequired reports whether a client must speak TLS to urls (a comma
// list): when the CA was named (explicit), or when any URL is not on
// loopback or asks for tls://. A CA found only beside the credentials,
// for a loopback server, is used when that server speaks TLS (a fleet on
// one machine) and not required of it (a single host, whose credentials
// directory holds the CA too once `vigil creds create` ran).
func TLSRequired(urls string, explicit bool) bool {
	if explicit {
		return true
	}
	for _, u := range strings.Split(urls, ",") {
		u = strings.TrimSpace(u)
		if u == "" {
			continue
		}
		pu, err := url.Parse(u)
		if err != nil || pu.Host == "" {
			if pu, err = url.Parse("nats://" + u); err != nil {
				return true
			}
		}
		if pu.Scheme == "tls" {
			return true
		}
		h := pu.Hostname()
		if ip := net.ParseIP(h); h != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return true
		}
	}
	return false
}
