package natsutil

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/internal/datadir"
)

// Names of what Vigil issues. The files are in a credentials directory
// (datadir.Creds: fleet-ca.pem, fleet-ca.key, tls/NAME.pem) or a data
// directory (datadir.Layout.NodeCert).
const (
	// NodeOU is the organizational unit of every node certificate Vigil
	// issues; the fleet CA's is CAOU.
	NodeOU = "vigil-node"
	CAOU   = "vigil-fleet-ca"
)

// Validity of what Vigil issues.
const (
	CAValidity   = 10 * 365 * 24 * time.Hour
	NodeValidity = 365 * 24 * time.Hour
	// RenewBefore: a node re-issues its own certificate at start (or on
	// SIGHUP) when it expires within this.
	RenewBefore = 30 * 24 * time.Hour
)

// ErrNoFleetCA means the credentials directory holds no fleet CA key.
var ErrNoFleetCA = errors.New("natsutil: no fleet CA")

// EnsureFleetCA makes the fleet CA in dir (datadir.FleetCAKeyFile, then
// datadir.FleetCAFile) unless dir has one, and reports whether it made it. Two
// processes racing on one directory agree on one CA: the key file is
// created exclusively, and the loser reads the winner's.
func EnsureFleetCA(dir string) (bool, error) {
	keyPath := datadir.CredsAt(dir).FleetCAKey()
	created := false
	if _, err := os.Stat(keyPath); errors.Is(err, fs.ErrNotExist) {
		body, err := newCA()
		if err != nil {
			return false, err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return false, fmt.Errorf("natsutil: create %s: %w", dir, err)
		}
		tmp, err := os.CreateTemp(dir, ".tmp-ca-*")
		if err != nil {
			return false, fmt.Errorf("natsutil: write %s: %w", keyPath, err)
		}
		_, werr := tmp.Write(body)
		if werr == nil {
			werr = tmp.Sync()
		}
		tmp.Close()
		if werr == nil {
			// Link fails when the file exists: the first writer wins.
			if err := os.Link(tmp.Name(), keyPath); err == nil {
				created = true
			} else if !errors.Is(err, fs.ErrExist) {
				werr = err
			}
		}
		os.Remove(tmp.Name())
		if werr != nil {
			return false, fmt.Errorf("natsutil: write %s: %w", keyPath, werr)
		}
	} else if err != nil {
		return false, fmt.Errorf("natsutil: %s: %w", keyPath, err)
	}
	ca, err := LoadFleetCA(dir)
	if err != nil {
		return false, err
	}
	certPath := datadir.CredsAt(dir).FleetCA()
	pemCert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
	if old, err := os.ReadFile(certPath); err != nil || !bytes.Equal(old, pemCert) {
		if err := writeFileAtomic(certPath, pemCert, 0o644); err != nil {
			return false, err
		}
	}
	return created, nil
}

func newCA() ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "Vigil fleet CA", OrganizationalUnit: []string{CAOU}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(CAValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("natsutil: make the fleet CA: %w", err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	pem.Encode(&b, &pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	return b.Bytes(), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic("natsutil: no randomness: " + err.Error())
	}
	return n
}

// FleetCA is the fleet CA's certificate and key.
type FleetCA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// LoadFleetCA reads dir's datadir.FleetCAKeyFile; ErrNoFleetCA when there is none.
func LoadFleetCA(dir string) (*FleetCA, error) {
	path := datadir.CredsAt(dir).FleetCAKey()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: no %s", ErrNoFleetCA, path)
	}
	if err != nil {
		return nil, fmt.Errorf("natsutil: read %s: %w", path, err)
	}
	ca := &FleetCA{}
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			break
		}
		switch blk.Type {
		case "EC PRIVATE KEY":
			if ca.Key, err = x509.ParseECPrivateKey(blk.Bytes); err != nil {
				return nil, fmt.Errorf("natsutil: %s: key: %w", path, err)
			}
		case "CERTIFICATE":
			if ca.Cert, err = x509.ParseCertificate(blk.Bytes); err != nil {
				return nil, fmt.Errorf("natsutil: %s: certificate: %w", path, err)
			}
		}
	}
	if ca.Key == nil || ca.Cert == nil || !ca.Cert.IsCA {
		return nil, fmt.Errorf("natsutil: %s holds no CA key and certificate (remove it and run `vigil creds create` again)", path)
	}
	return ca, nil
}

