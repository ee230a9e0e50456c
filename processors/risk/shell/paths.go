package shell

import (
	"path"
	"strings"

	"github.com/vigil-dev/vigil/processors/risk/core"
)

// pathClass is where a path points, for the rules that judge writes and
// deletions by their target.
type pathClass int

const (
	pcWorkspace pathClass = iota // relative, inside the workspace
	pcTemp                       // /tmp, /var/tmp, /dev/shm
	pcCache                      // well-known caches under ~ (pip, npm, …)
	pcHomeData                   // anything else under ~
	pcHome                       // ~ itself, or everything directly in it
	pcParent                     // escapes the workspace with ..
	pcOther                      // absolute, outside the workspace, not a system path
	pcLog                        // system logs
	pcSystem                     // system directories
	pcDevice                     // block or memory devices
	pcRoot                       // / itself or everything in it
	pcDynamic                    // could not be resolved
	pcNull                       // /dev/null, /dev/stdout …
)

var pcNames = [...]string{"workspace", "temp", "cache", "home-data", "home", "parent", "outside", "log", "system", "device", "root", "unresolved", "null"}

func (p pathClass) String() string { return pcNames[p] }

// resolvePath makes p absolute where it can: relative paths against cwd (set
// by a cd earlier in the script), "$HOME" already became "~".
func resolvePath(p, cwd string) string {
	if p == "" {
		return p
	}
	if strings.HasPrefix(p, "~") || strings.HasPrefix(p, "/") {
		return cleanKeepGlob(p)
	}
	if strings.HasPrefix(p, "$") {
		return p
	}
	if cwd != "" {
		return cleanKeepGlob(cwd + "/" + p)
	}
	return cleanKeepGlob(p)
}

func cleanKeepGlob(p string) string {
	c := path.Clean(p)
	if strings.HasPrefix(c, "/") {
		c = unalias(c)
	}
	return c
}

// unalias maps macOS's aliases of system directories to the names the rules
// know: /etc, /var and /tmp are symlinks into /private, and the data volume
// is mounted again under /System/Volumes/Data, so /private/etc/sudoers is
// /etc/sudoers and /System/Volumes/Data/Users/u is /Users/u.
func unalias(p string) string {
	const data = "/System/Volumes/Data"
	if p == data {
		return "/"
	}
	if strings.HasPrefix(p, data+"/") {
		p = p[len(data):]
	}
	for _, d := range []string{"/private/etc", "/private/var", "/private/tmp"} {
		if p == d || strings.HasPrefix(p, d+"/") {
			return p[len("/private"):]
		}
	}
	return p
}

// usableWorkspace reports whether a conversation's workspace may make
// paths under it count as the project's own: only a project-like
// directory may. The workspace is the agent's own claim, so "/", a system
// directory, a home or a device never turns what lies below it into
// workspace (`rm -rf /` with workspace "/" stays a root delete).
func usableWorkspace(ws string) bool {
	switch classify(path.Clean(ws), "", "") {
	case pcOther, pcHomeData, pcTemp:
		return true
	}
	return false
}

