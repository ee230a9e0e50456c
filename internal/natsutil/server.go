package natsutil

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Durability is the fsync policy of the embedded server's JetStream store.
// It is server-wide: nats-server cannot fsync one stream and not another.
type Durability string

// Durability modes. See docs/durability.md for what each survives.
const (
	// DurabilityFsync fsyncs every write before the publish is
	// acknowledged: an acknowledged event survives a process crash, an OS
	// crash and a power loss. The default: this is a security log.
	DurabilityFsync Durability = "fsync"
	// DurabilityInterval fsyncs every SyncInterval (JetStream's own default
	// is 2 minutes): an acknowledged event survives a process crash but may
	// be lost on an OS crash or power loss within the interval.
	DurabilityInterval Durability = "interval"
)

// ParseDurability parses a --durability value.
func ParseDurability(s string) (Durability, error) {
	switch Durability(s) {
	case DurabilityFsync, DurabilityInterval:
		return Durability(s), nil
	}
	return "", fmt.Errorf("durability %q: use %q (fsync every write, survives power loss) or %q (fsync periodically, faster)", s, DurabilityFsync, DurabilityInterval)
}

// ServerConfig configures an embedded nats-server.
type ServerConfig struct {
	// StoreDir is the JetStream storage directory (required).
	StoreDir string
	// Listen is host:port for client connections; port 0 or -1 picks a free
	// port. Empty means do not listen (in-process connections only).
	Listen     string
	Durability Durability
	// SyncInterval applies to DurabilityInterval; zero means 2 minutes.
	SyncInterval time.Duration
	// Auth authenticates clients (NewAuthenticator); nil means no
	// authentication (tests only).
	Auth server.Authentication
	// MaxPayload bounds one message; zero means DefaultMaxPayload.
	MaxPayload int32
	// ServerName names the server; it must be unique in a cluster.
	ServerName string
	// Cluster, when Cluster.Name is set, makes the server a cluster node.
	Cluster ClusterConfig
	// TLS, when set, makes the client port speak TLS only (the node's
	// certificate) and the cluster port mutual TLS verified against the
	// fleet CA, with routes authorized only when the peer presented a
	// certificate the CA verified (RouteAuth).
	TLS    *Certs
	Logger *slog.Logger
	// ReadyTimeout bounds the wait for the server to accept connections.
	ReadyTimeout time.Duration
}

// ClusterConfig makes an embedded server join a NATS cluster.
type ClusterConfig struct {
	Name   string
	Listen string   // host:port for routes; port -1 picks a free one
	Routes []string // nats-route://host:port of the other nodes
	// Advertise is the host:port the other nodes are told to route to
	// (behind a NAT or a proxy); empty: the listen address.
	Advertise string
}

// DefaultMaxPayload is the largest message Vigil accepts: 4 MiB. Larger
// events (a huge observation) must be truncated by the producer.
const DefaultMaxPayload = 4 << 20

// ErrNotReady is returned when the server does not come up in time.
var ErrNotReady = errors.New("natsutil: server not ready for connections")

