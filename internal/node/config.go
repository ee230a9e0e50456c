package node

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/auditkey"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/driver"
	"github.com/vigil-dev/vigil/internal/httpapi"
	"github.com/vigil-dev/vigil/internal/ingest"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/redact"
)

// Config configures a node. The zero value of a field is its default
// (EnsureDefaults fills them; Start calls it): redaction with the default
// rules, rebuilt from each global config's redaction settings; the
// whole-config check on every config event; the node's processors
// signing with the key in KeyDir; read models in
// datadir.Layout.Projections; the expiry and pairing timers. Only the
// fields named Unsafe* turn a safety step off.
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
	// force (see ingest.Config.NewRedactor); default: derived from Redactor
	// with redact.(*Redactor).With when Redactor is a *redact.Redactor
	// (the built-in rules compile once a process), else RedactorFor.
	NewRedactor func(events.RedactionSettings) (ingest.Redactor, error)
	// CheckConfig is run by the ingest service on every config event
	// before it is stored (see ingest.Config.CheckConfig); default the
	// checks of the function CheckConfig, building redaction with
	// NewRedactor.
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
	// missing (internal/node/integrity).
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

// MaxReplicas is the most stream replicas a node accepts.
const MaxReplicas = 5

// ErrInvalidConfig is what every ConfigError is (errors.Is).
var ErrInvalidConfig = errors.New("invalid node config")

// ConfigError names the field of a Config that is wrong, its value when
// that helps, and what to do about it. With names the other field of a
// conflict, as Reason names it too, so that a front-end that sets the
// fields under other names (vigil serve's flags) can say it in its own.
type ConfigError struct {
	Field  string // the Config field, e.g. "Replicas"
	Value  string // the field's value as given, e.g. "7"; empty when the reason says it
	With   string // the other field of a conflict, e.g. "NATSURL"
	Reason string
}

func (e *ConfigError) Error() string {
	if e.Value != "" {
		return fmt.Sprintf("node: %s %s: %s", e.Field, e.Value, e.Reason)
	}
	return fmt.Sprintf("node: %s: %s", e.Field, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalidConfig) true.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

// EnsureDefaults fills every zero field that has a default (see Config).
// It reads no file: the audit key's verifiers (AuditVerifiers) are loaded
// by Start, after Validate. It fails only when the default redaction
// rules do not build.
func (c *Config) EnsureDefaults() error {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.NodeName == "" {
		c.NodeName = "local"
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.Durability == "" {
		c.Durability = natsutil.DurabilityFsync
	}
	if c.DataDir != "" {
		if c.KeyDir == "" {
			c.KeyDir = c.DataDir
		}
		if c.CredsDir == "" {
			c.CredsDir = datadir.New(c.DataDir).Creds().Dir()
		}
	}
	if c.Redactor == nil && !c.UnsafeNoRedaction {
		r, err := DefaultRedactor()
		if err != nil {
			return err
		}
		c.Redactor = r
	}
	if c.NewRedactor == nil && !c.UnsafeNoRedaction {
		c.NewRedactor = RedactorFor
		// The built-in rules are compiled once a process.
		if base, ok := c.Redactor.(*redact.Redactor); ok {
			c.NewRedactor = redactorsFrom(base)
		}
	}
	if c.CheckConfig == nil && !c.UnsafeNoConfigCheck {
		c.CheckConfig = CheckConfig
		if c.NewRedactor != nil {
			c.CheckConfig = checkConfigWith(c.NewRedactor)
		}
	}
	if c.Processors == nil && !c.NoProcessors {
		keyDir := c.KeyDir
		c.Processors = func() ([]processors.Processor, error) {
			signer, _, err := auditkey.LoadOrCreate(keyDir)
			if err != nil {
				return nil, err
			}
			return Processors(processors.Options{}, signer)
		}
		if c.ProjectionsDir == "" && c.Sink == nil && c.DataDir != "" {
			c.ProjectionsDir = datadir.New(c.DataDir).Projections()
		}
	}
	return nil
}

// Validate checks c as it is and reports every problem at once, each a
// *ConfigError. Start runs it after EnsureDefaults, so a zero field that
// has a default passes there; a caller that validates first (vigil serve,
// before it creates anything) has zero Replicas and Durability reported.
func (c *Config) Validate() error {
	var errs []error
	bad := func(e ConfigError) { errs = append(errs, &e) }
	if c.DataDir == "" {
		bad(ConfigError{Field: "DataDir", Reason: "is required; give the node's data directory"})
	}
	if c.Replicas < 1 || c.Replicas > MaxReplicas {
		bad(ConfigError{Field: "Replicas", Value: strconv.Itoa(c.Replicas), Reason: "use 1 on a single host, 3 (or 5) in a fleet"})
	}
	if c.Cluster.Name != "" && c.NATSURL != "" {
		bad(ConfigError{Field: "Cluster.Name", With: "NATSURL",
			Reason: "it starts an embedded cluster node and NATSURL attaches to an existing one: use one of them"})
	}
	if _, err := natsutil.ParseDurability(string(c.Durability)); err != nil {
		bad(ConfigError{Field: "Durability", Reason: err.Error()})
	}
	switch c.TLSMode {
	case "", TLSAuto, TLSOn, TLSOff:
	default:
		bad(ConfigError{Field: "TLSMode", Value: c.TLSMode, Reason: fmt.Sprintf("use %q, %q or %q", TLSAuto, TLSOn, TLSOff)})
	}
	return errors.Join(errs...)
}
