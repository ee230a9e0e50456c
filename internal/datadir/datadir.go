// Package datadir is the layout of a Vigil data directory: every file and
// directory a node keeps there has its path here, and nowhere else
// (TestNoHandBuiltPaths checks the rest of the tree). It also holds the
// directory's Lock, which one process at a time owns.
//
// The few names a client reads (serve.json, creds/ROLE.nk, fleet-ca.pem)
// are public, in client/transport, because public packages may not import
// internal/: this package takes them from there.
//
// It sits under the path into the log and the path out of it alike: the
// node writes the directory, the CLI and clients read it. The package does
// no I/O but the Lock's; writers keep their own permissions, listed here.
//
// A data directory DATA (vigil serve --data, default client.DefaultDataDir;
// the directory itself 0700, made by the node at start):
//
//	path                                  what                                               written by                          mode
//	serve.json                            how to reach the running node (client.ServeInfo)   the node at start; removed at stop  0600
//	serve.lock                            the Lock; holds its holder's pid                   Lock (serve; offline CLI commands)  0600
//	jetstream/                            the JetStream store (the log, derived, buckets)    nats-server (StoreDir)              0700
//	jetstream/jetstream/$SYS/_js_/_meta_  the cluster's meta group: a fleet node's store     nats-server, in a cluster only      0700
//	projections/                          the read models (Pebble)                           projections.Store                   Pebble's
//	projections.lock                      the read models' own lock                          projections.Open                    0600
//	snapshots/                            fold snapshots of a single host (a fleet: bucket)  internal/driver                     0700, files 0600
//	ingest-ids/                           the ingest id index of a single host (Pebble)      internal/ingest                     Pebble's
//	streams.json                          the streams the node runs on (stream watch)        internal/node                       0600
//	redaction-seen                        the redaction settings in force, a start cache     internal/node                       0600
//	continuity.json                       how far the log was verified, a start cache        internal/node                       0600
//	creds/                                the credentials directory (Creds), unless          natsutil.EnsureCreds                0700
//	                                      --creds-dir names another
//	tls/node.pem, tls/node.key            the certificate the node issued itself             natsutil.EnsureNodeCert             0644, 0600 (dir 0700)
//	audit/signer.key                      the audit signing key (private)                    auditkey                            0600 (dir 0700)
//	audit/verifier.key                    the audit verifier key (public)                    auditkey                            0644
//
// A credentials directory (DATA/creds, or the --creds-dir a fleet shares
// and copies to every node):
//
//	path                what                                         written by                                  mode
//	ROLE.nk             the role's nkey seed (every natsutil.Roles)  natsutil.EnsureCreds                        0600
//	ROLE.token          the role's HTTP bearer token (TokenRoles)    natsutil.EnsureTokens                       0600
//	ROLE.creds          the role's seed as a NATS .creds file        vigil creds create (default --out)          0600
//	pairing.key         the key of the pairing codes                 pairinglog                                  0600
//	fleet-ca.pem        the fleet CA's certificate                   natsutil.EnsureFleetCA; vigil creds create  0644
//	fleet-ca.key        the fleet CA's key and certificate           natsutil.EnsureFleetCA; vigil creds create  0600
//	tls/NAME.pem, .key  a node's certificate issued off the node     vigil creds create --tls-node NAME          0644, 0600
//
// Relative url_file and secret_file paths of a config's webhooks resolve
// under DATA too (internal/notify); they are the operator's files, not
// the node's.
//
// On the data path: assembly: where a node keeps what the log path and
// the read path write on disk.
package datadir

import (
	"path/filepath"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
)

// Names of the entries of a data directory.
const (
	ServeInfoFile     = transport.ServeInfoFile
	LockFile          = "serve.lock"
	JetStreamDir      = "jetstream"
	ProjectionsDir    = "projections"
	SnapshotsDir      = "snapshots"
	IngestIndexDir    = "ingest-ids"
	StreamsFile       = "streams.json"
	RedactionSeenFile = "redaction-seen"
	ContinuityFile    = "continuity.json"
	TLSDir            = "tls"
	AuditDir          = "audit"
	SignerFile        = "signer.key"
	VerifierFile      = "verifier.key"
)

// Names of the entries of a credentials directory.
const (
	FleetCAFile    = transport.FleetCAFile
	FleetCAKeyFile = "fleet-ca.key"
	PairingKeyFile = "pairing.key"
	TokenExt       = ".token"
	NATSCredsExt   = ".creds"
)

// nodeCertName is the name (before .pem and .key) of the certificate a
// node issues itself, under DATA/tls.
const nodeCertName = "node"

// Layout is the layout of one data directory. Its methods return paths;
// none touches the disk but Lock and LockExisting.
type Layout struct{ dir string }

// New is the layout of the data directory dir.
func New(dir string) Layout { return Layout{dir: dir} }

