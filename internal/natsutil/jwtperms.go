package natsutil

import (
	"fmt"
	"strings"

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

// JWTPermissionsDoc is the markdown docs/fleet.md shows of every role's
// user JWT permissions and the nsc command that issues such a user, for
// an account named account; protected are the nodes' durable consumers.
// A test keeps the document equal to it.
func JWTPermissionsDoc(account string, protected ...string) string {
	var b strings.Builder
	b.WriteString("| role | publish allow | publish deny | subscribe allow |\n| --- | --- | --- | --- |\n")
	cmds := []string{}
	for _, r := range Roles {
		p := JWTPermissions(r, protected...)
		cell := func(l []string) string {
			if len(l) == 0 {
				return "(all)"
			}
			return "`" + strings.Join(l, "`, `") + "`"
		}
		deny := "—"
		if len(p.Pub.Deny) > 0 {
			deny = cell(p.Pub.Deny)
		}
		if len(p.Pub.Allow) == 0 && len(p.Sub.Allow) == 0 {
			fmt.Fprintf(&b, "| %s | (all in the account) | — | (all in the account) |\n", r)
		} else {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r, cell(p.Pub.Allow), deny, cell(p.Sub.Allow))
		}
		cmd := fmt.Sprintf("nsc add user --account %s --name vigil-%s", account, r)
		if len(p.Pub.Allow) > 0 {
			cmd += " \\\n  --allow-pub '" + strings.Join(p.Pub.Allow, ",") + "'"
		}
		if len(p.Pub.Deny) > 0 {
			cmd += " \\\n  --deny-pub '" + strings.Join(p.Pub.Deny, ",") + "'"
		}
		if len(p.Sub.Allow) > 0 {
			cmd += " \\\n  --allow-sub '" + strings.Join(p.Sub.Allow, ",") + "'"
		}
		cmds = append(cmds, cmd, fmt.Sprintf("nsc generate creds --account %s --name vigil-%s > vigil-%s.creds", account, r, r))
	}
	b.WriteString("\n```sh\n")
	b.WriteString(strings.Join(cmds, "\n"))
	b.WriteString("\n```\n")
	return b.String()
}