// StartServer starts an embedded nats-server with JetStream and waits until
// it accepts connections. The caller must call Shutdown and WaitForShutdown.
func StartServer(cfg ServerConfig) (*server.Server, error) {
	if cfg.StoreDir == "" {
		return nil, errors.New("natsutil: StoreDir is required")
	}
	if cfg.Durability == "" {
		cfg.Durability = DurabilityFsync
	}
	if _, err := ParseDurability(string(cfg.Durability)); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ReadyTimeout == 0 {
		// JetStream recovers every stream (and rebuilds their duplicate
		// tables) before the server listens: a long log on a busy
		// machine takes well over 10 s. A port in use is
		// found at once below, not by this timeout.
		cfg.ReadyTimeout = 5 * time.Minute
	}
	opts := &server.Options{
		ServerName:         cfg.ServerName,
		JetStream:          true,
		StoreDir:           filepath.Clean(cfg.StoreDir),
		NoSigs:             true,
		MaxPayload:         cfg.MaxPayload,
		JetStreamMaxMemory: 256 << 20,
	}
	// Every ingest worker may hold an atomic batch open at once (the
	// default, 50 per stream, is under the ingest service's 64 workers).
	opts.JetStreamLimits.MaxBatchInflightPerStream = 256
	opts.JetStreamLimits.MaxBatchInflightTotal = 1024
	if cfg.Auth != nil {
		opts.CustomClientAuthentication = cfg.Auth
		opts.AlwaysEnableNonce = true // clients sign it with their nkey
	}
	if opts.MaxPayload == 0 {
		opts.MaxPayload = DefaultMaxPayload
	}
	switch cfg.Durability {
	case DurabilityFsync:
		opts.SyncAlways = true
	case DurabilityInterval:
		opts.SyncInterval = cfg.SyncInterval
	}
	if cfg.Listen == "" {
		opts.DontListen = true
	} else {
		host, port, err := splitHostPort(cfg.Listen)
		if err != nil {
			return nil, fmt.Errorf("natsutil: listen address %q: %w", cfg.Listen, err)
		}
		opts.Host, opts.Port = host, port
	}
	if cfg.Cluster.Name != "" {
		host, port, err := splitHostPort(cfg.Cluster.Listen)
		if err != nil {
			return nil, fmt.Errorf("natsutil: cluster listen address %q: %w", cfg.Cluster.Listen, err)
		}
		opts.Cluster = server.ClusterOpts{Name: cfg.Cluster.Name, Host: host, Port: port, Advertise: cfg.Cluster.Advertise}
		opts.Routes = server.RoutesFromStr(joinComma(cfg.Cluster.Routes))
		if cfg.TLS != nil {
			opts.Cluster.TLSConfig = cfg.TLS.ClusterConfig()
			opts.Cluster.TLSTimeout = 2
			opts.CustomRouterAuthentication = RouteAuth{Logger: cfg.Logger.With("component", "routes")}
		}
		opts.DontListen = false
		if opts.Port == 0 {
			opts.Port = server.RANDOM_PORT
		}
	}
	if cfg.TLS != nil && !opts.DontListen {
		opts.TLSConfig = cfg.TLS.ServerConfig()
		opts.TLS, opts.TLSTimeout = true, 2
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("natsutil: configure server: %w", err)
	}
	s.SetLoggerV2(&slogAdapter{l: cfg.Logger.With("component", "nats-server")}, false, false, false)
	if !opts.DontListen && opts.Port > 0 {
		// nats-server reports a listen failure only by never becoming
		// ready: find a busy port before waiting for that.
		ln, err := net.Listen("tcp", net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port)))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrNotReady, cfg.Listen, err)
		}
		ln.Close()
	}
	go s.Start()
	if !s.ReadyForConnections(cfg.ReadyTimeout) {
		s.Shutdown()
		s.WaitForShutdown()
		return nil, fmt.Errorf("%w within %s (is %s in use?)", ErrNotReady, cfg.ReadyTimeout, cfg.Listen)
	}
	return s, nil
}

func splitHostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, fmt.Errorf("port %q is not a number", p)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return host, port, nil
}

func joinComma(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ","
		}
		out += s
	}
	return out
}

// ConnectInProcess connects to s without TCP, authenticating as seedFile's
// user (empty for a server without authentication).
func ConnectInProcess(s *server.Server, seedFile, name string, extra ...nats.Option) (*nats.Conn, error) {
	opts := []nats.Option{nats.InProcessServer(s), nats.Name(name), nats.MaxReconnects(-1)}
	if seedFile != "" {
		o, err := CredsOption(seedFile)
		if err != nil {
			return nil, err
		}
		opts = append(opts, o)
		opts = append(opts, InboxOptions()...)
	}
	opts = append(opts, extra...)
	nc, err := nats.Connect("", opts...)
	if err != nil {
		return nil, fmt.Errorf("natsutil: in-process connect: %w", err)
	}
	return nc, nil
}

// slogAdapter bridges nats-server's Logger to slog.
type slogAdapter struct{ l *slog.Logger }

func (a *slogAdapter) Noticef(format string, v ...any) { a.l.Info(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Warnf(format string, v ...any)   { a.l.Warn(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Fatalf(format string, v ...any)  { a.l.Error(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Errorf(format string, v ...any)  { a.l.Error(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Debugf(format string, v ...any)  { a.l.Debug(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Tracef(format string, v ...any)  {}
