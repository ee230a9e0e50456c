package main

import (
	"context"
	"errors"

	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/internal/auditkey"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/ingest"
	"github.com/vigil-dev/vigil/internal/memlimit"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/internal/setup"
	"github.com/vigil-dev/vigil/processors"
)

type serveFlags struct {
	natsListen string
	httpListen string
	// httpDefault: --http-listen was not given, so a busy default port
	// falls back to a free one (http_url in serve.json names it).
	httpDefault bool
	// httpHosts are the names the HTTP API serves beyond its address.
	httpHosts    []string
	durability   string
	syncInterval time.Duration
	dedupWindow  time.Duration
	node         string
	cluster      string
	clusterAddr  string
	routes       []string
	replicas     int
	credsDir     string
	config       string
	sealEvery    time.Duration
	acceptNewLog bool
	// acceptAuditKey records this node's audit key as the fleet's.
	acceptAuditKey bool
	// shutdownTimeout bounds a shutdown; the budget starts when shutdown does.
	shutdownTimeout time.Duration
	// TLS (docs/security.md, "TLS").
	tlsMode, tlsCert, tlsKey string
	tlsHosts                 []string
	insecureLab              bool
}

func newServeCmd(c *cli) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run Vigil: embedded NATS with JetStream, ingest, processors",
		Long: `Run a Vigil node on this host: an embedded nats-server with JetStream file
storage in the data directory, listening on loopback only by default, the
ingest service, and every processor. Client commands find it through
DIR/serve.json and the credentials in DIR/creds (0600).

Durability (see docs/durability.md):
  fsync     fsync every write before acknowledging it (default): an
            acknowledged event survives a crash of the process, of the OS,
            and a power loss.
  interval  fsync every --sync-interval: survives a process crash; an OS
            crash or power loss can lose acknowledged events of the interval.

Fleet (many agents on many hosts):
  embedded cluster node:  vigil serve --node n1 --cluster vigil --cluster-listen 10.0.0.1:6222 \
                            --routes nats-route://10.0.0.2:6222,nats-route://10.0.0.3:6222 \
                            --replicas 3 --creds-dir /etc/vigil/creds
  attach to a cluster:    vigil serve --nats nats://a:4222,nats://b:4222 --creds service.creds --replicas 3
Every node needs the same role credentials ('vigil creds create' makes them;
copy the --creds-dir) and the same audit key ('vigil audit key create --out
FILE', installed as DIR/audit/signer.key before the node's first start: a
node with another key than the fleet's refuses to start), and a unique
--node. Every node runs the ingest service (queue group) and every processor;
outputs are deduplicated by id and against what the derived stream holds, so
any node may die, for any length of time, without losing or doubling
anything. docs/fleet.md has the setup on three machines or one.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.httpDefault = !cmd.Flags().Changed("http-listen")
			return c.serve(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.natsListen, "nats-listen", "127.0.0.1:4222", "host:port for NATS clients (port 0 picks a free port)")
	fl.StringArrayVar(&f.httpHosts, "http-host", nil, "a name the HTTP API answers besides its address and localhost (NAME or NAME:PORT; repeatable): a reverse proxy's, a DNS name; other Host values get 421")
	fl.StringVar(&f.httpListen, "http-listen", "127.0.0.1:7411", "host:port for the HTTP API (docs/http.md; tokens in DIR/creds/<role>.token); empty: none")
	fl.StringVar(&f.durability, "durability", string(natsutil.DurabilityFsync), "fsync policy: fsync (every write) or interval")
	fl.DurationVar(&f.syncInterval, "sync-interval", 2*time.Minute, "fsync interval with --durability interval")
	fl.DurationVar(&f.dedupWindow, "dedup-window", natsutil.DefaultDedupWindow, "how long retried event ids are recognised")
	fl.StringVar(&f.node, "node", "local", "node name (unique in a fleet)")
	fl.StringVar(&f.cluster, "cluster", "", "join a NATS cluster of this name (embedded cluster node)")
	fl.StringVar(&f.clusterAddr, "cluster-listen", "127.0.0.1:6222", "host:port for cluster routes, with --cluster")
	fl.StringSliceVar(&f.routes, "routes", nil, "routes to the other nodes (nats-route://host:port), with --cluster")
	fl.IntVar(&f.replicas, "replicas", 1, "stream replicas (3 in a fleet)")
	fl.DurationVar(&f.sealEvery, "seal-interval", time.Minute, "append an audit.seal (a signed checkpoint) this often when the log has moved; 0 disables")
	fl.StringVar(&f.config, "config", "", "config file (YAML or JSON) to append at start if it differs from the one in force")
	fl.StringVar(&f.credsDir, "creds-dir", "", "directory of the role credentials (default DIR/creds; share it across a fleet)")
	fl.BoolVar(&f.acceptNewLog, "accept-new-log", false, "serve a VIGIL_LOG that is not the one this node ran on (deleted and recreated, replaced, or cut short); see docs/durability.md")
	fl.BoolVar(&f.acceptAuditKey, "accept-audit-key", false, "in a fleet: record this node's audit key as the fleet's (after giving every node a new key on purpose); see docs/fleet.md")
	fl.StringVar(&f.tlsMode, "tls", node.TLSAuto, "TLS on the NATS, cluster and HTTP listeners: auto (on for a --cluster node, off for a single host on loopback), on, off")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "this node's certificate (PEM; server and client auth), verified with --tls-ca; default: one the node issues itself from the fleet CA in the creds dir")
	fl.StringVar(&f.tlsKey, "tls-key", "", "the private key of --tls-cert")
	fl.StringSliceVar(&f.tlsHosts, "tls-host", nil, "more names or addresses the node's own certificate is valid for (its listen hosts, host name and loopback always are)")
	fl.BoolVar(&f.insecureLab, "insecure-lab", false, "allow a cluster, or listeners beyond loopback, without TLS (a lab only: logged at every start, shown by status and /metrics)")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long a shutdown may take, counted from the signal")
	return cmd
}

// serveProcessors returns the constructor of the processors every node
// runs, signing audit checkpoints with the key in keyDir/audit.
func serveProcessors(keyDir string) func() ([]processors.Processor, error) {
	return func() ([]processors.Processor, error) {
		signer, _, err := auditkey.LoadOrCreate(keyDir)
		if err != nil {
			return nil, err
		}
		return node.Processors(processors.Options{}, signer)
	}
}

// signerProcessors is serveProcessors with the key loaded already: serve
// loads (or creates) it before the node starts, so a fleet node compares
// it with the fleet's before it signs anything.
func signerProcessors(signer note.Signer) func() ([]processors.Processor, error) {
	return func() ([]processors.Processor, error) {
		return node.Processors(processors.Options{}, signer)
	}
}

func (c *cli) serve(ctx context.Context, f serveFlags) error {
	log, err := c.logger()
	if err != nil {
		return err
	}
	dur, err := natsutil.ParseDurability(f.durability)
	if err != nil {
		return fmt.Errorf("--durability: %w", err)
	}
	cfg := node.Config{
		NATSURL:        c.natsURL,
		ServiceCreds:   c.creds,
		CredsDir:       f.credsDir,
		Replicas:       f.replicas,
		Cluster:        natsutil.ClusterConfig{Name: f.cluster, Listen: f.clusterAddr, Routes: f.routes},
		DataDir:        c.data(),
		NATSListen:     f.natsListen,
		HTTPListen:     f.httpListen,
		Durability:     dur,
		SyncInterval:   f.syncInterval,
		DedupWindow:    f.dedupWindow,
		NodeName:       f.node,
		AcceptAuditKey: f.acceptAuditKey,
		ProjectionsDir: datadir.New(c.data()).Projections(),
		SealInterval:   f.sealEvery,
		AcceptNewLog:   f.acceptNewLog,
		Logger:         log,
		TLSMode:        f.tlsMode,
		TLSCert:        f.tlsCert,
		TLSKey:         f.tlsKey,
		TLSCA:          c.tlsCA,
		TLSHosts:       f.tlsHosts,
		InsecureLab:    f.insecureLab,
		HTTPHosts:      f.httpHosts,
	}
	// Checked as given, before anything is created.
	if err := cfg.Validate(); err != nil {
		return serveConfigError(err)
	}
	// A soft memory limit that follows the live heap, unless GOMEMLIMIT
	// names one (internal/memlimit).
	limitCtx, stopLimit := context.WithCancel(ctx)
	defer stopLimit()
	memlimit.Auto(limitCtx, log)
	if f.httpDefault && cfg.HTTPListen != "" {
		// Another node on this host has the default port: take a free
		// one rather than fail; clients find it in serve.json.
		if ln, err := net.Listen("tcp", cfg.HTTPListen); err != nil {
			log.Warn("the HTTP API's default address is in use; listening on a free loopback port (http_url in serve.json)", "default", cfg.HTTPListen, "err", err)
			cfg.HTTPListen = "127.0.0.1:0"
		} else {
			ln.Close()
		}
	}
	signer, auditKey, err := auditkey.LoadOrCreate(c.data())
	if err != nil {
		return err
	}
	cfg.Processors, cfg.AuditKey = signerProcessors(signer), auditKey
	s, err := node.Start(ctx, cfg)
	if errors.Is(err, node.ErrStreamChanged) {
		return fmt.Errorf("%w\nTo serve VIGIL_LOG as it is now, start once with --accept-new-log", err)
	}
	if err != nil {
		return err
	}
	if f.shutdownTimeout <= 0 {
		f.shutdownTimeout = 30 * time.Second
	}
	// The shutdown budget starts when shutdown does, however long the node ran.
	shutdown := func() error {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.shutdownTimeout)
		defer cancel()
		return s.Close(sctx)
	}
	if f.config != "" {
		cl, err := client.Connect(ctx, client.Options{Conn: s.Conn()})
		if err == nil {
			err = applyConfigFile(ctx, cl, f.config, c.stderr)
			cl.Close()
		}
		if err != nil {
			shutdown()
			return fmt.Errorf("--config %s: %w", f.config, err)
		}
	}
	info := s.Info()
	fmt.Fprintf(c.stderr, "vigil serving on %s (data %s, durability %s); Ctrl-C to stop\n", info.NATSURL, info.DataDir, dur)
	setup.NoticeSingleUser(c.stderr, info.DataDir)
	if fl := s.Fleet(); fl != nil {
		fmt.Fprintf(c.stderr, "node %s of cluster %s (peers %s; at start: log leader %s, derived leader %s, meta leader %s; audit key %s); 'vigil status' shows it now\n",
			f.node, fl.Cluster, strings.Join(fl.Peers, ", "), fl.LogLeader, fl.DerivedLeader, fl.MetaLeader, fl.AuditKey)
	}
	if info.HTTPURL != "" {
		tokens := f.credsDir
		if tokens == "" {
			tokens = datadir.New(info.DataDir).Creds().Dir()
		}
		fmt.Fprintf(c.stderr, "HTTP API on %s (tokens in %s)\n", info.HTTPURL, tokens)
	}
	if t := s.TLS(); t != nil {
		fmt.Fprintf(c.stderr, "TLS on every listener: certificate %s (until %s), CA %s; SIGHUP reloads it\n",
			t.Files().Cert, t.Leaf().NotAfter.UTC().Format(time.DateOnly), t.Files().CA)
	} else if s.InsecureLab() {
		fmt.Fprintf(c.stderr, "INSECURE LAB MODE (--insecure-lab): events travel in clear text; never in production\n")
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
		case <-hup:
			if err := s.ReloadTLS(ctx); err != nil {
				log.Error("SIGHUP: TLS certificate not reloaded; the one in use stays", "err", err)
			}
			continue
		case err := <-s.Err():
			// A failed node exits non-zero, so a supervisor sees it.
			log.Error("node failed; shutting down", "err", err)
			return errors.Join(fmt.Errorf("serve: %w", err), shutdown())
		}
		break
	}
	log.Info("shutting down")
	return shutdown()
}

// newRedactor builds the ingest service's default redaction step.
func newRedactor() (ingest.Redactor, error) { return node.DefaultRedactor() }

// serveFlagOf names the serve flag (or root flag) that sets each field of
// node.Config that Validate can report.
var serveFlagOf = map[string]string{
	"DataDir":      "--data",
	"Replicas":     "--replicas",
	"Cluster.Name": "--cluster",
	"NATSURL":      "--nats",
	"Durability":   "--durability",
	"TLSMode":      "--tls",
}

// serveConfigError says each problem of a node.Validate error in the
// flags' names ("--replicas 7: use 1 …"); any other error is returned as
// it is. The result still wraps node.ErrInvalidConfig.
func serveConfigError(err error) error {
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	} else {
		list = []error{err}
	}
	var out []error
	for _, e := range list {
		var ce *node.ConfigError
		flag, ok := "", false
		if errors.As(e, &ce) {
			flag, ok = serveFlagOf[ce.Field]
		}
		if !ok {
			out = append(out, e)
			continue
		}
		reason := ce.Reason
		if with, ok := serveFlagOf[ce.With]; ok && ce.With != "" {
			reason = strings.ReplaceAll(reason, ce.With, with)
		}
		if ce.Value != "" {
			flag += " " + ce.Value
		}
		out = append(out, &flagError{flag: flag, reason: reason, err: ce})
	}
	return errors.Join(out...)
}

// flagError is a node.ConfigError said in the flag that sets the field.
type flagError struct {
	flag, reason string
	err          *node.ConfigError
}

func (e *flagError) Error() string { return e.flag + ": " + e.reason }
func (e *flagError) Unwrap() error { return e.err }
