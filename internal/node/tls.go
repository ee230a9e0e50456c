package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node/integrity"
)

// TLS modes (Config.TLSMode).
const (
	// TLSAuto, the default: TLS on every listener of a cluster node, none
	// on a single host (which must then listen on loopback only).
	TLSAuto = "auto"
	TLSOn   = "on"
	TLSOff  = "off"
)

// ErrInsecure means a node would listen beyond loopback, or route to
// other nodes, without TLS: it refuses to start (Config.InsecureLab
// allows it).
var ErrInsecure = errors.New("insecure setup refused")

// TLSInfo is what serve.json, the fleet bucket and `vigil status` say of
// a node's certificate.
type TLSInfo struct {
	Node        string    `json:"node"`
	Cert        string    `json:"cert,omitempty"`
	CA          string    `json:"ca,omitempty"`
	Subject     string    `json:"subject,omitempty"`
	NotAfter    time.Time `json:"not_after,omitzero"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	// InsecureLab: the node runs without TLS beyond a single host on
	// loopback because it was told to (--insecure-lab).
	InsecureLab bool   `json:"insecure_lab,omitempty"`
	Updated     string `json:"updated"`
}

// FleetTLSPrefix is the key prefix, in integrity.FleetBucket, of each node's
// TLSInfo (FleetTLSPrefix + node name).
const FleetTLSPrefix = "tls."

// tlsOn reports whether the node's listeners speak TLS.
func (c *Config) tlsOn() bool {
	switch c.TLSMode {
	case TLSOn:
		return true
	case TLSOff:
		return false
	}
	return c.TLSCert != "" || c.Cluster.Name != ""
}

// PrepareTLS settles the node's TLS before anything listens: with TLS
// on, it loads the node's certificate (TLSCert and TLSKey, verified by
// TLSCA; or, when TLSCert is empty, one the node issues itself from the
// fleet CA in CredsDir, made there first if there is none) into
// cfg.Certs; with TLS off it refuses (ErrInsecure) a listener beyond
// loopback or a cluster, unless InsecureLab. A node attaching to a NATS
// it does not run (NATSURL) only checks its HTTP listener. Start calls
// it when the caller has not.
func PrepareTLS(cfg *Config) error {
	if cfg.Certs != nil || cfg.tlsPrepared {
		return nil
	}
	if cfg.CredsDir == "" {
		cfg.CredsDir = datadir.New(cfg.DataDir).Creds().Dir()
	}
	switch cfg.TLSMode {
	case "", TLSAuto, TLSOn, TLSOff:
	default:
		return fmt.Errorf("TLS mode %q: use %q, %q or %q", cfg.TLSMode, TLSAuto, TLSOn, TLSOff)
	}
	cfg.tlsPrepared = true
	if !cfg.tlsOn() || (cfg.NATSURL != "" && cfg.HTTPListen == "") {
		return cfg.checkInsecure()
	}
	files := natsutil.TLSFiles{Cert: cfg.TLSCert, Key: cfg.TLSKey, CA: cfg.TLSCA}
	if files.Cert == "" {
		if files.Key != "" {
			return errors.New("--tls-key needs --tls-cert (the certificate of that key)")
		}
		if _, err := natsutil.EnsureFleetCA(cfg.CredsDir); err != nil {
			return err
		}
		files.Cert, files.Key = datadir.New(cfg.DataDir).NodeCert(), datadir.New(cfg.DataDir).NodeKey()
		if err := cfg.issueNodeCert(files); err != nil {
			return err
		}
		if files.CA == "" {
			files.CA = datadir.CredsAt(cfg.CredsDir).FleetCA()
		}
	} else if files.Key == "" {
		return fmt.Errorf("--tls-cert %s needs --tls-key (its private key)", files.Cert)
	}
	if files.CA == "" {
		files.CA = datadir.CredsAt(cfg.CredsDir).FleetCA()
	}
	certs, err := natsutil.LoadCerts(files)
	if err != nil {
		return err
	}
	cfg.Certs = certs
	return nil
}

// issueNodeCert keeps the node's own certificate current (see
// natsutil.EnsureNodeCert).
func (c *Config) issueNodeCert(files natsutil.TLSFiles) error {
	hosts := natsutil.NodeHosts([]string{c.NATSListen, c.Cluster.Listen, c.HTTPListen}, c.TLSHosts)
	_, err := natsutil.EnsureNodeCert(c.CredsDir, c.NodeName, hosts, files.Cert, files.Key)
	if errors.Is(err, natsutil.ErrNoFleetCA) {
		return fmt.Errorf("%w: pass --tls-cert, --tls-key and --tls-ca (your certificate), or copy the fleet's credentials directory with %s (docs/fleet.md)", err, datadir.FleetCAKeyFile)
	}
	return err
}

// checkInsecure refuses what must not run without TLS.
func (c *Config) checkInsecure() error {
	var problems []string
	if c.NATSURL == "" {
		if c.Cluster.Name != "" {
			problems = append(problems, fmt.Sprintf("cluster routes (--cluster %s, --cluster-listen %s) without mutual TLS", c.Cluster.Name, c.Cluster.Listen))
		}
		if c.NATSListen != "" && !loopbackListen(c.NATSListen, true) {
			problems = append(problems, fmt.Sprintf("NATS clients on %s (not loopback) without TLS", c.NATSListen))
		}
	}
	if c.HTTPListen != "" && !loopbackListen(c.HTTPListen, false) {
		problems = append(problems, fmt.Sprintf("the HTTP API on %s (not loopback) without TLS", c.HTTPListen))
	}
	if len(problems) == 0 {
		return nil
	}
	if c.InsecureLab {
		if c.Logger == nil {
			c.Logger = slog.New(slog.DiscardHandler)
		}
		c.Logger.Warn("INSECURE LAB MODE: this node sends events in clear text and lets any server route to it; never in production (drop --insecure-lab and use TLS, docs/security.md)",
			"what", strings.Join(problems, "; "))
		return nil
	}
	return fmt.Errorf("%w: %s. Drop --tls off (a cluster node uses TLS by default, with the fleet CA of its --creds-dir), or pass --tls on, or --tls-cert/--tls-key/--tls-ca; or listen on 127.0.0.1 only. For a lab that must run in clear: --insecure-lab (docs/security.md, TLS)",
		ErrInsecure, strings.Join(problems, "; "))
}

// loopbackListen reports whether addr (host:port) listens on loopback
// only; an empty host is loopback when emptyLoopback (natsutil's
// addresses), all interfaces otherwise (net.Listen's).
func loopbackListen(addr string, emptyLoopback bool) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "" {
		return emptyLoopback
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// InsecureLab reports whether the node runs in the lab mode: without TLS
// where TLS is required, because it was told to.
func (s *Node) InsecureLab() bool {
	return s.cfg.InsecureLab && s.cfg.Certs == nil && s.cfg.checkInsecureNeeded()
}

// checkInsecureNeeded reports whether this node's setup needs TLS.
func (c *Config) checkInsecureNeeded() bool {
	saved := c.InsecureLab
	c.InsecureLab = false
	err := c.checkInsecure()
	c.InsecureLab = saved
	return err != nil
}

// TLS is the node's certificates, or nil when it speaks no TLS.
func (s *Node) TLS() *natsutil.Certs { return s.cfg.Certs }

// TLSInfo describes the node's certificate now (nil without TLS and not
// in the lab mode).
func (s *Node) TLSInfo() *TLSInfo {
	c := s.cfg.Certs
	if c == nil {
		if !s.InsecureLab() {
			return nil
		}
		return &TLSInfo{Node: s.cfg.NodeName, InsecureLab: true, Updated: time.Now().UTC().Format(time.RFC3339)}
	}
	leaf := c.Leaf()
	return &TLSInfo{Node: s.cfg.NodeName, Cert: mustAbs(c.Files().Cert), CA: mustAbs(c.Files().CA), Subject: leaf.Subject.String(),
		NotAfter: leaf.NotAfter.UTC(), Fingerprint: c.Fingerprint(), Updated: time.Now().UTC().Format(time.RFC3339)}
}

// ReloadTLS reads the node's certificate and key again (re-issuing its
// own certificate first when it expires within natsutil.RenewBefore):
// new connections, routes and HTTP requests get the new one; nothing
// open is dropped. On an error the certificate in use stays.
func (s *Node) ReloadTLS(ctx context.Context) error {
	c := s.cfg.Certs
	if c == nil {
		return errors.New("this node speaks no TLS: nothing to reload")
	}
	if s.cfg.TLSCert == "" {
		if err := s.cfg.issueNodeCert(c.Files()); err != nil {
			return err
		}
	}
	if err := c.Reload(); err != nil {
		return err
	}
	s.cfg.Logger.Info("TLS certificate reloaded", "cert", c.Files().Cert, "not_after", c.Leaf().NotAfter.UTC().Format(time.RFC3339), "fingerprint", c.Fingerprint())
	s.recordTLS(ctx)
	return nil
}

// recordTLS writes the node's TLSInfo to the fleet bucket, where `vigil
// status` reads every node's. Best-effort: a single host has no bucket.
func (s *Node) recordTLS(ctx context.Context) {
	info := s.TLSInfo()
	if info == nil || s.fleet == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	kv, err := s.js.KeyValue(ctx, integrity.FleetBucket)
	if err != nil {
		s.cfg.Logger.Debug("fleet bucket not readable; TLS state not recorded", "err", err)
		return
	}
	b, _ := json.Marshal(info)
	if _, err := kv.Put(ctx, FleetTLSPrefix+s.cfg.NodeName, b); err != nil {
		s.cfg.Logger.Warn("could not record this node's TLS state in the fleet bucket", "err", err)
	}
}

// ReadFleetTLS returns every node's TLSInfo recorded in the fleet bucket.
func ReadFleetTLS(ctx context.Context, js jetstream.JetStream) ([]TLSInfo, error) {
	kv, err := js.KeyValue(ctx, integrity.FleetBucket)
	if err != nil {
		return nil, err
	}
	keys, err := kv.ListKeysFiltered(ctx, FleetTLSPrefix+"*")
	if err != nil {
		return nil, err
	}
	var out []TLSInfo
	for k := range keys.Keys() {
		e, err := kv.Get(ctx, k)
		if err != nil {
			continue
		}
		var ti TLSInfo
		if json.Unmarshal(e.Value(), &ti) == nil {
			out = append(out, ti)
		}
	}
	return out, nil
}
