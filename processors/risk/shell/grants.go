package shell

import (
	"strings"

	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Grants of power and exposure, judged on any program by the values its
// arguments set, not by a table of programs: a role, policy or permission
// argument that names an administrator role (cluster-admin, Owner,
// AdministratorAccess, roles/owner …) gives whoever it names the whole
// account; a visibility or ACL argument set to public, or a binding to
// allUsers, hands what the resource holds to everyone.

// adminRoles are the values of a role argument that grant everything.
var adminRoles = core.LazySet("cluster-admin", "owner", "administratoraccess", "admin", "administrator", "root", "superuser",
	"iamfullaccess", "organizationadmin", "globaladmin", "global-admin", "user access administrator", "useraccessadministrator")

// roleKeyWords, in an option or item name, say its value is a role.
var roleKeyWords = core.LazySet("role", "clusterrole", "permission", "permissions", "policy", "policies", "access", "level",
	"privilege", "privileges")

// grantArgs returns the name=value pairs of args: --k=v, --k v (when v is
// not an option), -k v and k=v items that are not an option's value
// (`-e ROLE=admin` sets a variable, it grants nothing).
func grantArgs(args []string) [][2]string {
	var out [][2]string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "-"):
			k := strings.TrimLeft(a, "-")
			if eq := strings.IndexByte(k, '='); eq > 0 {
				out = append(out, [2]string{k[:eq], k[eq+1:]})
			} else if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				out = append(out, [2]string{k, args[i+1]})
				i++
			}
		case strings.IndexByte(a, '=') > 0:
			eq := strings.IndexByte(a, '=')
			out = append(out, [2]string{a[:eq], a[eq+1:]})
		}
	}
	return out
}

// adminValue reports whether v names an administrator role: the last
// segment of a path, ARN or resource name (roles/owner,
// arn:aws:iam::aws:policy/AdministratorAccess), case-insensitive.
func adminValue(v string) bool {
	l := strings.ToLower(strings.Trim(v, `"' `))
	if i := strings.LastIndexAny(l, "/:"); i >= 0 {
		l = l[i+1:]
	}
	return adminRoles()[l]
}

// grantSkipVerbs, leading a subcommand path, read or remove: no grant.
var grantSkipVerbs = core.LazySet("get", "list", "ls", "describe", "show", "view", "inspect", "status", "check", "can-i",
	"explain", "diff", "plan", "preview", "search", "who-can", "test", "validate")

// publicValues are visibility and ACL values that open a resource to
// everyone.
var publicValues = core.LazySet("public", "public-read", "public-read-write", "publicread", "publicreadwrite", "allusers",
	"allauthenticatedusers", "authenticated-read", "container", "blob")

// httpClients send requests the HTTP rules judge, form fields included.
var httpClients = core.LazySet("curl", "wget", "http", "https", "xh", "xhs", "nscurl", "aria2c")

// grantKeys are the words one of whose presence in an argument makes it
// worth reading as a grant: a cheap test before any parsing, as grants
// runs on every command.
var grantKeys = []string{"role", "perm", "polic", "access", "level", "privilege", "visibility", "acl", "allusers",
	"allauthenticatedusers", "member", "grantee", "principal"}

// grantCandidate reports whether some argument of args may set a role,
// a visibility or an ACL.
func grantCandidate(args []string) bool {
	for _, a := range args {
		if len(a) < 3 {
			continue
		}
		l := strings.ToLower(a)
		for _, k := range grantKeys {
			if strings.Contains(l, k) {
				return true
			}
		}
	}
	return false
}

// grants applies the grant and exposure rules to c.
func (w *walker) grants(c *command) {
	if c.name == "" || c.dynName || c.helpOnly || mentionCmds()[c.name] || passThrough()[c.name] || shells[c.name] || httpClients()[c.name] {
		return
	}
	if !grantCandidate(c.args) {
		return
	}
	ops := operands(c.args)
	creating := false
	for i, o := range ops {
		if i > 3 {
			break
		}
		lo := strings.ToLower(o)
		ws := verbWords(lo)
		if grantSkipVerbs()[lo] || len(ws) > 0 && grantSkipVerbs()[ws[0]] {
			return
		}
		for _, wd := range ws {
			if destroyVerbs()[wd] || removeVerbs()[wd] || wd == "revoke" {
				return // taking a grant away: the removal rules judge it
			}
			if wd == "create" || wd == "new" || wd == "init" || wd == "clone" || wd == "fork" {
				creating = true
			}
		}
	}
	for _, kv := range grantArgs(c.args) {
		k, v := strings.ToLower(kv[0]), kv[1]
		lv := strings.ToLower(strings.Trim(v, `"' `))
		// the key names a role (--role, --clusterrole, --policy-arn,
		// permission=), not a role's name or id (--role-name admin)
		roleKey := false
		kw := verbWords(k)
		for _, wd := range kw {
			if roleKeyWords()[wd] {
				roleKey = true
			}
		}
		if n := len(kw); n > 0 && !roleKeyWords()[kw[n-1]] && kw[n-1] != "arn" {
			roleKey = false
		}
		switch {
		case roleKey && adminValue(v):
			w.hit(c, ruleAdminGrant, high, c.name+" grants the administrator role "+core.TrimArg(v)+" ("+k+"): whoever it names gets the whole account or cluster")
			return
		case (k == "member" || k == "members" || k == "grantee" || k == "principal") && (strings.Contains(lv, "allusers") || strings.Contains(lv, "allauthenticatedusers")):
			w.hit(c, ruleMakePublic, high, c.name+" grants "+core.TrimArg(v)+": everyone on the internet can reach the resource")
			return
		case !creating && (k == "visibility" || k == "acl" || k == "canned-acl" || k == "predefined-acl" || k == "public-access" || k == "x-amz-acl" || k == "status" || k == "privacy") && publicValues()[lv],
			!creating && k == "private" && (lv == "false" || lv == "no" || lv == "0"):
			w.hit(c, ruleMakePublic, high, c.name+" sets "+k+" to "+lv+": what the resource holds becomes readable by everyone")
			return
		}
	}
	for _, a := range c.args {
		if la := strings.ToLower(a); strings.HasPrefix(la, "allusers:") || strings.HasPrefix(la, "allauthenticatedusers:") {
			w.hit(c, ruleMakePublic, high, c.name+" grants "+core.TrimArg(a)+": everyone on the internet can reach the resource")
			return
		}
	}
}