// classify returns the class of path p for a command run in cwd.
func classify(p, cwd, workspace string) pathClass {
	if p == "" {
		return pcDynamic
	}
	if strings.HasPrefix(p, "$") {
		return pcDynamic
	}
	r := resolvePath(p, cwd)
	// A workspace under the hook's home is written ~/… like the paths.
	if workspace != "" && (strings.HasPrefix(r, "/") || strings.HasPrefix(r, "~/") && strings.HasPrefix(workspace, "~/")) && usableWorkspace(workspace) {
		ws := path.Clean(workspace)
		if r == ws || strings.HasPrefix(r, ws+"/") {
			return pcWorkspace
		}
	}
	switch {
	case r == "/dev/null" || r == "/dev/stdout" || r == "/dev/stderr" || r == "/dev/tty" || strings.HasPrefix(r, "/dev/fd/") || r == "/dev/zero" || r == "/dev/random" || r == "/dev/urandom":
		return pcNull
	case strings.HasPrefix(r, "/dev/tcp/") || strings.HasPrefix(r, "/dev/udp/"):
		return pcNull
	case strings.HasPrefix(r, "/dev/shm"):
		return pcTemp
	case isDevice(r):
		return pcDevice
	}
	if strings.HasPrefix(r, "/") {
		top := r
		if i := strings.IndexByte(r[1:], '/'); i >= 0 {
			top = r[:i+1]
		}
		rest := strings.TrimPrefix(r, top)
		if r == "/usr/local" {
			return pcOther
		}
		if r == "/" || isGlobOnly(strings.TrimPrefix(r, "/")) {
			return pcRoot
		}
		if strings.HasPrefix(r, "/**/") {
			return pcRoot
		}
		switch top {
		case "/tmp", "/var/tmp", "/private/tmp":
			if r == top || isGlobOnly(strings.TrimPrefix(rest, "/")) {
				return pcSystem // all of /tmp
			}
			return pcTemp
		case "/var":
			if strings.HasPrefix(r, "/var/tmp/") || macTempDir(r) {
				return pcTemp
			}
			if strings.HasPrefix(r, "/var/log") || strings.HasPrefix(r, "/var/spool/mail") || strings.HasPrefix(r, "/var/mail") || strings.HasPrefix(r, "/var/audit") {
				return pcLog
			}
			return pcSystem
		case "/private":
			if strings.HasPrefix(r, "/private/var/log") {
				return pcLog
			}
			return pcSystem
		case "/home", "/Users":
			// /home/<user> is a home; below it is user data.
			parts := strings.Split(strings.Trim(r, "/"), "/")
			if len(parts) <= 2 || (len(parts) == 3 && isGlobOnly(parts[2])) {
				return pcHome
			}
			return pcHomeData
		case "/root":
			if r == "/root" || isGlobOnly(strings.TrimPrefix(rest, "/")) {
				return pcHome
			}
			return pcHomeData
		case "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/opt", "/srv",
			"/System", "/Library", "/Applications", "/snap", "/nix", "/run", "/proc", "/sys", "/dev", "/efi", "/mnt", "/media", "/Volumes", "/cores", "/var/lib":
			if strings.HasPrefix(r, "/usr/local/") && !strings.HasPrefix(r, "/usr/local/bin") && !strings.HasPrefix(r, "/usr/local/lib") && !strings.HasPrefix(r, "/usr/local/etc") {
				return pcOther
			}
			if strings.HasPrefix(r, "/Library/Logs") {
				return pcLog
			}
			if (top == "/mnt" || top == "/media" || top == "/Volumes") && len(strings.Split(strings.Trim(r, "/"), "/")) > 2 {
				return pcOther
			}
			return pcSystem
		}
		return pcOther
	}
	if strings.HasPrefix(r, "~") {
		rest := strings.TrimPrefix(r, "~")
		if rest != "" && rest[0] != '/' {
			// ~user
			user := rest
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				user = rest[:i]
				rest = rest[i:]
			} else {
				rest = ""
			}
			if user == "root" && rest == "" {
				return pcHome
			}
			if rest == "" {
				return pcHome
			}
		}
		rest = strings.TrimPrefix(rest, "/")
		if rest == "" || isGlobOnly(rest) {
			return pcHome
		}
		for _, c := range cacheDirs {
			if rest == c || strings.HasPrefix(rest, c+"/") {
				return pcCache
			}
		}
		if strings.HasPrefix(rest, "Library/Logs") {
			return pcLog
		}
		return pcHomeData
	}
	if r == ".." || strings.HasPrefix(r, "../") {
		return pcParent
	}
	return pcWorkspace
}

var cacheDirs = []string{
	".cache", ".npm", ".yarn/cache", ".pnpm-store", ".m2/repository", ".gradle/caches", ".cargo/registry",
	".cargo/git", ".rustup/tmp", "go/pkg/mod", ".bun/install/cache", "Library/Caches", ".local/share/Trash",
	".nuget/packages", ".ivy2/cache", ".sbt", ".conda/pkgs", ".pyenv/cache", ".node-gyp", ".electron", ".expo",
	".Trash", ".thumbnails", ".local/share/virtualenvs", ".venv",
}

// macTempDir reports whether r is in a macOS per-user temporary directory
// (/var/folders/XX/ID/T, which $TMPDIR names there).
func macTempDir(r string) bool {
	parts := strings.Split(strings.TrimPrefix(r, "/"), "/")
	return len(parts) >= 5 && parts[0] == "var" && parts[1] == "folders" && parts[4] == "T"
}

