// Package node assembles a Vigil node, the way `vigil serve` runs it:
// the embedded nats-server (or a connection to an existing cluster), the
// streams, the ingest service with its redaction step following the
// config in force, the live driver running every processor (risk, gate,
// audit, stats, pairing) with its read models, the integrity guards (the
// stream watch, the continuity check, the fleet's audit key; their
// judgements in internal/node/integrity), the
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
// checkpoint (internal/node/integrity). docs/durability.md tells operators what to do.
//
// On the data path: assembly: what `vigil serve` starts between the NATS
// plumbing and the front-ends, in order, and stops (README, "internal/ by
// its place on the data path").
package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strings"
	"sync"
	"sync/atomic"
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

// Node is a running node.
type Node struct {
	cfg   Config
	ns    *natsserver.Server
	nc    *nats.Conn
	js    jetstream.JetStream
	ing   *ingest.Service
	drv   *driver.Driver
	store *projections.Store
	lock  *datadir.Lock
	// core runs the driver, the sealer, the stream watch and the
	// continuity check; front the notifier, the timers and the
	// forwarding of the core's failure to errs (tasks).
	core, front *tasks
	// sealLooks counts the sealer's looks at the log (a test waits on it).
	sealLooks atomic.Int64
	// drvErr receives the core's first failure (fail); errs is Err.
	drvErr chan error
	info   client.ServeInfo
	fleet  *FleetInfo
	closed bool
	mu     sync.Mutex
	watch  watchState

	// http is the HTTP API, when Config.HTTPListen is set.
	http *httpapi.Server
	errs chan error
	// notifier announces pending actions to the config's webhooks
	// (internal/notify).
	notifier *notify.Notifier
}

// Start starts a node with cfg's defaults filled in (EnsureDefaults)
// after checking it (Validate; a *ConfigError for each problem).
func Start(ctx context.Context, cfg Config) (*Node, error) {
	begun := time.Now()
	if err := cfg.EnsureDefaults(); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
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
	n.errs, n.front = make(chan error, 2), newTasks(ctx)
	n.front.Go("failure forwarding", func(ctx context.Context) {
		select {
		case err, ok := <-n.drvErr:
			if ok && err != nil {
				if !errors.Is(err, ErrStreamChanged) {
					// A driver reading a deleted stream can fail before
					// the watch looks: report the stream if that is it.
					if serr := n.checkStreams(ctx); serr != nil {
						n.failStreams(ctx, serr)
						err = serr
					} else {
						err = fmt.Errorf("processor driver: %w", err)
					}
				}
				n.errs <- err
			}
		case <-ctx.Done():
		}
	})
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
		// The pairing timer retries on its own; it stops only with the node.
		n.front.Go("pairing timer", func(ctx context.Context) { ptimer.Run(ctx) })
		n.front.Go("expiry timer", func(ctx context.Context) {
			if err := timer.Run(ctx); err != nil && ctx.Err() == nil {
				n.taskFailed(ctx, fmt.Errorf("expiry timer stopped (approvals would never expire): %w", err))
			}
		})
	}
	if st := n.Projections(); st != nil && !cfg.NoProcessors {
		n.startNotify(ctx, cfg, st, begun)
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

// taskFailed reports a background task's fatal error on Err, unless the
// cause is a stream that changed under the node: a task reading a deleted
// or replaced stream often fails before the stream watch looks again, and
// then the stream, not the task, is what the operator must be told about.
func (n *Node) taskFailed(ctx context.Context, err error) {
	if n.Healthy() != nil {
		return // already failing: the first failure is the one reported
	}
	if serr := n.checkStreams(ctx); serr != nil {
		n.failStreams(ctx, serr)
		return
	}
	n.errs <- err
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
	if errors.Is(err, fs.ErrNotExist) && cfg.NATSURL != "" {
		return fmt.Errorf("HTTP API on %s: %w\nattached to a NATS this node does not run, the HTTP API connects as each role with %s/<role>.nk (a .creds file or an nkey seed) and fleet-ca.pem beside them; put them there, or run without the HTTP API (--http-listen '')",
			cfg.HTTPListen, err, credsDir)
	}
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

// notifySkew allows for the clocks of a fleet's stream leader and this
// node when the notifier's consumer is first created.
const notifySkew = time.Minute

// startNotify starts the notifier: webhooks of the config in force, from
// the read models, for each new pending action, from those stored since
// begun (the node's start) when its consumer is first made.
func (n *Node) startNotify(ctx context.Context, cfg Config, st *projections.Store, begun time.Time) {
	nt, err := notify.New(notify.Options{
		JetStream: n.JetStream(), DataDir: cfg.DataDir, Logger: cfg.Logger.With("component", "notify"),
		Since: begun.Add(-notifySkew),
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
		Applied: st.WaitPosition,
	})
	if err != nil {
		cfg.Logger.Error("notifications off", "err", err)
		return
	}
	n.notifier = nt
	n.front.Go("notifier", func(ctx context.Context) { nt.Serve(ctx) })
}

// Err receives a failure that stops the node from doing its work (the
// driver or the expiry timer stopped, or a stream was deleted, replaced or
// cut short under it: ErrStreamChanged); the caller should shut
// down and exit non-zero.
func (n *Node) Err() <-chan error { return n.errs }

// Close stops the HTTP API (its waits and streams end, its requests
// drain within ctx), then the notifier and the timers, then the core (see
// the package doc's shutdown order). Every wait is bounded by ctx: when
// it is done, Close returns an error naming what was still running, and
// leaves the read models open rather than close them under the driver.
func (n *Node) Close(ctx context.Context) error {
	var errs []error
	if n.http != nil {
		errs = append(errs, n.http.Close(ctx))
	}
	if n.front != nil {
		errs = append(errs, n.front.stop(ctx))
	}
	return errors.Join(append(errs, n.closeServer(ctx))...)
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

// redactorsFrom builds the redaction step for the settings of each config
// event from base, compiling only the config's extra rules.
func redactorsFrom(base *redact.Redactor) func(events.RedactionSettings) (ingest.Redactor, error) {
	return func(rs events.RedactionSettings) (ingest.Redactor, error) {
		r, err := base.With(redact.Config{Settings: rs})
		if err != nil {
			return nil, err
		}
		return r, nil
	}
}

// checkConfigWith is CheckConfig with the redaction step built by
// newRedactor, the one the ingest service applies.
func checkConfigWith(newRedactor func(events.RedactionSettings) (ingest.Redactor, error)) func(events.Config) error {
	return func(cfg events.Config) error {
		if _, err := gate.NewRiskScorer(cfg.WithDefaults()); err != nil {
			return fmt.Errorf("the analyzers do not compile under it: %w", err)
		}
		if _, err := newRedactor(cfg.Redaction); err != nil {
			return fmt.Errorf("its redaction settings do not build: %w", err)
		}
		return nil
	}
}

// CheckConfig is the whole-config check the ingest service runs on every
// config event before it is stored, whoever sends it and however: the
// event's own validation, then everything that must compile under it (the
// policy rules' CEL, deny rules, redaction rules). A config that passes
// here cannot make the gate fail closed on every action.
func CheckConfig(cfg events.Config) error { return checkConfigWith(RedactorFor)(cfg) }
