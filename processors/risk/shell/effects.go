package shell

import (
	"strings"
	"unicode"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
)

// The open-world rule judges programs by the effect their words name, not
// by a table of programs: a command-line tool whose subcommand or option is
// a destructive verb (delete, destroy, terminate, purge, drop, prune …)
// irreversibly removes something the tool manages, and a tool Vigil has no
// table for manages resources elsewhere (a secret store, a backup
// repository, a database, a cluster, a cloud account) more often than
// files in the workspace. Programs whose own rules judge deletion (rm,
// git, docker, package managers, SQL clients …) are left to those rules.

// destroyVerbs remove what they name: HIGH against a named resource.
var destroyVerbs = core.LazySet("delete", "destroy", "terminate", "purge", "drop", "wipe", "erase", "nuke", "obliterate",
	"expunge", "deprovision", "decommission", "teardown", "truncate", "flushall", "flushdb", "shred", "prune",
	"deletecollection", "deleteall", "destroyall", "dropall", "purgeall", "wipeall", "deletion", "destruction",
	"unpublish", "yank")

// destroyPrograms are named for what they destroy.
var destroyPrograms = core.LazySet("dropdb", "dropuser", "dropcluster", "pg_dropcluster", "lvremove", "vgremove", "pvremove")

// previewVerbs are subcommands that show, plan or check what would happen
// and change nothing: a destructive option after them (`terraform plan
// -destroy`) describes a plan, it does not carry it out.
var previewVerbs = core.LazySet("plan", "preview", "diff", "show", "list", "ls", "get", "describe", "status", "view", "inspect",
	"explain", "validate", "lint", "template", "check", "search", "info", "logs", "version", "whoami", "history")

// localVMTools manage clusters and virtual machines on this machine (a
// developer's kind or minikube cluster, a Vagrant box): what their destroy
// verbs remove is local and rebuilt by the next create, MEDIUM.
var localVMTools = core.LazySet("kind", "minikube", "k3d", "colima", "limactl", "multipass", "vagrant", "microk8s", "orb", "orbctl")

// kubectlValueOpts are kubectl's (and oc's) global options that take a
// value, which may come before the verb.
var kubectlValueOpts = core.LazySet("-n", "--namespace", "--context", "--cluster", "--kubeconfig", "--user", "-s", "--server",
	"--token", "--as", "--as-group", "--certificate-authority", "--client-certificate", "--client-key", "--request-timeout",
	"--tls-server-name", "-v", "--v", "--cache-dir", "--profile", "--profile-output", "-l", "--selector", "-o", "--output")