func isGlobOnly(s string) bool {
	if s == "" {
		return false
	}
	return strings.ContainsAny(s, "*?") && strings.Trim(s, "*.?/") == "" || s == ".[!.]*" || s == ".??*"
}

func isDevice(p string) bool {
	if !strings.HasPrefix(p, "/dev/") {
		return false
	}
	n := strings.TrimPrefix(p, "/dev/")
	for _, pre := range []string{"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "mapper/", "md", "dm-", "loop", "mem", "kmem", "port", "nbd", "zd", "sr", "fd0"} {
		if strings.HasPrefix(n, pre) {
			return true
		}
	}
	return n == "root" || strings.HasPrefix(n, "disk/by-")
}

// credentialKind names the kind of credential store p is, or "" if none.
// Public halves (.pub), example files and directory listings are not.
func credentialKind(p string) string {
	if p == "" {
		return ""
	}
	l := strings.ToLower(p)
	base := l
	if i := strings.LastIndexByte(strings.TrimSuffix(l, "/"), '/'); i >= 0 {
		base = strings.TrimSuffix(l[i+1:], "/")
	}
	if strings.HasSuffix(base, ".pub") || strings.HasSuffix(base, ".example") || strings.HasSuffix(base, ".sample") || strings.HasSuffix(base, ".template") {
		return ""
	}
	switch {
	case strings.HasPrefix(base, "id_rsa") || strings.HasPrefix(base, "id_dsa") || strings.HasPrefix(base, "id_ecdsa") || strings.HasPrefix(base, "id_ed25519") || (strings.HasPrefix(base, "id_") && strings.Contains(l, ".ssh")) || base == "id_*" || base == "'id_*'":
		return "ssh private key"
	case strings.Contains(l, ".ssh/") && (strings.HasSuffix(base, "_key") || strings.HasSuffix(base, ".pem") || strings.HasSuffix(base, ".key")):
		return "ssh private key"
	case strings.HasSuffix(l, "/.ssh") || l == "~/.ssh" || strings.HasSuffix(l, ".ssh/*") || strings.HasSuffix(l, "/.ssh/"):
		return "ssh directory"
	case strings.HasSuffix(l, ".aws/credentials") || strings.HasSuffix(l, ".aws") || strings.HasSuffix(l, ".aws/") || strings.Contains(l, ".aws/sso/cache"):
		return "AWS credentials"
	case strings.Contains(l, ".azure/") && (strings.Contains(base, "token") || strings.Contains(base, "msal")) || strings.HasSuffix(l, "/.azure"):
		return "Azure credentials"
	case strings.Contains(l, ".config/gcloud") && (strings.Contains(base, "credential") || strings.Contains(base, "token") || base == "gcloud") || strings.Contains(base, "application_default_credentials"):
		return "Google Cloud credentials"
	case strings.HasSuffix(l, ".kube/config") || strings.HasSuffix(l, "/.kube"):
		return "Kubernetes credentials"
	case strings.HasSuffix(l, ".docker/config.json"):
		return "Docker registry credentials"
	case base == ".netrc" || base == "_netrc" || base == ".git-credentials" || base == ".npmrc" || base == ".pypirc" || base == ".pgpass" || base == ".my.cnf" || base == ".vault-token" || base == ".boto" || base == ".s3cfg" || base == ".dockercfg":
		return "credential file " + base
	case strings.HasSuffix(l, ".config/gh/hosts.yml") || strings.HasSuffix(l, ".config/hub") || strings.HasSuffix(l, "credentials.tfrc.json") || strings.Contains(l, ".config/openai/auth") || strings.HasSuffix(l, ".codex/auth.json") || strings.HasSuffix(l, ".claude/.credentials.json"):
		return "token file"
	case strings.Contains(l, ".gnupg/") && gnupgPublic()[base]:
		return "" // settings and public keyrings: no secret in them
	case strings.Contains(l, ".gnupg") || strings.Contains(l, ".password-store") || strings.Contains(l, ".local/share/keyrings"):
		return "keyring"
	case strings.Contains(l, "keychain") || strings.Contains(l, "login data") || strings.HasSuffix(base, "key4.db") || strings.HasSuffix(base, "logins.json") || strings.Contains(l, "/cookies") || base == "wallet.dat" || strings.HasSuffix(base, ".kdbx"):
		return "keychain or browser credentials"
	case l == "/etc/shadow" || l == "/etc/gshadow" || l == "/etc/master.passwd" || l == "/etc/security/opasswd" || strings.HasPrefix(l, "/etc/shadow") || strings.HasSuffix(l, "/etc/shadow"):
		return "system password hashes"
	case strings.HasPrefix(l, "/etc/ssh/ssh_host_") && strings.HasSuffix(base, "_key"):
		return "ssh host key"
	case strings.HasPrefix(l, "/run/secrets") || strings.HasPrefix(l, "/var/run/secrets") || strings.Contains(l, "serviceaccount/token"):
		return "mounted secrets"
	case strings.HasPrefix(l, "/proc/") && strings.HasSuffix(l, "/environ"):
		return "process environment"
	case (base == "credentials" || strings.HasPrefix(base, "credentials.")) && !codeOrDocExt()[path.Ext(base)] && base != "credentials.example" && base != "credentials.sample":
		return "credential file " + base
	case base == "credentials.json" || base == "credentials.db" || base == "access_tokens.db" || base == "accesstokens.json" || base == "secrets.yaml" || base == "secrets.yml" || base == "secrets.json" || base == "msal_token_cache.json":
		return "credential file " + base
	}
	return ""
}

