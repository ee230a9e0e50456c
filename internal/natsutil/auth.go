package natsutil

import (
	"encoding/base64"
	"log/slog"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/vigil-dev/vigil/client/transport"
)

// Every connection of a role with permissions may subscribe to one inbox
// subtree only: _INBOX.<token>.>, where token is a random value the
// connection declares when it connects (as its CONNECT user name, beside
// its nkey). Replies and JetStream deliveries to one connection therefore
// never reach another connection of the same credential: an agent that
// subscribes to _INBOX.> or to another token's inbox is refused by the
// server, and it cannot learn another connection's token (it sees no
// other connection's traffic). This is what "per-connection inbox
// prefixes" means with credentials that many agents share; NATS's static
// nkey permissions cannot express it, so the embedded server
// authenticates clients through Authenticator.

// InboxRoot is the first token of every reply inbox (transport.InboxRoot).
const InboxRoot = transport.InboxRoot

// NewInboxToken returns a fresh random inbox token
// (transport.NewInboxToken).
func NewInboxToken() string { return transport.NewInboxToken() }

// ValidInboxToken reports whether tok can be a connection's inbox token
// (transport.ValidInboxToken).
func ValidInboxToken(tok string) bool { return transport.ValidInboxToken(tok) }

// InboxOptions give a connection a fresh inbox token, declared to the
// server and used as its inbox prefix (transport.InboxOptions).
func InboxOptions() []nats.Option { return transport.InboxOptions() }

// Permissions returns the NATS permissions of a role for a connection
// whose inbox token is tok ("" grants no inbox at all). Admin and service
// have no restrictions (nil).
//
// What each role needs, and nothing more (docs/security.md):
//   - agent: request on its agent ingest subjects; replies on its inbox.
//   - runtime: the agent subjects and the runtime subjects.
//   - approver: verdicts on the approval subjects; read the streams
//     (stream info, message get, ephemeral consumers that deliver to its
//     inbox); follow gate requests, decisions, risk and alerts live. Not:
//     configs, raw ingest requests, the ingest queue group, consumer
//     deletion or durable consumers, stream changes.
//
// protected names the node's durable consumers (its driver's on VIGIL_LOG,
// the notifier's on VIGIL_DERIVED) that no approver may create, change,
// delete, pull from or acknowledge.
func Permissions(r Role, tok string, protected ...string) *server.Permissions {
	var inbox []string
	if tok != "" {
		inbox = []string{InboxRoot + "." + tok + ".>"}
	}
	switch r {
	case RoleAgent:
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{"vigil.ingest.agent.*"}},
			Subscribe: &server.SubjectPermission{Allow: nonEmpty(inbox)},
		}
	case RoleRuntime:
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{"vigil.ingest.agent.*", "vigil.ingest.runtime.*"}},
			Subscribe: &server.SubjectPermission{Allow: nonEmpty(inbox)},
		}
	case RoleApprover:
		p := &server.Permissions{
			Publish: &server.SubjectPermission{
				Allow: []string{
					"vigil.ingest.approval.*",
					"$JS.API.INFO", "$JS.API.STREAM.INFO.*", "$JS.API.STREAM.NAMES",
					"$JS.API.STREAM.MSG.GET.*", "$JS.API.DIRECT.GET.>",
					"$JS.API.CONSUMER.CREATE.*.*", "$JS.API.CONSUMER.CREATE.*.*.>",
					"$JS.API.CONSUMER.INFO.*.*", "$JS.API.CONSUMER.MSG.NEXT.*.*",
					"$JS.ACK.>", "$JS.FC.>",
				},
			},
			Subscribe: &server.SubjectPermission{Allow: append(nonEmpty(inbox),
				"vigil.gate.*", "vigil.risk.*", "vigil.alert", "vigil.audit.checkpoint")},
		}
		for _, name := range protected {
			// Nor pull from it or acknowledge its messages: a pull takes
			// records the node never folds, a forged ack moves its ack
			// floor past records a restart would then skip.
			p.Publish.Deny = append(p.Publish.Deny,
				"$JS.API.CONSUMER.CREATE.*."+name, "$JS.API.CONSUMER.CREATE.*."+name+".>",
				"$JS.API.CONSUMER.INFO.*."+name, "$JS.API.CONSUMER.MSG.NEXT.*."+name,
				"$JS.ACK.*."+name+".>")
		}
		return p
	default: // admin, service
		return nil
	}
}

// nonEmpty keeps a permission list from being empty, which NATS reads as
// "everything": a connection with no inbox may subscribe to nothing.
func nonEmpty(l []string) []string {
	if len(l) == 0 {
		return []string{InboxRoot + ".none.none"}
	}
	return l
}

// Authenticator authenticates the embedded server's clients: an nkey
// signature over the server's nonce proves the role, and the connection
// gets that role's permissions for the inbox token it declared (see
// RoleOptions). It replaces nats-server's static nkey users, which cannot
// give two connections of one credential different inboxes.
type Authenticator struct {
	roles     map[string]Role // public key → role
	protected []string
	logger    *slog.Logger
}

// NewAuthenticator returns an authenticator for the role public keys;
// protected names the node's own durable consumers (see Permissions).
func NewAuthenticator(pubs map[Role]string, logger *slog.Logger, protected ...string) *Authenticator {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := &Authenticator{roles: make(map[string]Role, len(pubs)), logger: logger, protected: protected}
	for r, pub := range pubs {
		a.roles[pub] = r
	}
	return a
}

// Check implements server.Authentication.
func (a *Authenticator) Check(c server.ClientAuthentication) bool {
	if c.Kind() != server.CLIENT {
		return false
	}
	o := c.GetOpts()
	role, ok := a.roles[o.Nkey]
	if !ok || o.Sig == "" {
		a.logger.Warn("nats: connection refused: unknown credential", "remote", remote(c))
		return false
	}
	sig, err := base64.RawURLEncoding.DecodeString(o.Sig)
	if err != nil {
		if sig, err = base64.StdEncoding.DecodeString(o.Sig); err != nil {
			return false
		}
	}
	kp, err := nkeys.FromPublicKey(o.Nkey)
	if err != nil || kp.Verify(c.GetNonce(), sig) != nil {
		a.logger.Warn("nats: connection refused: bad signature", "role", role, "remote", remote(c))
		return false
	}
	// The inbox token comes as the CONNECT user name, or as its token
	// (some clients, the nats CLI among them, send a user name with no
	// password as a token).
	tok := ""
	switch {
	case ValidInboxToken(o.Username):
		tok = o.Username
	case ValidInboxToken(o.Token):
		tok = o.Token
	}
	c.RegisterUser(&server.User{Username: string(role), Permissions: Permissions(role, tok, a.protected...)})
	return true
}

func remote(c server.ClientAuthentication) string {
	if a := c.RemoteAddress(); a != nil {
		return a.String()
	}
	return "in-process"
}

// IsInbox reports whether subj is a reply inbox a Vigil client could own:
// _INBOX.<token>.<rest> with a valid token, and no wildcard anywhere.
func IsInbox(subj string) bool {
	rest, ok := strings.CutPrefix(subj, InboxRoot+".")
	if !ok || strings.ContainsAny(subj, "*> \t\r\n") {
		return false
	}
	tok, tail, ok := strings.Cut(rest, ".")
	return ok && tail != "" && (ValidInboxToken(tok) || isNUID(tok))
}

// isNUID reports whether tok is a NATS NUID (22 base62 characters): the
// default inbox token of a client that set no prefix (admin tools, other
// NATS clients with admin or service credentials).
func isNUID(tok string) bool {
	if len(tok) != 22 {
		return false
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
