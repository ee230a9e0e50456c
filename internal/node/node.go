// Package node assembles a Vigil node, the way `vigil serve` runs it:
// the embedded nats-server (or a connection to an existing cluster), the
// streams, the ingest service with its redaction step following the
// config in force, the live driver running every processor (risk, gate,
// audit, stats, pairing) with its read models, the integrity guards (the
// stream watch, the continuity check, the fleet's audit key), the
// approval expiry and pairing timers, the notifier and the HTTP API.
// `vigil serve`, `vigil bench` and the integration and attack tests all
// start nodes through Start, so what is tested is what runs.
//
// Shutdown order (Close): stop the HTTP API, the notifier and the timers,
// then stop taking requests (ingest drains, so every acknowledged event
// is stored), stop the drivers (each finishes its batch and checkpoints),
// close the read models, then shut NATS down.
//
// A node refuses to run on a log that is not the one it folded: Start
// refuses a VIGIL_LOG deleted, replaced or cut short while the node was
// down (unless Config.AcceptNewLog), and a running node that finds a
// stream deleted, replaced or losing records alerts, stops taking events
// and deciding, and reports ErrStreamChanged on Err (watch.go). At start,
// in the background, it checks the log against the newest signed audit
// checkpoint (continuity.go). docs/durability.md tells operators what to do.
package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/mod/sumdb/note"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/auditkey"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/driver"
	"github.com/vigil-dev/vigil/internal/expiry"
	"github.com/vigil-dev/vigil/internal/httpapi"
	"github.com/vigil-dev/vigil/internal/ingest"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/notify"
	"github.com/vigil-dev/vigil/internal/pairinglog"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/audit"
	"github.com/vigil-dev/vigil/processors/gate"
	"github.com/vigil-dev/vigil/processors/pairing"
	"github.com/vigil-dev/vigil/processors/redact"
	"github.com/vigil-dev/vigil/processors/risk"
	"github.com/vigil-dev/vigil/processors/stats"
	"github.com/vigil-dev/vigil/projections"
)