// secretFileKind recognises project secret files (.env): sensitive, but read
// by developers every day, so they weigh less than credential stores.
func secretFileKind(p string) string {
	l := strings.ToLower(p)
	base := l
	if i := strings.LastIndexByte(l, '/'); i >= 0 {
		base = l[i+1:]
	}
	if strings.Contains(base, ".example") || strings.Contains(base, ".sample") || strings.Contains(base, ".template") {
		return "" // .env.example.bak: a copy of the template, no secret
	}
	if base == ".env" || (strings.HasPrefix(base, ".env.") && !strings.HasSuffix(base, ".dist") && !strings.HasSuffix(base, ".defaults")) || strings.HasSuffix(base, ".env") && base != ".env" && !strings.Contains(base, "example") {
		return ".env file"
	}
	if strings.HasSuffix(base, ".pem") || strings.HasSuffix(base, ".key") || strings.HasSuffix(base, ".p12") || strings.HasSuffix(base, ".pfx") || strings.HasSuffix(base, ".jks") || strings.HasSuffix(base, ".keystore") {
		return "key file"
	}
	if strings.HasSuffix(base, ".tfstate") {
		return "terraform state"
	}
	return ""
}

// historyFile reports whether p is a shell or REPL history file.
func historyFile(p string) bool {
	l := strings.ToLower(p)
	base := l
	if i := strings.LastIndexByte(l, '/'); i >= 0 {
		base = l[i+1:]
	}
	return strings.HasSuffix(base, "_history") || base == ".history" || base == ".lesshst" || base == ".viminfo"
}

// rcFile reports whether p is a shell start-up file of a user.
func rcFile(p string) bool {
	l := strings.ToLower(p)
	base := l
	if i := strings.LastIndexByte(l, '/'); i >= 0 {
		base = l[i+1:]
	}
	switch base {
	case ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile", ".zshenv", ".zlogin",
		".shrc", ".kshrc", ".cshrc", ".tcshrc", ".login", ".mkshrc", "config.fish", ".xinitrc", ".xprofile":
		return !strings.HasPrefix(l, "/etc/")
	case "rc":
		// ~/.ssh/rc runs at every ssh login to the account
		return strings.HasSuffix(l, "/.ssh/rc")
	}
	return false
}

