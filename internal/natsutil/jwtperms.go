package natsutil

import (
	"github.com/nats-io/jwt/v2"
)

// JWTPermissions are role r's permissions as a user JWT's (nsc add user
// --allow-pub/--allow-sub), for a NATS Vigil does not run (decentralized
// auth). They are Permissions, the embedded server's table, with any
// connection's inbox (_INBOX.*.>) where the embedded server grants the
// connection's own: a user JWT cannot name a per-connection inbox
// token, so agents that share one account can subscribe to each other's
// inboxes there (docs/fleet.md: give each agent its own account to keep
// them apart). protected are the nodes' durable consumers (see
// Permissions). Admin and service have no restriction in their account
// (nil permissions: a zero jwt.Permissions).
func JWTPermissions(r Role, protected ...string) jwt.Permissions {
	var out jwt.Permissions
	p := Permissions(r, "*", protected...)
	if p == nil {
		return out
	}
	if p.Publish != nil {
		out.Pub.Allow, out.Pub.Deny = p.Publish.Allow, p.Publish.Deny
	}
	if p.Subscribe != nil {
		out.Sub.Allow, out.Sub.Deny = p.Subscribe.Allow, p.Subscribe.Deny
	}
	return out
}