// Config configures a node. The zero value of a field is its default
// (Start fills them).
type Config struct {
	// DataDir holds JetStream storage, credentials, serve.json and read models.
	DataDir string
	// NATSListen is host:port for NATS clients; port 0 picks a free port.
	// Empty means in-process only (no TCP).
	NATSListen string
	// HTTPListen is where the HTTP API listens (empty: no HTTP API).
	// HTTPURL is written to serve.json as http_url; Start sets it from
	// the listener it binds before anything else starts, so serve.json
	// names it from the first write.
	HTTPListen   string
	HTTPURL      string
	Durability   natsutil.Durability
	SyncInterval time.Duration
	// DedupWindow is how long a stored event id is recognised (the ingest
	// service's id index, DATA/ingest-ids); LogStreamWindow is VIGIL_LOG's
	// own JetStream duplicate window (zero: natsutil's default, or
	// DedupWindow when shorter). See natsutil.StreamOptions.
	DedupWindow     time.Duration
	LogStreamWindow time.Duration
	// Processors builds the processors the live driver runs, fresh for
	// each start. Nil runs the node's set (Processors, the function),
	// signing with the key in KeyDir, unless NoProcessors.
	Processors func() ([]processors.Processor, error)
	// NoProcessors runs ingest only: no driver, no read models, no timers.
	NoProcessors bool
	// Sink receives applied batches; optional. ProjectionsDir, when set,
	// opens the Pebble read models there and uses them as the sink; with
	// the node's own processors and no Sink it defaults to
	// datadir.Layout.Projections.
	Sink           driver.Sink
	ProjectionsDir string
	// Redactor is the ingest service's redaction step; default
	// DefaultRedactor.
	Redactor ingest.Redactor
	// NewRedactor rebuilds the redaction step from the global config in
	// force (see ingest.Config.NewRedactor); default RedactorFor.
	NewRedactor func(events.RedactionSettings) (ingest.Redactor, error)
	// CheckConfig is run by the ingest service on every config event
	// before it is stored (see ingest.Config.CheckConfig); default the
	// function CheckConfig.
	CheckConfig func(events.Config) error
	// IngestLimits caps each producer credential's live conversations and
	// actions per second (ingest.Limits; the zero value gives its defaults).
	IngestLimits ingest.Limits
	// NodeName names this node's durable consumers and its NATS server;
	// default "local". It must be unique in a fleet.
	NodeName string
	Logger   *slog.Logger

	// Fleet settings. CredsDir holds the role seeds (default DataDir/creds);
	// every node of a fleet must share the same seeds.
	CredsDir string
	// Cluster makes the embedded server a node of a NATS cluster.
	Cluster natsutil.ClusterConfig
	// NATSURL attaches to an existing NATS server or cluster instead of
	// starting one; the node authenticates with CredsDir's service seed, or
	// with ServiceCreds when set.
	NATSURL      string
	ServiceCreds string
	// Replicas of every stream: 1 on a single host, 3 in a fleet.
	Replicas int
	// SealInterval is how often the node appends an audit.seal event when
	// the log has moved since its last seal, so the audit processor signs a
	// checkpoint covering it; zero means no sealer.
	SealInterval time.Duration

	// AcceptNewLog makes Start serve a VIGIL_LOG that is not the one this
	// node last ran on (deleted and recreated, replaced, or shorter than
	// what the node folded), after an alert; without it Start refuses
	// with ErrStreamChanged. See watch.go and docs/durability.md.
	AcceptNewLog bool
	// StreamWatchInterval is how often the running node checks that its
	// streams are still the ones it started with; zero means
	// DefaultStreamWatchInterval (advisories trigger a check at once).
	StreamWatchInterval time.Duration
	// AuditVerifiers verify the audit checkpoints the start-time
	// continuity check compares the log with; default (unless
	// NoProcessors) the key in KeyDir. Nil checks only that no record is
	// missing (see continuity.go).
	AuditVerifiers note.Verifiers
	// NoContinuityCheck skips the start-time continuity check.
	NoContinuityCheck bool
	// AuditKey is the verifier key of the audit key the node's processors
	// sign with (auditkey.Load). A fleet node (Cluster or NATSURL set)
	// refuses to start, with ErrAuditKeyMismatch, when it is not the
	// fleet's (fleetkey.go); empty skips the check.
	AuditKey string
	// AcceptAuditKey records AuditKey as the fleet's audit key instead of
	// comparing it: a deliberate change of the fleet's key.
	AcceptAuditKey bool

	// TLS (tls.go). TLSMode is TLSAuto (""), TLSOn or TLSOff. TLSCert and
	// TLSKey are the operator's node certificate, verified (and every
	// peer's, and by every client) with TLSCA; without TLSCert the node
	// issues its own from CredsDir's fleet CA, valid for its listen
	// hosts and TLSHosts. With NATSURL, TLSCA (default: the fleet CA
	// beside ServiceCreds) verifies the attached NATS.
	TLSMode     string
	TLSCert     string
	TLSKey      string
	TLSCA       string
	TLSHosts    []string
	InsecureLab bool
	Certs       *natsutil.Certs
	// UnsafeNoRedaction stores events as they arrive, secrets included:
	// no Redactor or NewRedactor is filled in. Only for a test that must
	// see the raw text; no command sets it.
	UnsafeNoRedaction bool
	// UnsafeNoConfigCheck stores config events without CheckConfig's
	// whole-config check. Only for tests; no command sets it.
	UnsafeNoConfigCheck bool
	// KeyDir holds the audit signing key; default DataDir.
	KeyDir string
	// NoExpiry does not start the approval expiry and pairing timers.
	NoExpiry bool
	// HTTPLimits bound the HTTP API's requests (HTTPListen); zero fields
	// take httpapi's defaults.
	HTTPLimits httpapi.Limits
	// HTTPHosts are the names the HTTP API serves beyond its listen
	// address and localhost (httpapi.Config.Hosts; --http-host).
	HTTPHosts []string

	tlsPrepared bool
}

// Node is a running node.
type Node struct {
	cfg    Config
	ns     *natsserver.Server
	nc     *nats.Conn
	js     jetstream.JetStream
	ing    *ingest.Service
	drv    *driver.Driver
	store  *projections.Store
	lock   *datadir.Lock
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// drvErr receives the core's first failure (fail); errs is Err.
	drvErr chan error
	info   client.ServeInfo
	fleet  *FleetInfo
	closed bool
	mu     sync.Mutex
	watch  watchState

	// http is the HTTP API, when Config.HTTPListen is set.
	http      *httpapi.Server
	stopTimer context.CancelFunc
	timerDone chan error
	// pairingDone is closed when the pairing timer has stopped.
	pairingDone chan struct{}
	errs        chan error
	// closing ends the goroutine that forwards the core's failure;
	// watched is closed when it has.
	closing, watched chan struct{}
	closeOnce        sync.Once
	// notifier announces pending actions to the config's webhooks
	// (internal/notify); stopNotify ends it and notifyDone is closed
	// when it has.
	notifier   *notify.Notifier
	stopNotify context.CancelFunc
	notifyDone chan struct{}
}

// ProjectionsDir is where a data directory keeps its Pebble read models
// (datadir.Layout.Projections).
func ProjectionsDir(dataDir string) string { return datadir.New(dataDir).Projections() }