// sensitiveTarget names system paths whose modification is dangerous in
// itself: privilege, accounts, persistence, boot, loader.
func sensitiveTarget(p string) (rule *ShellRule, why string) {
	l := p
	switch {
	case strings.HasPrefix(l, "/etc/sudoers") || strings.HasPrefix(l, "/private/etc/sudoers"):
		return ruleSudoersWrite, "grants privileges through sudoers"
	case l == "/etc/passwd" || l == "/etc/shadow" || l == "/etc/group" || l == "/etc/gshadow" || l == "/etc/master.passwd" || strings.HasPrefix(l, "/var/db/dslocal/"):
		return ruleAccountFileWrite, "changes system accounts"
	case strings.HasSuffix(l, "authorized_keys") || strings.HasSuffix(l, "authorized_keys2"):
		return ruleAuthorizedKeysWrite, "lets a key log in over ssh"
	case strings.HasPrefix(l, "/etc/cron") || strings.HasPrefix(l, "/var/spool/cron") || strings.HasPrefix(l, "/etc/anacrontab") || strings.HasPrefix(l, "/usr/lib/cron") || strings.HasPrefix(l, "/var/at/"):
		return ruleCronPersistence, "installs a scheduled job"
	case strings.HasPrefix(l, "/etc/systemd/") || strings.HasPrefix(l, "/lib/systemd/") || strings.HasPrefix(l, "/usr/lib/systemd/") || strings.HasPrefix(l, "/etc/init.d") || strings.HasPrefix(l, "/etc/init/") || strings.HasPrefix(l, "/etc/rc") || strings.Contains(l, "/.config/systemd/") || strings.Contains(l, "/.config/autostart"):
		return ruleServicePersistence, "installs or changes a service or start-up script"
	case strings.HasPrefix(l, "/Library/LaunchDaemons") || strings.HasPrefix(l, "/Library/LaunchAgents") || strings.Contains(l, "Library/LaunchAgents") || strings.HasPrefix(l, "/Library/StartupItems") || strings.HasPrefix(l, "/System/Library/Launch") || strings.HasPrefix(l, "/etc/emond.d") || strings.HasPrefix(l, "/private/etc/emond.d"):
		return ruleLaunchdPersistence, "installs a launch agent, daemon or start-up item"
	case l == "/etc/ld.so.preload" || strings.HasPrefix(l, "/etc/ld.so.conf"):
		return ruleLoaderHijack, "makes every program load a library"
	case strings.HasPrefix(l, "/etc/pam.d") || strings.HasPrefix(l, "/etc/security/") || strings.HasPrefix(l, "/lib/security") || strings.HasPrefix(l, "/usr/lib/pam"):
		return rulePamTampering, "changes how logins are authenticated"
	case l == "/etc/profile" || strings.HasPrefix(l, "/etc/profile.d") || l == "/etc/bash.bashrc" || l == "/etc/bashrc" || strings.HasPrefix(l, "/etc/zsh") || l == "/etc/environment" || strings.HasPrefix(l, "/etc/rc.") || l == "/etc/rc.common":
		return ruleSystemProfileWrite, "runs code in every user's shell"
	case strings.HasPrefix(l, "/boot/"):
		return ruleBootTampering, "changes how the machine boots"
	case strings.HasPrefix(l, "/etc/ssh/"):
		return ruleSshdConfigWrite, "changes who can log in over ssh"
	case strings.HasPrefix(l, "/etc/hosts") || strings.HasPrefix(l, "/etc/resolv.conf"):
		return ruleNameResolutionWrite, "redirects host names"
	case strings.HasPrefix(l, "/etc/"):
		return ruleSystemConfigWrite, "changes system configuration"
	case strings.HasPrefix(l, "/proc/sysrq-trigger"):
		return ruleSysrq, "triggers a kernel action (reboot, crash)"
	case strings.HasPrefix(l, "/proc/sys/kernel/") || strings.HasPrefix(l, "/proc/sys/fs/"):
		return ruleKernelTunableWrite, "changes a kernel security setting"
	case strings.HasPrefix(l, "/usr/bin/") || strings.HasPrefix(l, "/bin/") || strings.HasPrefix(l, "/sbin/") || strings.HasPrefix(l, "/usr/sbin/") || strings.HasPrefix(l, "/usr/lib/") || strings.HasPrefix(l, "/lib/"):
		return ruleSystemBinaryWrite, "replaces system programs or libraries"
	}
	return nil, ""
}

