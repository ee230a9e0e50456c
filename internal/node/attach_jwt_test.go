package node

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode/wait"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/gate"
)

// operatorNATS is a nats-server in operator mode (decentralized auth:
// an operator JWT, a system account and an application account with
// JetStream, resolved from memory), speaking TLS only with a
// certificate of its own CA. It returns the server, the CA file and a
// function writing a user .creds file of the application account.
func operatorNATS(t *testing.T) (*natsserver.Server, string, func(name string, perms *jwt.Permissions) string) {
	t.Helper()
	dir := t.TempDir()
	o := newOperatorAccounts(t)
	opClaims, err := jwt.DecodeOperatorClaims(o.opJWT)
	if err != nil {
		t.Fatal(err)
	}
	res := &natsserver.MemAccResolver{}
	res.Store(o.sysPub, o.sysJWT)
	res.Store(o.accPub, o.accJWT)

	if _, err := natsutil.EnsureFleetCA(dir); err != nil {
		t.Fatal(err)
	}
	cert, key := filepath.Join(dir, "nats.pem"), filepath.Join(dir, "nats.key")
	if _, err := natsutil.EnsureNodeCert(dir, "corp-nats", natsutil.NodeHosts(nil, nil), cert, key); err != nil {
		t.Fatal(err)
	}
	ca := datadir.CredsAt(dir).FleetCA()
	certs, err := natsutil.LoadCerts(natsutil.TLSFiles{Cert: cert, Key: key, CA: ca})
	if err != nil {
		t.Fatal(err)
	}
	opts := &natsserver.Options{ServerName: "corp", Host: "127.0.0.1", Port: -1, NoSigs: true, NoLog: true,
		JetStream: true, StoreDir: filepath.Join(dir, "js"),
		TrustedOperators: []*jwt.OperatorClaims{opClaims}, AccountResolver: res, SystemAccount: o.sysPub,
		TLSConfig: certs.ServerConfig(), TLS: true, TLSTimeout: 2}
	ns, err := natsserver.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(wait.Default) {
		t.Fatal("operator-mode nats-server not ready")
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	user := func(name string, perms *jwt.Permissions) string {
		var p jwt.Permissions
		if perms != nil {
			p = *perms
		}
		return o.userCreds(t, dir, name, p)
	}
	return ns, ca, user
}

// TestAttachOperatorModeJWT: a node attaches to a NATS it does not run
// (operator mode, user JWT .creds, TLS with the operator's CA), creates
// its streams in the account it is given, and an agent whose user JWT
// carries only the agent role's permissions gates an action through it.
func TestAttachOperatorModeJWT(t *testing.T) {
	ns, ca, user := operatorNATS(t)
	service := user("vigil-service", nil)
	s, err := Start(t.Context(), Config{
		DataDir: t.TempDir(), NATSURL: ns.ClientURL(), ServiceCreds: service, TLSCA: ca, NodeName: "attached",
		Durability: natsutil.DurabilityInterval, NoExpiry: true,
		Processors: func() ([]processors.Processor, error) {
			g, err := gate.New(gate.Options{})
			if err != nil {
				return nil, err
			}
			return []processors.Processor{g}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	perms := natsutil.JWTPermissions(natsutil.RoleAgent)
	agent := user("agent-1", &perms)
	c, err := client.Connect(t.Context(), client.Options{URL: ns.ClientURL(), CredsFile: agent, TLSCA: ca, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.GateAndWait(t.Context(), action("jwt-1", "jwt-conv", "ls -la"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome == "" || res.Seq == 0 {
		t.Fatalf("no decision: %+v", res)
	}
	// The agent's JWT permits nothing else: not the log.
	if _, err := c.JetStream().Stream(t.Context(), events.StreamLog); err == nil {
		t.Error("the agent's JWT reads the log stream")
	}
	// Without the operator's CA there is no connection.
	if c2, err := client.Connect(t.Context(), client.Options{URL: ns.ClientURL(), CredsFile: filepath.Join(t.TempDir(), "x.creds"), Timeout: 2 * time.Second}); err == nil {
		c2.Close()
		t.Error("connected without credentials or CA")
	}
}

// TestAttachHTTPNeedsRoleCreds: a node attached to a NATS it does not run
// with the HTTP API on and no role credentials in its creds dir does not
// start, and says where they go and how to run without the API.
func TestAttachHTTPNeedsRoleCreds(t *testing.T) {
	ns, ca, user := operatorNATS(t)
	_, err := Start(t.Context(), Config{
		DataDir: t.TempDir(), NATSURL: ns.ClientURL(), ServiceCreds: user("vigil-service", nil), TLSCA: ca, NodeName: "attached",
		Durability: natsutil.DurabilityInterval, NoExpiry: true, HTTPListen: "127.0.0.1:0",
		Processors: func() ([]processors.Processor, error) { return nil, nil },
	})
	if err == nil || !strings.Contains(err.Error(), "<role>.nk") || !strings.Contains(err.Error(), "--http-listen ''") {
		t.Fatalf("Start: %v, want the role credentials' place and --http-listen ''", err)
	}
}