// Dir is the data directory itself.
func (l Layout) Dir() string { return l.dir }

func (l Layout) join(elem ...string) string {
	return filepath.Join(append([]string{l.dir}, elem...)...)
}

// ServeInfo is DATA/serve.json: how clients find the running node.
func (l Layout) ServeInfo() string { return l.join(ServeInfoFile) }

// LockPath is DATA/serve.lock, the file the Lock holds.
func (l Layout) LockPath() string { return l.join(LockFile) }

// JetStream is DATA/jetstream, nats-server's StoreDir.
func (l Layout) JetStream() string { return l.join(JetStreamDir) }

// JetStreamMeta is the directory of the cluster's meta group in the
// JetStream store, nats-server's own layout under StoreDir: it exists on
// a fleet node only, whose log is replicated and cannot be opened alone.
func (l Layout) JetStreamMeta() string {
	return l.join(JetStreamDir, "jetstream", "$SYS", "_js_", "_meta_")
}

// Projections is DATA/projections, the read models' Pebble database.
func (l Layout) Projections() string { return l.join(ProjectionsDir) }

// ProjectionsLock is the lock file projections.Open takes beside its
// directory: DATA/projections.lock.
func (l Layout) ProjectionsLock() string { return l.Projections() + ".lock" }

// Snapshots is DATA/snapshots, a single host's fold snapshots.
func (l Layout) Snapshots() string { return l.join(SnapshotsDir) }

// IngestIndex is DATA/ingest-ids, a single host's ingest id index.
func (l Layout) IngestIndex() string { return l.join(IngestIndexDir) }

// Streams is DATA/streams.json, the streams the node runs on.
func (l Layout) Streams() string { return l.join(StreamsFile) }

// RedactionSeen is DATA/redaction-seen, the redaction settings the last
// start found in force.
func (l Layout) RedactionSeen() string { return l.join(RedactionSeenFile) }

// Continuity is DATA/continuity.json, how far the log was verified.
func (l Layout) Continuity() string { return l.join(ContinuityFile) }

// Creds is the data directory's own credentials directory, DATA/creds.
func (l Layout) Creds() Creds { return CredsAt(transport.CredsDir(l.dir)) }

// TLS is DATA/tls, where the node keeps the certificate it issued itself.
func (l Layout) TLS() string { return l.join(TLSDir) }

// NodeCert is DATA/tls/node.pem, the certificate the node issued itself.
func (l Layout) NodeCert() string { return l.join(TLSDir, nodeCertName+".pem") }

// NodeKey is DATA/tls/node.key, NodeCert's private key.
func (l Layout) NodeKey() string { return l.join(TLSDir, nodeCertName+".key") }

// Audit is DATA/audit, the audit key's directory.
func (l Layout) Audit() string { return l.join(AuditDir) }

// Signer is DATA/audit/signer.key, the audit signing key.
func (l Layout) Signer() string { return l.join(AuditDir, SignerFile) }

// Verifier is DATA/audit/verifier.key, the audit verifier key.
func (l Layout) Verifier() string { return l.join(AuditDir, VerifierFile) }

// Creds is the layout of a credentials directory: DATA/creds, or the
// --creds-dir of a fleet.
type Creds struct{ dir string }

// CredsAt is the layout of the credentials directory dir.
func CredsAt(dir string) Creds { return Creds{dir: dir} }

// Dir is the credentials directory itself.
func (c Creds) Dir() string { return c.dir }

// Seed is ROLE.nk, the role's nkey seed.
func (c Creds) Seed(r events.Role) string { return transport.CredsFileIn(c.dir, r) }

// Token is ROLE.token, the role's HTTP bearer token.
func (c Creds) Token(r events.Role) string { return filepath.Join(c.dir, string(r)+TokenExt) }

// NATSCreds is ROLE.creds, the role's seed as a NATS .creds file.
func (c Creds) NATSCreds(r events.Role) string {
	return filepath.Join(c.dir, string(r)+NATSCredsExt)
}

// PairingKey is pairing.key, the key of the pairing codes.
func (c Creds) PairingKey() string { return filepath.Join(c.dir, PairingKeyFile) }

// FleetCA is fleet-ca.pem, the fleet CA's certificate.
func (c Creds) FleetCA() string { return filepath.Join(c.dir, FleetCAFile) }

// FleetCAKey is fleet-ca.key, the fleet CA's private key.
func (c Creds) FleetCAKey() string { return filepath.Join(c.dir, FleetCAKeyFile) }

// NodeCert is tls/NAME.pem, the certificate of node name issued off the
// node.
func (c Creds) NodeCert(name string) string { return filepath.Join(c.dir, TLSDir, name+".pem") }

// NodeKey is tls/NAME.key, NodeCert's private key.
func (c Creds) NodeKey(name string) string { return filepath.Join(c.dir, TLSDir, name+".key") }