// agentDirs are the directories where coding agents keep their settings,
// hooks, MCP servers, credentials and rules, in the home directory or in a
// project. Anything written there changes what an agent may do, or what it
// is told, in every later session.
var agentDirs = []string{".claude", ".codex", ".hermes", ".gemini", ".cursor", ".continue", ".codeium", ".windsurf", ".roo", ".kiro",
	".qwen", ".opencode", ".aider", ".goose", ".amp", ".clinerules", ".github/instructions", ".config/goose", ".config/opencode",
	".config/github-copilot", ".config/claude", "Library/Application Support/Claude", ".vscode/mcp.json"}

// agentInstructionFiles are read by coding agents as instructions at the
// start of every session.
var agentInstructionFiles = core.LazySet("agents.md", "claude.md", "claude.local.md", "gemini.md", "qwen.md", "hermes.md", ".hermes.md",
	"soul.md", ".cursorrules", ".windsurfrules", ".clinerules", ".goosehints", "copilot-instructions.md", ".aider.conventions.md")

// agentSettingsFiles configure an agent (permissions, hooks, MCP servers)
// wherever they are.
var agentSettingsFiles = core.LazySet(".mcp.json", "mcp.json", "claude_desktop_config.json", "cline_mcp_settings.json", "mcp_config.json",
	"mcp_settings.json", "opencode.json", ".aider.conf.yml", "settings.local.json")

// agentConfigKind reports what a coding agent's file p is: "settings" (what
// the agent may do without asking, its hooks and MCP servers — programs
// that run in every session — and its credentials), "instructions" (text
// every session obeys), or "" for neither.
func agentConfigKind(p string) string {
	l := strings.ToLower(p)
	base := l[strings.LastIndexByte(l, '/')+1:]
	if agentInstructionFiles()[base] || strings.HasSuffix(base, ".instructions.md") {
		return "instructions"
	}
	if agentSettingsFiles()[base] {
		return "settings"
	}
	for _, d := range agentDirs {
		ld := strings.ToLower(d)
		i := strings.Index(l, ld)
		if i < 0 || i > 0 && l[i-1] != '/' && !(i == 1 && l[0] == '~') {
			continue
		}
		rest := l[i+len(ld):]
		if rest != "" && rest[0] != '/' && !strings.HasPrefix(rest, ".") && !strings.HasPrefix(rest, "-") {
			continue // .claude-backup, .cursorless: another name
		}
		switch {
		case strings.HasSuffix(base, ".md") || strings.HasSuffix(base, ".mdc") || strings.Contains(rest, "/rules/") || d == ".clinerules" || d == ".github/instructions":
			return "instructions"
		case strings.Contains(rest, "/projects/") || strings.Contains(rest, "/todos/") || strings.Contains(rest, "/logs/") || strings.Contains(rest, "/cache") || strings.Contains(rest, "/sessions/") || strings.HasSuffix(base, ".log") || strings.HasSuffix(base, ".jsonl"):
			return "" // transcripts and caches
		}
		return "settings"
	}
	return ""
}

// remoteAccessFile reports whether p holds what lets people log in to the
// machine remotely: the keys accepted for a login, the ssh daemon's
// configuration and host keys.
func remoteAccessFile(p string) bool {
	return strings.HasSuffix(p, "/authorized_keys") || strings.HasSuffix(p, "/authorized_keys2") || p == "authorized_keys" ||
		strings.HasPrefix(p, "/etc/ssh/sshd_config") || strings.HasPrefix(p, "/etc/ssh/ssh_host_")
}

// gnupgPublic are the files of a GnuPG home that hold settings, public
// keys and trust, not secret keys (those are in private-keys-v1.d,
// secring.gpg and openpgp-revocs.d).
var gnupgPublic = core.LazySet("gpg.conf", "gpg-agent.conf", "dirmngr.conf", "scdaemon.conf", "common.conf", "sshcontrol",
	"pubring.kbx", "pubring.kbx~", "pubring.gpg", "trustdb.gpg", "tofu.db")

// codeOrDocExt are extensions of source and documentation files: a
// credentials.ts is code that handles credentials, not a store of them.
var codeOrDocExt = core.LazySet(".go", ".py", ".js", ".ts", ".tsx", ".jsx", ".rb", ".java", ".kt", ".rs", ".c", ".h", ".cs", ".php", ".swift",
	".md", ".rst", ".txt", ".html", ".adoc", ".proto", ".graphql", ".test", ".spec", ".snap", ".mdx")