// Issue makes a node certificate (server and client authentication,
// ECDSA P-256) for name, valid for hosts (IP addresses or DNS names),
// and writes it to certPath and keyPath (0600).
func (ca *FleetCA) Issue(name string, hosts []string, validity time.Duration, certPath, keyPath string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: name, OrganizationalUnit: []string{NodeOU}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			if !slices.ContainsFunc(tmpl.IPAddresses, ip.Equal) {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			}
		} else if h != "" && !slices.Contains(tmpl.DNSNames, h) {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return fmt.Errorf("natsutil: issue the certificate of %s: %w", name, err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(certPath), 0o700); err != nil {
		return err
	}
	if err := writeFileAtomic(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		return err
	}
	return writeFileAtomic(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

// NodeHosts are the names a node's certificate is valid for: the hosts
// of its listen addresses (all of the machine's addresses for a wildcard
// one), the machine's host name, loopback, and extra.
func NodeHosts(listen []string, extra []string) []string {
	hosts := []string{"127.0.0.1", "::1", "localhost"}
	if h, err := os.Hostname(); err == nil {
		hosts = append(hosts, h)
	}
	for _, l := range listen {
		h, _, err := net.SplitHostPort(l)
		if err != nil {
			continue
		}
		if ip := net.ParseIP(h); h == "" || ip != nil && ip.IsUnspecified() {
			if addrs, err := net.InterfaceAddrs(); err == nil {
				for _, a := range addrs {
					if n, ok := a.(*net.IPNet); ok {
						hosts = append(hosts, n.IP.String())
					}
				}
			}
			continue
		}
		hosts = append(hosts, h)
	}
	return append(hosts, extra...)
}

// EnsureNodeCert keeps a node certificate issued by credsDir's fleet CA
// at certPath/keyPath: it issues one when there is none, when the one
// there was issued by another CA, when it expires within RenewBefore, or
// when it does not cover every one of hosts. It reports whether it
// issued one.
func EnsureNodeCert(credsDir, name string, hosts []string, certPath, keyPath string) (bool, error) {
	ca, err := LoadFleetCA(credsDir)
	if err != nil {
		return false, err
	}
	if pair, err := tls.LoadX509KeyPair(certPath, keyPath); err == nil {
		if leaf, err := x509.ParseCertificate(pair.Certificate[0]); err == nil && certFits(leaf, ca.Cert, name, hosts) {
			return false, nil
		}
	}
	if err := ca.Issue(name, hosts, NodeValidity, certPath, keyPath); err != nil {
		return false, err
	}
	return true, nil
}

func certFits(leaf, ca *x509.Certificate, name string, hosts []string) bool {
	if leaf.CheckSignatureFrom(ca) != nil || leaf.Subject.CommonName != name || time.Until(leaf.NotAfter) < RenewBefore {
		return false
	}
	for _, h := range hosts {
		if leaf.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

// LoadCAPool reads a PEM file of CA certificates.
func LoadCAPool(path string) (*x509.CertPool, error) { return transport.LoadCAPool(path) }

// TLSFiles name a node's certificate, its key and the CA its peers and
// clients are verified against.
type TLSFiles struct {
	Cert, Key, CA string
}

// Certs holds a node's certificate and reloads it from its files: the
// TLS configurations it makes read the current one at every handshake,
// so a reload takes effect for new connections without restarting a
// listener or dropping a route. The CA is read once (a new CA needs a
// restart of every node).
type Certs struct {
	files TLSFiles
	pool  *x509.CertPool
	cur   atomic.Pointer[tls.Certificate]
}

// LoadCerts reads files.
func LoadCerts(files TLSFiles) (*Certs, error) {
	if files.Cert == "" || files.Key == "" || files.CA == "" {
		return nil, fmt.Errorf("natsutil: TLS needs a certificate, its key and the CA (--tls-cert, --tls-key, --tls-ca): got cert %q, key %q, CA %q", files.Cert, files.Key, files.CA)
	}
	pool, err := LoadCAPool(files.CA)
	if err != nil {
		return nil, err
	}
	c := &Certs{files: files, pool: pool}
	if err := c.Reload(); err != nil {
		return nil, err
	}
	return c, nil
}

// Reload reads the certificate and key again; on an error the current
// ones stay in use. The new certificate must be verified by the CA.
func (c *Certs) Reload() error {
	pair, err := tls.LoadX509KeyPair(c.files.Cert, c.files.Key)
	if err != nil {
		return fmt.Errorf("natsutil: TLS certificate %s and key %s: %w", c.files.Cert, c.files.Key, err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return fmt.Errorf("natsutil: TLS certificate %s: %w", c.files.Cert, err)
	}
	inter := x509.NewCertPool()
	for _, der := range pair.Certificate[1:] {
		if ic, err := x509.ParseCertificate(der); err == nil {
			inter.AddCert(ic)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: c.pool, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		return fmt.Errorf("natsutil: TLS certificate %s is not issued by the CA in %s: %w", c.files.Cert, c.files.CA, err)
	}
	pair.Leaf = leaf
	c.cur.Store(&pair)
	return nil
}

// Files are the files the certificates are read from.
func (c *Certs) Files() TLSFiles { return c.files }

// Leaf is the certificate in use.
func (c *Certs) Leaf() *x509.Certificate { return c.cur.Load().Leaf }

// Pool is the CA.
func (c *Certs) Pool() *x509.CertPool { return c.pool }

// Fingerprint is the SHA-256 of the certificate in use, hex.
func (c *Certs) Fingerprint() string {
	sum := sha256.Sum256(c.Leaf().Raw)
	return fmt.Sprintf("%x", sum)
}

func (c *Certs) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return c.cur.Load(), nil
}

func (c *Certs) getClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return c.cur.Load(), nil
}

// ServerConfig is the TLS configuration of a listener clients connect to
// (the NATS client port, the HTTP API): the node's certificate, no client
// certificate asked (clients authenticate with their role's key or token).
func (c *Certs) ServerConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: c.getCertificate}
}

// ClusterConfig is the mutual TLS of the cluster port: each side presents
// its node certificate and verifies the other's against the fleet CA, in
// both directions (accepted and solicited routes).
func (c *Certs) ClusterConfig() *tls.Config {
	return &tls.Config{
		MinVersion:           tls.VersionTLS12,
		GetCertificate:       c.getCertificate,
		GetClientCertificate: c.getClientCertificate,
		ClientAuth:           tls.RequireAndVerifyClientCert,
		ClientCAs:            c.pool,
		RootCAs:              c.pool,
	}
}

// RouteAuth authorizes a cluster route only when its TLS handshake
// presented a certificate the fleet CA verified (mutual TLS already
// refuses any other; this refuses a route that somehow came without
// TLS, whatever the options).
type RouteAuth struct{ Logger *slog.Logger }

// Check implements server.Authentication.
func (a RouteAuth) Check(c server.ClientAuthentication) bool {
	st := c.GetTLSConnectionState()
	if st == nil || len(st.VerifiedChains) == 0 {
		if a.Logger != nil {
			a.Logger.Warn("cluster route refused: no certificate of the fleet CA", "remote", remote(c))
		}
		return false
	}
	return true
}