// Start starts a node. Defaults: the default redaction rules, rebuilt
// from each global config's redaction settings; the node's processors
// (Processors) signing with the key in KeyDir; read models in
// ProjectionsDir(DataDir); the expiry timer.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("node: DataDir is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.KeyDir == "" {
		cfg.KeyDir = cfg.DataDir
	}
	if cfg.Redactor == nil && !cfg.UnsafeNoRedaction {
		r, err := DefaultRedactor()
		if err != nil {
			return nil, err
		}
		cfg.Redactor = r
	}
	if cfg.NewRedactor == nil && !cfg.UnsafeNoRedaction {
		cfg.NewRedactor = RedactorFor
	}
	if cfg.CheckConfig == nil && !cfg.UnsafeNoConfigCheck {
		cfg.CheckConfig = CheckConfig
	}
	if cfg.Processors == nil && !cfg.NoProcessors {
		keyDir := cfg.KeyDir
		cfg.Processors = func() ([]processors.Processor, error) {
			signer, _, err := auditkey.LoadOrCreate(keyDir)
			if err != nil {
				return nil, err
			}
			return Processors(processors.Options{}, signer)
		}
		if cfg.ProjectionsDir == "" && cfg.Sink == nil {
			cfg.ProjectionsDir = ProjectionsDir(cfg.DataDir)
		}
	}
	if cfg.AuditVerifiers == nil && !cfg.NoProcessors {
		// The continuity check at start compares the log with the newest
		// checkpoint this key signed.
		_, vkey, err := auditkey.LoadOrCreate(cfg.KeyDir)
		if err != nil {
			return nil, err
		}
		if cfg.AuditVerifiers, err = audit.NewVerifiers(vkey); err != nil {
			return nil, err
		}
	}
	// TLS is settled before anything listens: the HTTP API speaks it
	// with the node's certificate whenever NATS does.
	if err := PrepareTLS(&cfg); err != nil {
		return nil, err
	}
	var httpLn net.Listener
	if cfg.HTTPListen != "" {
		ln, url, err := httpapi.Listen(cfg.HTTPListen)
		if err != nil {
			return nil, err
		}
		if c := cfg.Certs; c != nil {
			ln, url = tls.NewListener(ln, c.ServerConfig()), "https://"+strings.TrimPrefix(url, "http://")
		}
		httpLn, cfg.HTTPURL = ln, url
	}
	n, err := startServer(ctx, cfg)
	if err != nil {
		if httpLn != nil {
			httpLn.Close()
		}
		return nil, err
	}
	n.errs, n.closing, n.watched = make(chan error, 2), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(n.watched)
		select {
		case err, ok := <-n.drvErr:
			if ok && err != nil {
				if !errors.Is(err, ErrStreamChanged) {
					err = fmt.Errorf("processor driver: %w", err)
				}
				n.errs <- err
			}
		case <-n.closing:
		}
	}()
	if !cfg.NoExpiry && !cfg.NoProcessors {
		ecfg := expiry.Config{Conn: n.Conn(), Logger: cfg.Logger.With("component", "expiry")}
		if st := n.Projections(); st != nil {
			ecfg.Pending = st // bounds what its start reads (internal/expiry)
		}
		timer, err := expiry.New(ecfg)
		var ptimer *pairinglog.Timer
		if err == nil {
			ptimer, err = pairinglog.NewTimer(pairinglog.TimerConfig{Conn: n.Conn(), Logger: cfg.Logger.With("component", "pairing-timer")})
		}
		if err != nil {
			if httpLn != nil {
				httpLn.Close()
			}
			n.Close(context.WithoutCancel(ctx))
			return nil, err
		}
		timerCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
		n.stopTimer, n.timerDone = stop, make(chan error, 1)
		n.pairingDone = make(chan struct{})
		go func() {
			// The pairing timer retries on its own; it stops only with the node.
			defer close(n.pairingDone)
			ptimer.Run(timerCtx)
		}()
		go func() {
			err := timer.Run(timerCtx)
			n.timerDone <- err
			if err != nil && timerCtx.Err() == nil {
				n.errs <- fmt.Errorf("expiry timer stopped (approvals would never expire): %w", err)
			}
		}()
	}
	if st := n.Projections(); st != nil && !cfg.NoProcessors {
		n.startNotify(ctx, cfg, st)
	}
	if httpLn != nil {
		// Once serve.json exists the node is up as far as anyone can
		// tell, so a start cancelled from now on is a shutdown, not a
		// failure to start.
		hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := n.startHTTP(hctx, cfg, httpLn); err != nil {
			n.Close(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	return n, nil
}

// startHTTP serves the HTTP API on ln (cfg.HTTPListen, bound before the
// server started so that serve.json names it).
func (n *Node) startHTTP(ctx context.Context, cfg Config, ln net.Listener) error {
	credsDir := cfg.CredsDir
	if credsDir == "" {
		credsDir = datadir.New(cfg.DataDir).Creds().Dir()
	}
	h, err := httpapi.StartForServer(ctx, n, httpapi.NodeOptions{Listener: ln, CredsDir: credsDir,
		NATSURL: cfg.NATSURL, CheckConfig: cfg.CheckConfig, Hosts: cfg.HTTPHosts, Limits: cfg.HTTPLimits, Logger: cfg.Logger.With("component", "http")})
	if err != nil {
		return fmt.Errorf("HTTP API on %s: %w", cfg.HTTPListen, err)
	}
	n.http = h
	if err := h.RegisterCollector(tlsMetrics(n)); err != nil {
		return err
	}
	if n.notifier != nil {
		if err := h.RegisterCollector(n.notifier); err != nil {
			return err
		}
	}
	cfg.Logger.Info("vigil HTTP API serving", "url", h.URL())
	return nil
}

// startNotify starts the notifier: webhooks of the config in force, from
// the read models, for each new pending action.
func (n *Node) startNotify(ctx context.Context, cfg Config, st *projections.Store) {
	nt, err := notify.New(notify.Options{
		JetStream: n.JetStream(), DataDir: cfg.DataDir, Logger: cfg.Logger.With("component", "notify"),
		Webhooks: func(conv string) ([]events.Webhook, error) {
			cs, _, err := st.ConfigFor(conv)
			if err != nil || cs.Config.Notify == nil {
				return nil, err
			}
			return cs.Config.Notify.Webhooks, nil
		},
		Decided: func(actionID string) bool {
			_, err := st.Decision(actionID)
			return err == nil
		},
	})
	if err != nil {
		cfg.Logger.Error("notifications off", "err", err)
		return
	}
	nctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	n.notifier, n.stopNotify, n.notifyDone = nt, stop, make(chan struct{})
	go func() {
		defer close(n.notifyDone)
		nt.Serve(nctx)
	}()
}

// Err receives a failure that stops the node from doing its work (the
// driver or the expiry timer stopped, or a stream was deleted, replaced or
// cut short under it: ErrStreamChanged); the caller should shut
// down and exit non-zero.
func (n *Node) Err() <-chan error { return n.errs }

// Close stops the HTTP API (its waits and streams end, its requests
// drain within ctx), then the timer, then the server (see
// the core in the package doc's shutdown order).
func (n *Node) Close(ctx context.Context) error {
	n.closeOnce.Do(func() {
		if n.closing != nil {
			close(n.closing)
		}
	})
	if n.watched != nil {
		<-n.watched
	}
	var httpErr error
	if n.http != nil {
		httpErr = n.http.Close(ctx)
	}
	if n.stopNotify != nil {
		n.stopNotify()
		<-n.notifyDone
		n.stopNotify = nil
	}
	if n.stopTimer != nil {
		n.stopTimer()
		<-n.timerDone
		<-n.pairingDone
		n.stopTimer = nil
	}
	return errors.Join(httpErr, n.closeServer(ctx))
}

// Processors is the processor set of a node, in order (replay runs the
// same list): risk, gate (sharing risk's assessments), audit, stats,
// pairing.
func Processors(opts processors.Options, signer note.Signer) ([]processors.Processor, error) {
	memo := &risk.Memo{}
	g, err := gate.New(gate.Options{Options: opts, Memo: memo})
	if err != nil {
		return nil, err
	}
	a, err := audit.New(audit.Config{Signer: signer})
	if err != nil {
		return nil, err
	}
	return []processors.Processor{risk.NewProcessorWith(opts).WithMemo(memo), g, a, stats.New(), pairing.New()}, nil
}

// DefaultRedactor builds the ingest service's redaction step with the
// default rules (gitleaks' rule set plus Vigil's agent rules).
func DefaultRedactor() (ingest.Redactor, error) {
	r, err := redact.New(redact.Config{})
	if err != nil {
		return nil, fmt.Errorf("build the redaction rules: %w", err)
	}
	return r, nil
}

// RedactorFor builds the redaction step for the settings of a config event.
func RedactorFor(rs events.RedactionSettings) (ingest.Redactor, error) {
	r, err := redact.New(redact.Config{Settings: rs})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// CheckConfig is the whole-config check the ingest service runs on every
// config event before it is stored, whoever sends it and however: the
// event's own validation, then everything that must compile under it (the
// policy rules' CEL, deny rules, redaction rules). A config that passes
// here cannot make the gate fail closed on every action.
func CheckConfig(cfg events.Config) error {
	if _, err := gate.NewRiskScorer(cfg.WithDefaults()); err != nil {
		return fmt.Errorf("the analyzers do not compile under it: %w", err)
	}
	if _, err := RedactorFor(cfg.Redaction); err != nil {
		return fmt.Errorf("its redaction settings do not build: %w", err)
	}
	return nil
}