// operandsSkipping returns the operands of args, skipping the value of
// every option in valued given as "-o V" (not "-o=V", which is one word).
func operandsSkipping(args []string, valued map[string]bool) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		if len(a) > 1 && a[0] == '-' {
			if valued[a] {
				i++
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

// awsDestroyOp reports whether an AWS CLI operation name holds a destroy
// verb among its words (batch-delete-image, schedule-key-deletion).
func awsDestroyOp(op string) bool {
	ws := verbWords(op)
	if len(ws) > 0 && (ws[0] == "describe" || ws[0] == "list" || ws[0] == "get" || ws[0] == "cancel" || ws[0] == "restore") {
		return false
	}
	for _, w := range ws {
		if destroyVerbs()[w] {
			return true
		}
	}
	return closesAccount(ws)
}

// bulkVerbs act on everything they can reach: HIGH with no resource named.
var bulkVerbs = core.LazySet("prune", "purge", "wipe", "nuke", "flushall", "flushdb", "obliterate", "expunge", "deleteall",
	"destroyall", "dropall", "purgeall", "wipeall", "destroy", "teardown", "decommission", "deprovision", "terminate")

// dataNouns in a subcommand path name the store a verb acts on: "db reset",
// "pg:reset", "db:drop" remove a database with nothing more named.
var dataNouns = core.LazySet("db", "database", "databases", "pg", "postgres", "mysql", "redis", "data", "bucket", "buckets",
	"volume", "volumes", "cluster", "clusters", "table", "tables", "index", "indices", "collection", "collections",
	"keyspace", "namespace", "stack", "stacks", "env", "environment", "project", "projects", "repo", "repository",
	"vault", "secret", "secrets", "backup", "backups", "snapshot", "snapshots", "schema", "storage", "disk", "disks",
	"instance", "instances", "account", "org", "organization", "zone", "domain", "dns", "kv", "queue", "topic", "state")

// authorityNouns in a subcommand path name what grants access: a token,
// a lease, a key, a certificate, a credential, an owner, an access grant.
// Revoking or removing one cannot be undone by re-creating it: every
// person and system that held it is locked out, and a registry or a
// service that loses its last owner has no one left to restore it.
var authorityNouns = core.LazySet("token", "tokens", "lease", "leases", "key", "keys", "cert", "certs", "certificate",
	"certificates", "credential", "credentials", "creds", "owner", "owners", "access", "acl", "acls", "collaborator",
	"collaborators", "apikey", "apikeys", "grant", "grants", "permission", "permissions", "sa", "signing", "auth",
	"policy", "policies", "role", "roles", "user", "users", "member", "members", "password", "passwords")

// backupTools manage backup archives: what their removal verbs remove is
// the copy kept for when everything else is lost.
var backupTools = core.LazySet("tarsnap", "borg", "borgmatic", "restic", "rustic", "kopia", "duplicity", "duplicacy",
	"rdiff-backup", "bup", "attic", "velero", "bconsole", "zbackup", "rsnapshot", "burp", "bacula", "pgbackrest", "barman",
	"wal-g", "wal-e", "pbm", "pgbarman", "xtrabackup", "mariabackup", "bareos", "bcconsole", "urbackup", "restic-server",
	"timeshift", "snapper", "tmutil", "wbadmin", "vssadmin", "proxmox-backup-client", "vzdump", "bacman")

// storageTools manage shared block, object and file storage (a Ceph
// cluster, a Gluster volume, LVM volumes other hosts mount): what their
// removal verbs remove is data, never a local cache.
var storageTools = core.LazySet("ceph", "rbd", "rados", "radosgw-admin", "gluster", "lvm", "zfs", "zpool", "btrfs",
	"drbdadm", "linstor", "longhornctl", "mmdelfs", "lctl", "beegfs-ctl", "moosefs", "seaweedfs", "weed", "garage")

// confirmFlags name, for tools whose destructive verbs only report what
// they would remove until told to go ahead, the option that tells them
// (`duplicity remove-older-than 30D URL` lists; `--force` deletes).
var confirmFlags = map[string][]string{"duplicity": {"--force"}, "wal-g": {"--confirm"}, "wal-e": {"--confirm"},
	"kops": {"--yes", "-y"}, "rdiff-backup": {"--force"}}

// cdnTools front sites with caches: what their purge verb removes is a
// cached copy, fetched again from the origin on the next request.
var cdnTools = core.LazySet("fastly", "akamai", "bunny", "bunnycdn", "keycdn", "cdn77", "stackpath", "edgio", "imperva")

// localProcTools manage processes on this host (pm2, supervisord): what
// their delete verbs remove is an entry in their process list, started
// again from the same program.
var localProcTools = core.LazySet("pm2", "forever", "supervisorctl", "circusctl", "foreman", "overmind", "honcho", "nodemon")

// nonProdEnvs name an application environment whose data is a
// developer's own (`RAILS_ENV=test bin/rails db:drop`).
var nonProdEnvs = core.LazySet("test", "testing", "development", "dev", "local", "ci")

// secretTools keep credentials and secrets: what their removal verbs
// remove is a secret that often exists nowhere else, and whoever used it
// is locked out.
var secretTools = core.LazySet("vault", "op", "bw", "lpass", "gopass", "pass", "doppler", "infisical", "chamber", "akeyless",
	"conjur", "keeper", "summon", "teller", "berglas", "passbolt", "psonoci", "bao")

// backupDeleteShort are the short options with which a backup tool deletes
// archives (`tarsnap -d -f NAME`).
var backupDeleteShort = map[string]string{"tarsnap": "d"}

// clusterTools manage a shared cluster through its API (an installed
// controller, a service mesh, GitOps, a cluster's own lifecycle): their
// uninstall, reset and remove verbs act on what everyone on the cluster
// runs, not on this machine.
var clusterTools = core.LazySet("flux", "istioctl", "linkerd", "cilium", "argocd", "kubeadm", "k0s", "k3s", "talosctl",
	"tkn", "kn", "vcluster", "cmctl", "karmadactl", "clusterctl", "rke", "rke2", "eksctl", "kops", "crossplane",
	"kubectl-cnpg", "kyverno", "consul", "nomad", "linkerd2", "kuma", "kumactl", "osm", "dapr", "knative", "kubevela", "vela")

// registryAdmin reports whether c is a package manager's command on the
// registry's owners, access grants or tokens (`npm owner rm`, `npm access
// revoke`, `gem owner --remove`, `cargo owner --remove`, `npm token
// revoke`): those act on the package's account, not on this machine.
func registryAdmin(c *command) bool {
	if !registryCLIs()[c.name] {
		return false
	}
	ops := operands(c.args)
	return len(ops) > 0 && registryAdminVerbs()[ops[0]]
}

var registryCLIs = core.LazySet("npm", "pnpm", "yarn", "bun", "gem", "cargo", "twine", "poetry", "hex", "mix", "nuget", "dotnet")

var registryAdminVerbs = core.LazySet("owner", "owners", "access", "token", "team", "collaborator", "collaborators")

// authorityPath reports whether one of the words of the leading operands
// names an access grant (token, key, owner …).
func authorityPath(ops []string) bool {
	for _, p := range ops {
		for _, wd := range verbWords(p) {
			if authorityNouns()[wd] {
				return true
			}
		}
	}
	return false
}

// openWorldKnown are programs with a table of their own that does not
// judge their destructive subcommands; the open-world rule judges those.
var openWorldKnown = core.LazySet("gh", "helm", "heroku", "flyctl", "doctl", "restic", "rclone", "gsutil", "s3cmd", "terraform",
	"tofu", "gcloud", "az")

// removeVerbs are milder spellings (rm, remove, del …) that also name local
// uninstalls: HIGH when forced or recursive, or when the resource they name
// is plainly remote (a URL, bucket:path, an ARN); MEDIUM otherwise.
var removeVerbs = core.LazySet("rm", "remove", "del", "rb", "rmdir", "reset", "revoke", "deregister", "unregister", "detach",
	"uninstall", "clear", "rmi", "disable", "forget", "flush", "unset", "unlink", "fresh", "deactivate", "expire", "gc")

// openWorldSkip are programs whose own rules judge what their verbs delete,
// or whose verbs act on the local machine only.
var openWorldSkip = core.LazySet("rm", "unlink", "srm", "rmdir", "shred", "wipe", "git", "docker", "podman", "nerdctl",
	"kubectl", "oc", "aws", "psql", "mysql", "sqlite3", "clickhouse-client",
	"cockroach", "sqlcmd", "duckdb", "mongo", "mongosh", "redis-cli", "find", "xargs", "parallel", "sudo", "env",
	"pip", "pip3", "npm", "yarn", "pnpm", "bun", "cargo", "go", "gem", "bundle", "brew", "apt", "apt-get", "aptitude",
	"yum", "dnf", "zypper", "pacman", "apk", "conda", "mamba", "pipx", "uv", "poetry", "snap", "flatpak", "port",
	"choco", "winget", "scoop", "rustup", "pyenv", "nvm", "asdf", "rbenv", "sdk", "echo", "printf", "man", "help",
	"tldr", "history", "unset", "alias", "unalias", "hash", "crontab", "at", "atrm", "gpg", "gpg2", "security",
	"systemctl", "launchctl", "service", "journalctl", "tmux", "screen", "ssh-keygen", "ssh-add", "trash", "trash-rm",
	"gio", "kill", "pkill", "killall", "truncate", "dd", "make", "cmake", "ninja", "bazel", "gradle", "mvn", "tar", "zip",
	"unzip", "7z", "rsync", "sed", "awk", "perl", "python", "python3", "node", "ruby", "php", "lua", "tee", "touch",
	"mkdir", "cp", "mv", "ln", "chmod", "chown", "test", "[", "setfacl", "ip", "iptables", "ip6tables", "nft", "ufw",
	"useradd", "userdel", "groupdel", "deluser", "usermod", "passwd", "xattr", "defaults", "tmutil", "sysctl",
	"modprobe", "rmmod", "mkfs", "wipefs", "fdisk", "parted", "sfdisk", "gdisk", "sgdisk", "blkdiscard", "vim", "vi",
	"nvim", "emacs", "nano", "code", "ed", "docker-compose", "ssh", "eval", "exec", "command", "builtin", "source",
	"composer", "pipenv", "pdm", "rye", "hatch", "npx", "bunx", "pnpx", "uvx", "dotnet", "nuget", "vcpkg",
	"conan", "opam", "cabal", "stack", "mix", "rebar3", "lein", "sbt", "flutter", "dart", "deno", "sdkmanager")

// forceFlag reports whether option a says "do not ask, do not stop"
// (--force, -y, --all, -r …): it turns a removal into one that cannot be
// taken back.
func forceFlag(a string) bool {
	if len(a) < 2 || a[0] != '-' {
		return false
	}
	if a[1] != '-' {
		if isLetters(a[1:]) && len(a) <= 4 {
			// a cluster of short flags: -f, -rf, -fy
			return strings.ContainsAny(a[1:], "fyrR")
		}
		a = "-" + a // Go's flag package: -force, -recurse, -yes
	}
	if eq := strings.IndexByte(a, '='); eq > 0 {
		if v := strings.ToLower(a[eq+1:]); v == "false" || v == "0" || v == "no" {
			return false
		}
		a = a[:eq]
	}
	switch strings.ToLower(a) {
	case "--force", "--yes", "--recursive", "--recurse", "--all", "--confirm", "--no-confirm", "--noconfirm",
		"--no-prompt", "--non-interactive", "--auto-approve", "--assume-yes", "--skip-confirmation",
		"--no-interactive", "--permanent", "--permanently", "--hard", "--cascade", "--everything", "--purge", "--prefix",
		"--quiet", "--no-input", "--noinput", "--assumeyes", "--force-yes", "--skip-prompt", "--skip-prompts", "--no-prompts",
		"--no-confirmation", "--unattended", "--approve":
		return true
	}
	l := strings.ToLower(a)
	return strings.HasPrefix(l, "--all-") || strings.HasPrefix(l, "--force-") || strings.HasPrefix(l, "--yes-") ||
		strings.HasPrefix(l, "--i-") || strings.HasSuffix(l, "-all")
}

// verbWords splits a subcommand or option into its words: "delete-stack",
// "apps:destroy", "kv_delete", "deleteBucket" and "--force-delete" each
// hold a verb.
func verbWords(s string) []string {
	s = strings.TrimLeft(s, "-")
	var out []string
	cur := []rune{}
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prev := rune(0)
	for _, r := range s {
		switch {
		case r == '-' || r == '_' || r == ':' || r == '.':
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return out
}

// verbOf returns the destructive verb word s holds, and its kind: 2 a
// destroy verb, 1 a remove verb, 0 none. A negated option (--no-prune,
// --skip-delete, --keep-…) holds none.
func verbOf(s string) (string, int) {
	ws := verbWords(s)
	if len(ws) == 0 || len(ws) > 7 {
		return "", 0
	}
	if len(ws) > 1 {
		switch ws[0] {
		case "no", "skip", "keep", "without", "dry", "disable", "prevent", "protect", "show", "list", "get", "describe", "can", "allow", "undo", "un", "restore", "recover", "cancel":
			return "", 0
		}
	}
	for _, w := range ws {
		if destroyVerbs()[w] {
			return w, 2
		}
	}
	if closesAccount(ws) {
		return "close", 2
	}
	for _, w := range ws {
		if removeVerbs()[w] {
			return w, 1
		}
	}
	return "", 0
}

// closesAccount reports whether words name the closing of an account or
// an organization (close-account): the account and all it holds go.
func closesAccount(ws []string) bool {
	cl, acct := false, false
	for _, w := range ws {
		switch w {
		case "close":
			cl = true
		case "account", "accounts", "org", "organization", "subscription":
			acct = true
		}
	}
	return cl && acct
}

// remoteResource reports whether operand x names something plainly not a
// local file: a URL, a scheme or remote prefix (s3://b, remote:bucket,
// host:path), an ARN or a resource path such as projects/p/…
func remoteResource(x string) bool {
	if strings.Contains(x, "://") || strings.HasPrefix(x, "arn:") {
		return true
	}
	if i := strings.IndexByte(x, ':'); i > 0 && i < len(x)-1 && !strings.ContainsAny(x[:i], "/\\ ") && x[i+1] != '\\' {
		return true
	}
	return false
}

// runners run the program named by their first operand: the open-world
// rule judges that program.
var runners = map[string]string{"npx": "", "bunx": "", "pnpx": "", "uvx": "", "pipx": "run", "bundle": "exec",
	"poetry": "run", "uv": "run", "pdm": "run", "pipenv": "run", "rye": "run", "hatch": "run", "yarn": "dlx",
	"pnpm": "dlx", "npm": "exec", "dotnet": "tool", "go": "run"}

// scriptCLIs are interpreters whose script, when named, is a command-line
// tool with subcommands of its own (manage.py, artisan, bin/rails).
var scriptCLIs = core.LazySet("python", "python3", "php", "node", "ruby", "perl", "bun", "deno")

// openWorld applies the open-world rule to c.
func (w *walker) openWorld(c *command) {
	if c.name == "" || c.dynName || c.helpOnly {
		return
	}
	if registryAdmin(c) {
		w.openWorldCmd(c, c.name)
		return
	}
	if inner, prog, ok := projectScript(c); ok {
		w.openWorldCmd(inner, prog)
		return
	}
	if sub, ok := runners[c.name]; ok {
		ops := operands(c.args)
		k := 0
		if sub != "" {
			if len(ops) == 0 || ops[0] != sub {
				return
			}
			k = 1
		}
		if len(ops) <= k {
			return
		}
		start := slicesIndex(c.args, ops[k])
		inner := *c
		inner.name, inner.args = CanonicalName(ops[k]), c.args[start+1:]
		inner.argDyn = nil
		w.openWorldCmd(&inner, c.name+" "+ops[k])
		return
	}
	if c.name == "java" {
		// java -jar tool.jar ARGS: the jar is the command-line tool
		if k := slicesIndex(c.args, "-jar"); k >= 0 && k+1 < len(c.args) {
			jar := c.args[k+1]
			inner := *c
			inner.name, inner.args = CanonicalName(jar), c.args[k+2:]
			inner.argDyn = nil
			w.openWorldCmd(&inner, "java -jar "+jar)
		}
		return
	}
	if scriptCLIs()[c.name] {
		ops := operands(c.args)
		if len(ops) == 0 || hasArg(c.args, "-c", "-e", "-r", "-m", "--eval") {
			return
		}
		if s := ops[0]; strings.HasSuffix(s, ".py") || strings.HasSuffix(s, ".php") || strings.HasSuffix(s, ".js") ||
			strings.HasSuffix(s, ".rb") || strings.HasSuffix(s, ".ts") || strings.HasSuffix(s, ".pl") || s == "artisan" ||
			strings.HasSuffix(s, "/rails") || strings.HasSuffix(s, "/console") || strings.HasSuffix(s, "/rake") {
			start := slicesIndex(c.args, s)
			inner := *c
			inner.name, inner.args = CanonicalName(s), c.args[start+1:]
			inner.argDyn = nil
			w.openWorldCmd(&inner, c.name+" "+s)
		}
		return
	}
	if _, wrapper := wrapperOptArgs[c.name]; wrapper || openWorldSkip()[c.name] || shells[c.name] || knownCommand(c.name) && !openWorldKnown()[c.name] || w.knownSafe(c) {
		return
	}
	w.openWorldCmd(c, c.name)
	w.consoleInput(c)
}

// consoleInput judges the lines a program reads on stdin as its own
// command lines: an administration console fed its commands by a pipe or
// a here-string (`echo "delete volume=V yes" | bconsole`, `bconsole <<<
// "purge …"`) does what those lines say.
func (w *walker) consoleInput(c *command) {
	if c.stdin == nil || c.stdin.text == "" || !c.stdin.has(flowStatic) || c.stdin.has(flowFile|flowNetwork|flowCmdOut) {
		return
	}
	for i, line := range strings.Split(c.stdin.text, "\n") {
		if i >= 16 {
			break
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if _, k := verbOf(f[0]); k == 0 {
			continue // not a command the console is told to carry out
		}
		inner := *c
		inner.args, inner.argDyn, inner.argData, inner.stdin = f, nil, nil, nil
		w.openWorldCmd(&inner, c.name+" <stdin>")
	}
}

// scriptBuiltins are the package managers' own subcommands: anything else
// after yarn, pnpm or bun is a script of the project or a binary it
// installed.
var scriptBuiltins = core.LazySet("add", "remove", "rm", "uninstall", "install", "i", "ci", "upgrade", "up", "update", "init",
	"info", "why", "list", "ls", "link", "unlink", "outdated", "publish", "pack", "config", "cache", "global", "login",
	"logout", "audit", "bin", "create", "dlx", "exec", "x", "explain", "import", "licenses", "node", "npm", "owner", "patch",
	"plugin", "rebuild", "set", "stage", "team", "unplug", "version", "workspace", "workspaces", "prune", "store", "setup",
	"env", "root", "deploy", "fetch", "server", "test", "start", "build", "dev", "help", "whoami", "tag", "dedupe", "import",
	"run", "run-script", "pm", "repl", "upgrade-interactive", "constraints", "search", "view", "completion")

// scriptRunners run a project's scripts by name.
var scriptRunners = core.LazySet("make", "gmake", "npm", "yarn", "pnpm", "bun")

// projectScript returns the command a project script runner stands for,
// to be judged by its words: a make target (`make -C infra destroy`), an
// npm/yarn/pnpm/bun script (`npm run db:reset -- --force`, `yarn db:drop`)
// or a binary the project installed (`pnpm prisma migrate reset --force`).
// A script's name is the project's own subcommand.
func projectScript(c *command) (*command, string, bool) {
	a := c.args
	k := -1
	switch c.name {
	case "make", "gmake":
		for i := 0; i < len(a); i++ {
			x := a[i]
			if x == "-C" || x == "-f" || x == "--file" || x == "--directory" || x == "-I" || x == "-o" || x == "-W" || x == "-j" && i+1 < len(a) && isNumeric(a[i+1]) {
				i++
				continue
			}
			if strings.HasPrefix(x, "-") || strings.Contains(x, "=") {
				continue
			}
			k = i
			break
		}
	case "npm":
		ops := operandsSkipping(a, pkgValueOpts())
		if len(ops) >= 2 && (ops[0] == "run" || ops[0] == "run-script") {
			k = slicesIndex(a, ops[1])
		}
	case "yarn", "pnpm", "bun":
		ops := operandsSkipping(a, pkgValueOpts())
		switch {
		case len(ops) >= 2 && ops[0] == "run":
			k = slicesIndex(a, ops[1])
		case len(ops) >= 1 && !scriptBuiltins()[ops[0]] && c.name != "bun":
			k = slicesIndex(a, ops[0])
		}
	}
	if k < 0 {
		return nil, "", false
	}
	var rest []string
	for _, x := range a[k+1:] {
		if x != "--" {
			rest = append(rest, x)
		}
	}
	inner := *c
	inner.args = append([]string{a[k]}, rest...)
	inner.argDyn, inner.argData = nil, nil
	return &inner, c.name + " " + a[k], true
}

func slicesIndex(a []string, s string) int {
	for i, x := range a {
		if x == s {
			return i
		}
	}
	return -1
}

// openWorldCmd judges c, shown as prog, by the verbs its words name.
func (w *walker) openWorldCmd(c *command, prog string) {
	if openWorldSkip()[c.name] && !scriptCLIs()[strings.Fields(prog)[0]] && !scriptRunners()[strings.Fields(prog)[0]] && !registryAdmin(c) {
		return
	}
	a := c.args
	force, scoped, regenerable := false, false, false
	// what a backup tool or a cluster tool removes is never only local
	keeps := backupTools()[c.name] || clusterTools()[c.name] || secretTools()[c.name] || storageTools()[c.name]
	if need, ok := confirmFlags[c.name]; ok && !hasArgPrefixAny(a, need...) {
		return // the tool only lists what it would remove
	}
	for i, x := range a {
		lx := strings.ToLower(x)
		switch {
		case lx == "--dry-run" || strings.HasPrefix(lx, "--dry-run=") && lx != "--dry-run=none" && lx != "--dry-run=false" || lx == "--dryrun" || lx == "-dry-run" ||
			lx == "--what-if" || lx == "--whatif" || lx == "help" || lx == "--help" || lx == "-h" && i == len(a)-1 ||
			lx == "--preview-only" || lx == "--plan-only" || lx == "--simulate" || lx == "--noop" || lx == "--no-op" || lx == "--list-only":
			// -h before other words is often a host (dropdb -h db.prod)
			return
		case forceFlag(x):
			force = true
		case remoteScopeOpt(x):
			scoped = true
		}
	}
	if f := backupDeleteShort[c.name]; f != "" {
		for _, x := range a {
			if len(x) > 1 && x[0] == '-' && x[1] != '-' && isLetters(x[1:]) && strings.Contains(x[1:], f) {
				w.hit(c, ruleResourceDestroy, high, prog+" "+x+" deletes backup archives")
				return
			}
		}
	}
	w.sqlArgs(c, prog)
	if w.deviceWipe(c, prog) {
		return
	}
	if silencesEverything(c.args) {
		w.hit(c, ruleDefenseEvasion, high, prog+" silences every alert (a matcher that matches anything): nobody is told what breaks next")
		return
	}
	if strings.Contains(c.name, "restore") && hasArg(a, "--clean", "-c", "--drop", "--clean-first", "--drop-database") {
		// pg_restore --clean, mongorestore --drop: the target's objects are
		// dropped before the dump is loaded; whatever the dump lacks is gone
		w.hit(c, ruleResourceDestroy, high, prog+" drops what the target database holds before restoring into it")
		return
	}
	ops := operands(a)
	if len(ops) > 0 && previewVerbs()[strings.ToLower(ops[0])] {
		return
	}
	prod := false
	for _, o := range ops {
		if prodName(o) {
			prod = true
		}
	}
	best, detail := events.RiskLow, ""
	raise := func(l events.Risk, d string) {
		if l == high && best != high || best == events.RiskLow {
			best, detail = l, d
		}
	}
	// A program named just "delete" or "drop" is SQL sent to a shell, which
	// runs nothing. A program named for what it destroys (dropdb, dropuser)
	// does it to what it names; a project script named delete_… is judged
	// by its arguments like any other.
	switch {
	case destroyVerbs()[c.name] && !destroyPrograms()[c.name] || removeVerbs()[c.name]:
		return
	case destroyPrograms()[c.name] && len(ops) > 0:
		raise(high, prog+" irreversibly removes "+nameOf(ops, c.name))
	}
	if v, k := verbOf(strings.TrimSuffix(c.name, ".sh")); k == 2 && !destroyVerbs()[c.name] {
		// a tool named for what it destroys (kafka-delete-records), aimed
		// at a server or resource elsewhere
		for _, o := range ops {
			if remoteResource(o) || scoped {
				raise(high, prog+" ("+v+") irreversibly removes data on "+nameOf([]string{o}, v))
				break
			}
		}
	}
	// a verb among the leading words (the subcommand path), then what it names
	verbNamed := ops // what a destroy program or option names; a subcommand verb's, below
	scratchPath := false
	for i, x := range ops {
		if i >= 4 {
			break
		}
		if strings.ContainsAny(x, " =\"'$/\\") || strings.Contains(x, ".") && !dottedSubcommand(x) {
			// an option's value (a host, a user:password, a URL) or a
			// path: not the subcommand, which may come after it
			continue
		}
		v, k := verbOf(x)
		mig := false
		if k == 0 {
			if v = migrationUndo(ops[:i], x); v == "" {
				continue
			}
			k, mig = 1, true
		}
		named := ops[i+1:]
		verbNamed = named
		for _, wd := range verbWords(x) {
			if scratchWords()[wd] {
				scratchPath = true // destroy-local, db:reset:test
			}
		}
		path := prog + " " + strings.Join(ops[:i+1], " ")
		if k == 1 && (v == "revoke" || authorityPath(ops[:i+1]) || registryAdmin(c)) {
			if len(named) == 0 && len(c.args) == i+1 && !registryAdmin(c) && !authorityPath(ops[:i+1]) {
				// a bare revoke, nothing named, no access noun, no remote
				// scope: the tool's own local grant (`direnv revoke`)
				raise(med, path+" revokes what it manages")
				break
			}
			// revocation, or removal of an access grant, cannot be taken back
			w.hit(c, ruleAccessRevoke, high, path+" revokes "+nameOf(named, v)+" for everyone who holds it")
			return
		}
		strong := force || prod || keeps || scoped
		for _, n := range named {
			if remoteResource(n) || n == "" || n == "/" || n == "*" || n == "**" {
				// a remote resource, or the root of the store: everything in it
				strong = true
			}
		}
		if len(named) > 1 && dataNouns()[strings.ToLower(named[0])] && !mig {
			// VERB NOUN NAME: `remove index web`, `delete bucket logs`
			strong = true
		}
		for _, p := range ops[:i+1] {
			for _, wd := range verbWords(p) {
				if dataNouns()[wd] && !mig || wd == "all" {
					// a store named in the path; for a migration undo, only
					// all of them (`db:migrate:undo:all`) or force, scope, prod
					strong = true
				}
				if cacheNouns()[wd] {
					regenerable = true
				}
			}
		}
		switch {
		case k == 2 && len(named) > 0 && !strong && !bulkVerbs()[v] && allLocalFiles(named):
			// a file in the workspace, by its name: a workspace deletion
			raise(med, path+" removes "+nameOf(named, v))
		case k == 2 && (len(named) > 0 || strong || bulkVerbs()[v]):
			raise(high, path+" irreversibly removes "+nameOf(named, v))
		case k == 1 && strong:
			raise(high, path+" removes "+nameOf(named, v)+" without asking")
		default:
			raise(med, path+" removes "+nameOf(named, v))
		}
		break
	}
	// a destructive option: --delete, -purge, --prune, --force-delete, --delete-all
	for _, x := range a {
		if len(x) < 3 || x[0] != '-' || x == "--" {
			continue
		}
		opt := x
		if eq := strings.IndexByte(opt, '='); eq > 0 {
			if v := strings.ToLower(opt[eq+1:]); v == "false" || v == "0" || v == "no" {
				continue
			}
			opt = opt[:eq]
		}
		if len(opt) < 2 || opt[1] != '-' && len(opt) <= 4 {
			continue // a cluster of short flags, or "-=…"
		}
		v, ok := destroyOption(opt)
		if !ok {
			// --remove / --revoke on an owner, access or token subcommand
			if ws := verbWords(opt); len(ws) == 1 && (removeVerbs()[ws[0]] || ws[0] == "revoke") && (authorityPath(ops) || registryAdmin(c)) {
				w.hit(c, ruleAccessRevoke, high, prog+" "+x+" revokes "+nameOf(ops, ws[0])+" for everyone who holds it")
				return
			}
			continue
		}
		if len(ops) > 0 || force || keeps || bulkVerbs()[v] {
			raise(high, prog+" "+x+" irreversibly removes "+nameOf(ops, v))
		} else {
			raise(med, prog+" "+x+" removes data")
		}
		break
	}
	if best == high && localVMTools()[c.name] {
		best, detail = med, detail+" (a cluster or machine on this host)"
	}
	if best == high && cdnTools()[c.name] && !hasArg(a, "--all", "--everything", "--purge-all", "--purge-everything") && onlyPurges(a) {
		best, detail = med, detail+" (a cached copy, fetched again from the origin)"
	}
	if best == high && !prod && !keeps && nonProdEnv(c) {
		best, detail = med, detail+" (a "+nonProdEnvName(c)+" environment)"
	}
	if best == high && localProcTools()[c.name] {
		best, detail = med, detail+" (processes this host's process manager runs)"
	}
	if best == high && !prod && !keeps && !scoped && (scratchNamed(verbNamed) || scratchPath && len(verbNamed) == 0) {
		// what it names is called test, dev, tmp, scratch or sandbox: a
		// developer's throwaway copy, as prod in a name marks the real one
		best, detail = med, detail+" (named as a test or scratch copy)"
	}
	if best == high && regenerable && !scoped && !prod && !force {
		// a cache on this machine is rebuilt on demand; a shared one
		// (a CI's, a CDN's) is purged for everyone at once
		best, detail = med, detail+" (a cache, rebuilt on demand)"
	}
	switch best {
	case high:
		w.hit(c, ruleResourceDestroy, high, detail)
	case med:
		w.hit(c, ruleResourceRemove, med, detail)
	}
}

// sqlArgs judges arguments of a program with no table of its own that are
// SQL statements (`cqlsh -e 'DROP KEYSPACE …'`, `snowsql -q …`): by what
// the statements do, as for the SQL clients Vigil knows.
func (w *walker) sqlArgs(c *command, prog string) {
	for _, x := range c.args {
		t := strings.ToUpper(strings.TrimSpace(x))
		if !strings.ContainsAny(t, " \t\n") {
			continue
		}
		first := strings.Fields(t)[0]
		if first == "MATCH" && cypherDeleteAll(t) {
			w.hit(c, ruleSqlDeleteAll, high, prog+": a graph query that deletes what it matches with no WHERE: "+core.TrimArg(x))
			continue
		}
		switch first {
		case "DROP", "TRUNCATE", "DELETE", "UPDATE", "ALTER", "GRANT", "REVOKE", "WITH", "FLUSHALL", "FLUSHDB":
		default:
			if !strings.Contains(t, ";") {
				continue
			}
		}
		for _, h := range sqlFindings(x) {
			if h.level == high && hasArg(c.args, "--local") {
				// the tool's local emulation of the database (wrangler d1
				// execute --local), not the deployed one
				h.level, h.detail = med, h.detail+" (--local: the tool's local copy)"
			}
			w.hit(c, h.rule, h.level, prog+": "+h.detail)
		}
	}
}

// cypherDeleteAll reports whether an upper-cased Cypher query deletes
// what its MATCH finds with no WHERE to narrow it (`MATCH (n) DETACH
// DELETE n`).
func cypherDeleteAll(t string) bool {
	f := strings.Fields(t)
	del, where := false, false
	for _, x := range f {
		switch x {
		case "DELETE":
			del = true
		case "WHERE":
			where = true
		}
	}
	return del && !where && !strings.Contains(t, "{")
}

// destroyOption reports whether opt is an option whose whole meaning is a
// destructive verb: --delete, -purge, --force-delete, --delete-all; not an
// option that deletes one named by-product (--delete-branch, --rm).
func destroyOption(opt string) (string, bool) {
	ws := verbWords(opt)
	switch len(ws) {
	case 1:
		return ws[0], destroyVerbs()[ws[0]]
	case 2:
		switch {
		case (ws[0] == "force" || ws[0] == "hard" || ws[0] == "permanently" || ws[0] == "permanent") && (destroyVerbs()[ws[1]] || removeVerbs()[ws[1]]):
			// --force-delete, --force-reset, --hard-remove
			return ws[1], true
		case destroyVerbs()[ws[0]] && (ws[1] == "all" || ws[1] == "everything" || ws[1] == "force" || dataNouns()[ws[1]] || dataNouns()[strings.TrimSuffix(ws[1], "s")]):
			// --delete-data, --delete-volumes, --delete-namespaces: the data itself
			return ws[0], true
		}
	}
	// --remove-all-storage, --delete-older-than, --remove-all-but-n-full:
	// a removal of everything a criterion selects
	if len(ws) >= 2 && (destroyVerbs()[ws[0]] || removeVerbs()[ws[0]]) && selectorWords()[ws[1]] && (len(ws) > 2 || ws[1] != "all") {
		return ws[0], true
	}
	return "", false
}

// migrationNouns name a database's schema migrations; undoVerbs, next to
// one, revert them: what the migrations created (tables, columns and their
// data) is dropped.
var migrationNouns = core.LazySet("migrate", "migration", "migrations", "db", "database", "schema")

var undoVerbs = core.LazySet("rollback", "downgrade", "down", "undo", "revert")

// migrationUndo returns the undo verb of subcommand x when x, or a word
// before it in the subcommand path, names migrations (`migrate:rollback`,
// `db:migrate:undo:all`, `db downgrade`), "" otherwise.
func migrationUndo(before []string, x string) string {
	lx := strings.ToLower(x)
	if !strings.Contains(lx, "rollback") && !strings.Contains(lx, "down") && !strings.Contains(lx, "undo") && !strings.Contains(lx, "revert") {
		return "" // no undo verb: the common case, without splitting words
	}
	ws := verbWords(x)
	noun, verb := false, ""
	for _, wd := range ws {
		if migrationNouns()[wd] {
			noun = true
		}
		if undoVerbs()[wd] {
			verb = wd
		}
	}
	for _, b := range before {
		for _, wd := range verbWords(b) {
			if migrationNouns()[wd] {
				noun = true
			}
		}
	}
	if noun && verb != "" {
		return verb
	}
	return ""
}

// selectorWords, after a removal verb in an option, select what it
// removes by a criterion rather than by name: all, every, older (than),
// expired, unused.
var selectorWords = core.LazySet("all", "every", "older", "before", "expired", "unused", "untagged", "stale", "old",
	"orphaned", "dangling", "except", "but")

// cacheNouns name what a tool rebuilds on demand: a verb that purges a
// local cache loses nothing that cannot be fetched or computed again.
var cacheNouns = core.LazySet("cache", "caches", "cached")

// remoteScopeOpt reports whether option a names the remote account,
// project, repository, cluster or resource id a command acts on
// (--repo acme/app, --project p, --region r, --id X, --instance-id i-…):
// what the command's verb removes is then not on this machine.
func remoteScopeOpt(a string) bool {
	if !strings.HasPrefix(a, "--") {
		return false
	}
	l := strings.ToLower(a)
	if eq := strings.IndexByte(l, '='); eq > 0 {
		l = l[:eq]
	}
	switch l {
	case "--repo", "--project", "--org", "--organization", "--app", "--cluster", "--stack", "--region", "--zone",
		"--context", "--kube-context", "--env", "--environment", "--account", "--subscription", "--resource-group",
		"--profile", "--space", "--site", "--service", "--vault", "--team", "--tenant", "--target-org", "--endpoint",
		"--server", "--id", "--sid", "--uuid", "--arn", "--scope":
		return true
	}
	return strings.HasSuffix(l, "-id") || strings.HasSuffix(l, "-ids") || strings.HasSuffix(l, "-arn")
}

// localFileExts are extensions of files a tool deletes on this machine.
var localFileExts = core.LazySet("txt", "log", "json", "yaml", "yml", "md", "csv", "tmp", "bak", "out", "html", "xml", "toml",
	"ini", "cfg", "py", "js", "ts", "go", "rs", "java", "rb", "sh", "png", "jpg", "pdf", "zip", "tar", "gz", "tgz", "lock", "pyc", "o")

// allLocalFiles reports whether every name in named is written as a local
// file (./x, ../x, ~/x, or a file name with a common extension).
func allLocalFiles(named []string) bool {
	for _, n := range named {
		if remoteResource(n) {
			return false
		}
		if strings.HasPrefix(n, "./") || strings.HasPrefix(n, "../") || strings.HasPrefix(n, "~/") {
			continue
		}
		i := strings.LastIndexByte(n, '.')
		if i <= 0 || !localFileExts()[strings.ToLower(n[i+1:])] {
			return false
		}
	}
	return true
}

// prodName reports whether a named resource is a production one.
func prodName(s string) bool {
	for _, w := range verbWords(strings.ToLower(s)) {
		w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if w == "prod" || w == "production" || w == "live" {
			return true
		}
	}
	return false
}

func nameOf(named []string, verb string) string {
	if len(named) == 0 {
		if bulkVerbs()[verb] {
			return "everything it manages"
		}
		return "what it manages"
	}
	return core.TrimArg(strings.Join(named, " "))
}

// applyVerbs are subcommands that make a remote infrastructure match a
// plan (terraform apply, pulumi up): the plan, shown before its
// confirmation prompt, may destroy or replace resources.
var applyVerbs = core.LazySet("apply", "up")

// autoApprove reports whether option a switches an apply's confirmation
// off: -auto-approve, --yes, -y, --skip-preview, --non-interactive.
func autoApprove(a string) bool {
	l := strings.ToLower(a)
	if eq := strings.IndexByte(l, '='); eq > 0 {
		if v := l[eq+1:]; v == "false" || v == "0" || v == "no" {
			return false
		}
		l = l[:eq]
	}
	switch l {
	case "-auto-approve", "--auto-approve", "--yes", "-y", "--skip-preview", "--non-interactive",
		"--terragrunt-non-interactive", "--approve", "--no-confirm", "--assume-yes":
		return true
	}
	return false
}

// unreviewedApply judges an infrastructure apply whose confirmation is
// switched off (terraform apply -auto-approve, pulumi up --yes): no one
// sees the plan, which may destroy or replace what runs in production,
// before it is carried out. A saved plan file given to apply was produced
// (and can be read) before: MEDIUM, as any change.
func (w *walker) unreviewedApply(c *command) {
	if c.name == "" || c.dynName || c.helpOnly || openWorldSkip()[c.name] || shells[c.name] {
		return
	}
	ops := operands(c.args)
	k := -1
	for i, o := range ops {
		if i > 2 {
			break
		}
		if applyVerbs()[strings.ToLower(o)] {
			k = i
			break
		}
	}
	if k < 0 {
		return
	}
	auto := ""
	for _, a := range c.args {
		l := strings.ToLower(a)
		switch {
		case l == "--dry-run" || strings.HasPrefix(l, "--dry-run=") || l == "--preview-only" || l == "-refresh-only" || l == "--refresh-only" ||
			l == "--help" || l == "-h" || l == "-destroy":
			return // a preview, or a destroy the destroy rules judge
		case autoApprove(a):
			auto = a
		}
	}
	if auto == "" {
		return
	}
	for _, o := range ops[k+1:] {
		if strings.HasSuffix(o, ".tfplan") || strings.HasSuffix(o, ".plan") || strings.HasSuffix(o, ".out") {
			return
		}
	}
	w.hit(c, ruleInfraApplyUnreviewed, high, c.name+" "+ops[k]+" "+auto+" changes infrastructure without showing anyone the plan, which may destroy or replace resources")
}

// dottedSubcommand reports whether x is a subcommand written with dots
// (`vm.destroy`, `admin.users.remove`): letters in every part, and a last
// part that is no file extension.
func dottedSubcommand(x string) bool {
	parts := strings.Split(x, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || !isLetters(p) {
			return false
		}
	}
	last := strings.ToLower(parts[len(parts)-1])
	return !localFileExts()[last] && !fileExts()[last]
}

// onlyPurges reports whether purge is the only destructive verb among the
// words of a (a CDN's `purge --key K`, not `delete-property`).
func onlyPurges(a []string) bool {
	purge := false
	for _, x := range a {
		switch v, k := verbOf(x); {
		case k == 2 && v == "purge":
			purge = true
		case k != 0:
			return false
		}
	}
	return purge
}

// nonProdEnvName returns the non-production application environment c's
// assignments select (RAILS_ENV=test, APP_ENV=local), "" if none.
func nonProdEnvName(c *command) string {
	for k, v := range c.assigns {
		if (strings.HasSuffix(k, "_ENV") || k == "ENV" || k == "ENVIRONMENT" || k == "STAGE") && nonProdEnvs()[strings.ToLower(v)] {
			return strings.ToLower(v)
		}
	}
	// --settings=app.settings.test, --env=test, -e development
	for i, x := range c.args {
		v := ""
		switch {
		case strings.HasPrefix(x, "--settings=") || strings.HasPrefix(x, "--env=") || strings.HasPrefix(x, "--environment="):
			v = x[strings.IndexByte(x, '=')+1:]
		case (x == "--settings" || x == "--env" || x == "--environment" || x == "-e") && i+1 < len(c.args):
			v = c.args[i+1]
		default:
			continue
		}
		if j := strings.LastIndexAny(v, "./:"); j >= 0 {
			v = v[j+1:]
		}
		if nonProdEnvs()[strings.ToLower(v)] {
			return strings.ToLower(v)
		}
	}
	return ""
}

// scratchWords, as a word of a resource's name, mark a developer's
// throwaway copy.
var scratchWords = core.LazySet("test", "tests", "testing", "tmp", "temp", "scratch", "sandbox", "dev", "local", "demo", "example", "playground")

// scratchNamed reports whether there are named operands and every one is
// named as a test or scratch copy (test_db, scratch-bucket, dev): not a URL
// or remote path, whose host the name does not describe.
func scratchNamed(ops []string) bool {
	n := 0
	for _, o := range ops {
		if _, k := verbOf(o); k != 0 || previewVerbs()[strings.ToLower(o)] || dataNouns()[strings.ToLower(o)] {
			continue // the subcommand path
		}
		if remoteResource(o) || strings.ContainsAny(o, "/@") {
			return false
		}
		found := false
		for _, wd := range verbWords(o) {
			if scratchWords()[wd] {
				found = true
			}
		}
		if !found {
			return false
		}
		n++
	}
	return n > 0
}

func nonProdEnv(c *command) bool { return nonProdEnvName(c) != "" }

// deviceWipeStems, inside an option or a subcommand, name the erasure of
// what a device holds (--zero-superblock, --security-erase, labelclear,
// --discard, sanitize).
var deviceWipeStems = []string{"zero", "erase", "wipe", "zap", "discard", "sanitize", "labelclear", "destroy", "format", "trim", "shred", "secure-erase"}

// deviceWipe judges a program with no table of its own that is aimed at a
// raw block device with an option or subcommand that erases it (`mdadm
// --zero-superblock /dev/sdb1`, `hdparm --security-erase p /dev/sda`,
// `zpool labelclear -f /dev/sdb`): what the device held is gone, as with
// wipefs -a. It reports whether it judged.
func (w *walker) deviceWipe(c *command, prog string) bool {
	dev := ""
	for _, o := range operands(c.args) {
		if classify(o, c.cwd, "") == pcDevice && !strings.HasPrefix(o, "/dev/null") && !strings.HasPrefix(o, "/dev/zero") && !strings.HasPrefix(o, "/dev/urandom") && !strings.HasPrefix(o, "/dev/random") {
			dev = o
		}
	}
	if dev == "" {
		return false
	}
	for _, x := range c.args {
		lx := strings.ToLower(strings.TrimLeft(x, "-"))
		if x == dev || strings.HasPrefix(lx, "no-") || strings.HasPrefix(lx, "dry") {
			continue
		}
		for _, st := range deviceWipeStems {
			if strings.Contains(lx, st) {
				w.hit(c, ruleDiskFormat, high, prog+" "+x+" erases what the device "+dev+" holds")
				return true
			}
		}
	}
	return false
}

var matchAllRe = core.LazyRE(`=~\s*['"]?\^?\.[*+]\$?['"]?$`)

// silencesEverything reports whether args silence, mute or snooze alerts
// with a matcher that matches every alert (`amtool silence add
// alertname=~'.+'`, `… mute --all`).
func silencesEverything(args []string) bool {
	verb, all := false, false
	for _, x := range args {
		lx := strings.ToLower(x)
		switch lx {
		case "silence", "silences", "mute", "snooze", "downtime", "maintenance":
			verb = true
		case "--all", "--everything":
			all = true
		}
		if matchAllRe.MatchString(x) {
			all = true
		}
	}
	return verb && all && !hasArg(args, "query", "list", "ls", "expire", "delete", "rm", "--help")
}
