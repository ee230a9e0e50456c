package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/driver"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/pairinglog"
	"github.com/vigil-dev/vigil/projections"
)

// NodeOptions say how to serve the API of a running node.
type NodeOptions struct {
	// Listener is where to serve, bound by the caller (see Listen).
	Listener net.Listener
	// CredsDir holds the role seeds; the tokens are created beside them
	// if missing (natsutil.EnsureTokens).
	CredsDir string
	// NATSURL is the cluster the node is attached to, when it runs no
	// embedded server: role clients connect there.
	NATSURL     string
	CheckConfig func(events.Config) error
	// Hosts are the names served beyond the listen address (Config.Hosts).
	Hosts  []string
	Limits Limits
	Logger *slog.Logger
}

// Node is the running node whose API StartForServer serves
// (internal/node.Node; this package imports no node).
type Node interface {
	// NATS is the embedded server, or nil when the node is attached to
	// a cluster (role clients then connect over NodeOptions.NATSURL).
	NATS() *natsserver.Server
	JetStream() jetstream.JetStream
	// Healthy is nil while the node serves, or why it does not.
	Healthy() error
	// Projections is the read-model store, or nil without one.
	Projections() *projections.Store
	// Driver is the live driver, or nil when no processors run.
	Driver() *driver.Driver
}

// StartForServer serves the API of the node s: each role's client on an
// in-process connection with the role's credentials (or over NATSURL when
// s runs no embedded server), the node's JetStream for the live stream
// and the metrics, its read models, its health and readiness.
func StartForServer(ctx context.Context, s Node, o NodeOptions) (*Server, error) {
	tokens, err := natsutil.EnsureTokens(o.CredsDir)
	if err != nil {
		o.Listener.Close()
		return nil, err
	}
	pairingKey, err := pairinglog.LoadOrCreateKey(o.CredsDir)
	if err != nil {
		o.Listener.Close()
		return nil, err
	}
	cfg := Config{
		PairingKey:  pairingKey,
		Tokens:      tokens,
		Connect:     roleClients(s, o),
		JetStream:   s.JetStream(),
		Healthy:     s.Healthy,
		Ready:       func() error { return nodeReady(s) },
		CheckConfig: o.CheckConfig,
		Hosts:       o.Hosts,
		Limits:      o.Limits,
		Logger:      o.Logger,
	}
	if st := s.Projections(); st != nil {
		cfg.Reads = st
	}
	if d := s.Driver(); d != nil {
		cfg.Checkpointed = d.Checkpointed
	}
	return StartOn(ctx, cfg, o.Listener)
}

// Listen binds the API's address (host:port; port 0 picks one) and
// returns the listener and the API's base URL. A node binds it before it
// starts, so serve.json names the URL from its first write, and requests
// that arrive before the API serves wait rather than fail.
func Listen(addr string) (net.Listener, string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("httpapi: listen on %s: %w", addr, err)
	}
	return ln, "http://" + ln.Addr().String(), nil
}

func roleClients(s Node, o NodeOptions) func(context.Context, natsutil.Role) (*client.Client, error) {
	return func(ctx context.Context, role natsutil.Role) (*client.Client, error) {
		seed := datadir.CredsAt(o.CredsDir).Seed(role)
		name := "vigil-http-" + string(role)
		co := client.Options{Name: name, Runtime: role == natsutil.RoleRuntime}
		if ns := s.NATS(); ns != nil {
			nc, err := natsutil.ConnectInProcess(ns, seed, name)
			if err != nil {
				return nil, err
			}
			co.Conn, co.CloseConn = nc, true
		} else {
			co.URL, co.CredsFile = o.NATSURL, seed
		}
		return client.Connect(ctx, co)
	}
}

// nodeReady is nil once s serves decisions from a caught-up fold: healthy,
// its driver live, its read models neither rebuilding nor corrupted.
func nodeReady(s Node) error {
	if err := s.Healthy(); err != nil {
		return err
	}
	if d := s.Driver(); d != nil {
		select {
		case <-d.Ready():
		default:
			return errors.New("the processors are warming up")
		}
	}
	if st := s.Projections(); st != nil {
		switch status := st.Status(); {
		case status.Corrupt:
			return errors.New("the read models are corrupted; restart vigil serve to rebuild them")
		case status.CatchingUp:
			return fmt.Errorf("the read models are catching up (log seq %d of %d)", status.Position, status.Target)
		}
	}
	return nil
}
