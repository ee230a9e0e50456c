package node

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node/integrity"
)

// Bounds of probeFleetKey: it never delays a start by more than a few
// seconds, and gives up at once when nobody can answer.
const (
	probeDialWait  = 300 * time.Millisecond // for a peer's route port to accept
	probeRouteWait = 5 * time.Second        // for a route to a peer that accepted
	probeAskWait   = 5 * time.Second        // for the fleet's record
)

// probeFleetKey asks the fleet for its audit key before this node joins
// it: through a throwaway nats-server without JetStream, with no client
// listener anyone is told of, that routes to the peers (mixed mode: its requests to the
// JetStream API are answered by the peers' JetStream). A node with
// another key than the recorded one refuses here (integrity.ErrAuditKeyMismatch)
// without having been a JetStream peer — a new node name would otherwise
// stay a member of the fleet's meta group, counted in its quorum — and
// without having served a client.
//
// It is best-effort: with no peer listening (the first node, a fleet
// starting together: then it costs one refused dial per route), no record
// yet, or no answer in time it returns nil, and the check after the join
// (checkAuditKey) decides, as it always does.
func probeFleetKey(ctx context.Context, cfg Config, pubs map[natsutil.Role]string) error {
	if !anyPeerListens(cfg) {
		return nil // a fleet starting (or nobody up): no delay
	}
	host, _, err := net.SplitHostPort(cfg.Cluster.Listen)
	if err != nil || host == "" {
		host = "127.0.0.1"
	}
	opts := &natsserver.Options{
		ServerName: cfg.NodeName + "-keycheck",
		// nats-server routes only once its client listener is up: one on
		// loopback, on a port nobody is told (Cluster.NoAdvertise keeps it
		// out of what the peers tell their clients).
		Host:   "127.0.0.1",
		Port:   natsserver.RANDOM_PORT,
		NoSigs: true,
		NoLog:  true,
		// Advertised as this node's own route, which the peers have in
		// their routes: told of the probe by one another, they then
		// never dial it (nats-server skips a route it has configured),
		// so when it goes nobody retries it and warns that a peer on a
		// random port is unreachable. One route per peer (no pool): one
		// line in each peer's log when it goes.
		Cluster: natsserver.ClusterOpts{Name: cfg.Cluster.Name, Host: host, Port: natsserver.RANDOM_PORT,
			NoAdvertise: true, Advertise: ownRoute(cfg), PoolSize: -1},
		Routes:                     natsserver.RoutesFromStr(strings.Join(cfg.Cluster.Routes, ",")),
		CustomClientAuthentication: natsutil.NewAuthenticator(pubs, slog.New(slog.DiscardHandler)),
		AlwaysEnableNonce:          true,
	}
	if cfg.Certs != nil { // the fleet's mutual TLS (tls.go)
		opts.Cluster.TLSConfig, opts.Cluster.TLSTimeout = cfg.Certs.ClusterConfig(), 2
		opts.CustomRouterAuthentication = natsutil.RouteAuth{}
	}
	ps, err := natsserver.NewServer(opts)
	if err != nil {
		return nil // the real start reports a bad configuration
	}
	go ps.Start()
	defer func() {
		ps.Shutdown()
		ps.WaitForShutdown()
	}()
	if !ps.ReadyForConnections(probeRouteWait) {
		return nil
	}
	for deadline := time.Now().Add(probeRouteWait); ps.NumRoutes() == 0; {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil // no peer up: nobody to ask
		}
		time.Sleep(20 * time.Millisecond)
	}
	nc, err := natsutil.ConnectInProcess(ps, datadir.CredsAt(cfg.CredsDir).Seed(natsutil.RoleService), "vigil-keycheck-"+cfg.NodeName,
		nats.MaxReconnects(0))
	if err != nil {
		return nil
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(ctx, probeAskWait)
	defer cancel()
	// Interest in the JetStream API reaches the probe with the route's
	// first exchange; a peer still electing answers 503 or not at all.
	for {
		fleet, found, err := integrity.LeaderFleetKey(ctx, nc)
		switch {
		case err == nil && !found:
			return nil // no record: a fleet older than it, or a new one
		case err == nil:
			return auditKeyCheckFor(cfg).Compare(fleet, "found before joining the cluster")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ownRoute is the address of cfg's routes that names this node (its
// --cluster-advertise, else its --cluster-listen); "" when none does.
func ownRoute(cfg Config) string {
	for _, r := range cfg.Cluster.Routes {
		u, err := url.Parse(r)
		if err != nil || u.Host == "" {
			continue
		}
		if u.Host == cfg.Cluster.Listen || (cfg.Cluster.Advertise != "" && u.Host == cfg.Cluster.Advertise) {
			return u.Host
		}
	}
	return ""
}

// anyPeerListens reports whether a route address of cfg other than the
// node's own accepts a connection: a peer is up to be asked. In a fleet
// with TLS it completes the handshake (a bare connection closed
// unhandshaken makes the peer log a TLS handshake error); the peer then
// sees a route closed before it spoke, which it notes at info level.
func anyPeerListens(cfg Config) bool {
	for _, r := range cfg.Cluster.Routes {
		u, err := url.Parse(r)
		if err != nil || u.Host == "" || u.Host == cfg.Cluster.Listen || u.Host == ownRoute(cfg) {
			continue
		}
		c, err := net.DialTimeout("tcp", u.Host, probeDialWait)
		if err != nil {
			continue
		}
		if cfg.Certs != nil {
			tc := cfg.Certs.ClusterConfig()
			if h, _, err := net.SplitHostPort(u.Host); err == nil {
				tc.ServerName = h
			}
			tlsConn := tls.Client(c, tc)
			_ = tlsConn.SetDeadline(time.Now().Add(probeRouteWait))
			_ = tlsConn.Handshake() // listening is what counts; the probe checks the rest
			c = tlsConn
		}
		c.Close()
		return true
	}
	return false
}
