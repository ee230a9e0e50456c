package shell

import (
	"path"
	"strconv"
	"strings"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
)

// ruledCmds lists the commands a rule judges by name: the cases of
// commandRules, the programs execute and writeFlags handle, interpreters
// and wrappers (TestRuledCommands keeps it in step with them).
var ruledCmds = core.LazySet("rm", "unlink", "srm", "rmdir", "shred", "wipe", "dd", "mkfs", "mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk",
	"cfdisk", "gdisk", "sgdisk", "parted", "blkdiscard", "truncate", "mv", "cp", "install", "ln", "tee", "sed", "chmod", "chown",
	"chgrp", "chattr", "setfacl", "setcap", "kill", "killall", "killall5", "pkill", "fuser", "shutdown", "reboot", "halt", "poweroff",
	"init", "telinit", "systemctl", "service", "launchctl", "crontab", "at", "batch", "systemd-run", "useradd", "adduser", "userdel",
	"deluser", "usermod", "groupadd", "groupdel", "gpasswd", "passwd", "chpasswd", "pw", "dscl", "sysadminctl", "dseditgroup",
	"dsenableroot", "visudo", "vipw", "vigr", "insmod", "modprobe", "rmmod", "kextload", "kmutil", "sysctl", "setenforce", "spctl",
	"csrutil", "tmutil", "mdatp", "defaults", "auditctl", "ufw", "iptables", "ip6tables", "nft", "pfctl", "journalctl", "log",
	"history", "unset", "set", "security", "kickstart", "systemsetup", "git", "gh", "pip", "npm", "yarn", "pnpm", "bun", "cargo",
	"go", "gem", "bundle", "brew", "apt", "apt-get", "aptitude", "yum", "dnf", "zypper", "pacman", "apk", "conda", "mamba", "pipx",
	"uv", "uvx", "npx", "bunx", "poetry", "make", "twine", "docker", "podman", "nerdctl", "docker-compose", "podman-compose", "kubectl", "oc", "helm", "terraform", "tofu", "aws", "gcloud",
	"az", "doctl", "heroku", "flyctl", "psql", "mysql", "sqlite3", "clickhouse-client", "cockroach", "sqlcmd", "duckdb", "mongo",
	"redis-cli", "curl", "wget", "http", "https", "xh", "xhs", "nc", "socat", "telnet", "scp", "sftp", "rsync", "ftp", "lftp", "smbclient", "ssh", "dig",
	"nslookup", "host", "nmap", "masscan", "zmap", "nikto", "tcpdump", "tshark", "ping", "ngrok", "cloudflared", "code", "python",
	"php", "httpd", "mail", "sendmail", "finger", "whois", "aria2c", "lwp-download", "nscurl", "sudo", "su", "eval", "export",
	"vim", "vi", "nano", "emacs", "ed", "sudoedit", "cancel", "lp", "ab", "restic", "getent", "openssl", "shopt", "xattr", "chflags",
	"sshpass", "rclone", "gsutil", "s3cmd", "perl", "ruby", "node", "lua", "awk", "osascript", "update-ca-certificates", "ssh-keygen",
	"ip", "ifconfig", "ifdown", "route", "nmcli", "tailscale", "zerotier-cli", "wg-quick", "wg", "netplan", "ruby", "rg", "unzip", "7z", "7za",
	"7zr", "cpio", "bsdtar", "tar", "alias", "ack", "ag", "ditto", "egrep", "ex", "fgrep", "find", "gedit", "git-grep",
	"grep", "joe", "mcedit", "micro", "mutt", "nvim", "pico", "zip", "gpg", "gpg2")

// commandRules judges c by what its program does with its arguments.
func (w *walker) commandRules(c *command) {
	a := c.args
	switch c.name {
	case "rm", "unlink", "srm", "rmdir":
		w.deletion(c, flagSet(a, 'r', "--recursive") || flagSet(a, 'R') || c.name == "srm" && flagSet(a, 'r'), deletionTargets(c))
	case "shred", "wipe":
		for i, t := range operands(a) {
			cls := classify(t, c.cwd, w.env.Workspace)
			switch {
			case cls == pcDevice:
				w.hit(c, ruleDiskWipe, high, c.name+" destroys the device "+t)
			case cls == pcLog || historyFile(t):
				w.hit(c, ruleLogTampering, high, c.name+" destroys the log "+t)
			case cls == pcSystem || cls == pcRoot || cls == pcHome || cls == pcParent:
				w.hit(c, ruleDestructiveDeleteSystem, high, c.name+" destroys "+t)
			default:
				// shred leaves nothing to recover: judged as a deletion
				lvl, rule, why := w.deleteTarget(c, t, flagSet(a, 'r'), i)
				w.hit(c, rule, lvl, why)
			}
		}
	case "dd":
		for _, x := range a {
			if strings.HasPrefix(x, "of=") {
				t := x[3:]
				cls := classify(t, c.cwd, w.env.Workspace)
				switch cls {
				case pcDevice:
					w.hit(c, ruleDiskOverwrite, high, "dd overwrites the device "+t)
				case pcWorkspace, pcTemp, pcNull:
				default:
					w.judgeWrite(c, t, false, nil, "dd")
					if cls == pcLog {
						break
					}
				}
			}
			if strings.HasPrefix(x, "if=") && classify(x[3:], c.cwd, "") == pcDevice && !strings.HasPrefix(x[3:], "/dev/zero") {
				w.hit(c, ruleDiskRead, med, "dd reads the raw device "+x[3:])
			}
		}
	case "mkfs", "mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted", "blkdiscard":
		if (c.name == "fdisk" || c.name == "sfdisk" || c.name == "parted" || c.name == "gdisk" || c.name == "sgdisk") && (flagSet(a, 'l', "--list") || hasArg(a, "print", "-p", "--print")) {
			return
		}
		if c.name == "wipefs" && !flagSet(a, 'a', "--all") && !flagSet(a, 'o', "--offset") && !hasArgPrefix(a, "--offset=", "-t", "--types") {
			// without -a or -o, wipefs only lists the signatures it finds
			return
		}
		dev := false
		for _, t := range operands(a) {
			if classify(t, c.cwd, "") == pcDevice {
				dev = true
			}
		}
		if dev {
			w.hit(c, ruleDiskFormat, high, c.name+" formats or repartitions a disk")
		} else {
			w.hit(c, ruleDiskFormat, med, c.name+" formats an image or device")
		}
	case "truncate":
		zero := false
		if v, ok := optValue(a, "-s", "--size"); ok && (v == "0" || v == "0K" || v == "0k") {
			zero = true
		}
		for i, t := range a {
			if strings.HasPrefix(t, "-") || (i > 0 && a[i-1] == "-s") {
				continue
			}
			cls := classify(t, c.cwd, w.env.Workspace)
			rt := resolvePath(t, c.cwd)
			switch {
			case historyFile(t):
				w.hit(c, ruleHistoryTampering, high, "truncate empties "+t)
			case credentialKind(rt) != "" || remoteAccessFile(rt):
				w.hit(c, ruleDestructiveDeleteCredentials, high, "truncate empties the credentials "+rt)
			case cls == pcLog || (strings.HasSuffix(t, ".log") && cls != pcWorkspace && cls != pcTemp):
				w.hit(c, ruleLogTampering, high, "truncate empties the log "+t)
			case cls == pcSystem || cls == pcDevice || cls == pcRoot:
				w.hit(c, ruleSystemWrite, high, "truncate empties "+t)
			default:
				if zero {
					w.hit(c, ruleDeleteWorkspace, med, "truncate empties "+t)
				} else {
					w.hit(c, ruleFileResize, med, "truncate resizes "+t)
				}
			}
		}
	case "mv":
		ops := operands(a)
		if len(ops) >= 2 {
			dst := ops[len(ops)-1]
			for _, s := range ops[:len(ops)-1] {
				cls := classify(s, c.cwd, w.env.Workspace)
				switch {
				case cls == pcRoot || cls == pcHome || cls == pcSystem && isTopLevel(resolvePath(s, c.cwd)):
					w.hit(c, ruleDestructiveMove, high, "mv moves "+s+" away")
				case cls == pcLog || historyFile(s):
					w.hit(c, ruleLogTampering, high, "mv moves the log "+s+" away")
				case remoteAccessFile(resolvePath(s, c.cwd)) || credentialKind(resolvePath(s, c.cwd)) != "" && cls != pcWorkspace:
					w.hit(c, ruleDestructiveDeleteCredentials, high, "mv moves the credentials "+s+" away")
				}
				w.judgeRead(c, s, "mv moves")
			}
			if classify(dst, c.cwd, "") == pcNull {
				w.hit(c, ruleDestructiveMove, high, "mv moves files to "+dst)
			}
			for _, t := range copyTargets(ops[:len(ops)-1], dst, c.cwd) {
				w.judgeWrite(c, t, false, nil, "mv")
			}
		}
		w.hit(c, ruleMove, med, "mv renames or moves files")
	case "cp", "install":
		ops := operands(a)
		if c.name == "install" {
			if m, ok := optValue(a, "-m", "--mode"); ok && setuidMode(m) {
				w.hit(c, ruleSetuid, high, "install sets the setuid/setgid bit (mode "+m+")")
			}
			ops = nil
			for i, x := range a {
				if strings.HasPrefix(x, "-") || (i > 0 && (a[i-1] == "-m" || a[i-1] == "-o" || a[i-1] == "-g" || a[i-1] == "--mode")) {
					continue
				}
				ops = append(ops, x)
			}
		}
		if len(ops) >= 2 {
			for _, t := range copyTargets(ops[:len(ops)-1], ops[len(ops)-1], c.cwd) {
				dst := resolvePath(t, c.cwd)
				rule, why := sensitiveTarget(dst)
				if rule == ruleServicePersistence && (strings.HasPrefix(dst, "/etc/systemd/system") || strings.Contains(dst, "/.config/systemd/user/")) && !strings.HasPrefix(ops[0], "/") && !strings.HasPrefix(ops[0], "$") && !strings.HasPrefix(ops[0], "~") && classify(ops[0], c.cwd, w.env.Workspace) == pcWorkspace {
					w.hit(c, ruleServiceInstall, med, c.name+" installs a project service unit into "+dst)
				} else if rule != nil {
					w.hit(c, rule, high, c.name+" writes "+dst+": "+why)
				} else {
					w.judgeWrite(c, t, false, nil, c.name)
				}
			}
		}
	case "ln":
		ops := operands(a)
		if len(ops) >= 2 {
			target, link := ops[0], ops[len(ops)-1]
			rl := resolvePath(link, c.cwd)
			switch {
			case historyFile(rl) && target == "/dev/null":
				w.hit(c, ruleHistoryTampering, high, "ln points "+link+" at /dev/null, discarding history")
			default:
				if rule, why := sensitiveTarget(rl); rule != nil && !strings.HasPrefix(rl, "/usr/local") {
					w.hit(c, rule, high, "ln replaces "+rl+": "+why)
				} else if classify(link, c.cwd, "") == pcSystem {
					w.hit(c, ruleSystemWrite, med, "ln creates a link in "+rl)
				}
			}
		}
	case "tee":
		appendMode := flagSet(a, 'a', "--append")
		for _, t := range operands(a) {
			w.judgeWrite(c, t, appendMode, c.stdin, "tee")
		}
	case "sed", "perl", "ruby":
		if !flagSet(a, 'i', "--in-place") {
			return
		}
		for _, t := range inPlaceTargets(c.name, a) {
			n := len(w.finds)
			w.judgeWrite(c, t, false, nil, c.name+" -i")
			if len(w.finds) == n {
				w.hit(c, ruleInPlaceEdit, med, c.name+" -i edits "+t+" in place")
			}
		}
	case "chmod":
		w.chmod(c)
	case "chown", "chgrp":
		rec := flagSet(a, 'R', "--recursive")
		ops := operands(a)
		if len(ops) > 1 {
			ops = ops[1:]
		}
		for _, t := range ops {
			cls := classify(t, c.cwd, w.env.Workspace)
			rt := resolvePath(t, c.cwd)
			if cls == pcRoot || (rec && (cls == pcHome || cls == pcSystem && isTopLevel(rt))) || credentialKind(rt) == "system password hashes" || strings.HasPrefix(rt, "/etc/sudoers") {
				w.hit(c, ruleOwnershipSystem, high, c.name+" changes ownership of "+rt)
				return
			}
		}
		if spec := operands(a); len(spec) > 1 && toRoot(c.name, spec[0]) {
			w.hit(c, ruleOwnershipRoot, high, c.name+" "+spec[0]+" gives files to root: only root may do this, and a root-owned file (with a setuid bit, a root program) is out of the user's hands")
			return
		}
		w.hit(c, ruleOwnershipChange, med, c.name+" changes file ownership")
	case "chattr", "chflags":
		for _, t := range operands(a) {
			cls := classify(t, c.cwd, "")
			if cls == pcSystem || cls == pcLog || cls == pcRoot {
				w.hit(c, ruleAttributeSystem, high, c.name+" changes protection flags of "+t)
				return
			}
		}
		w.hit(c, ruleAttributeChange, med, c.name+" changes file flags")
	case "setfacl":
		w.hit(c, ruleAclChange, med, "setfacl changes permissions")
	case "setcap":
		if flagSet(a, 'r') {
			w.hit(c, ruleCapabilityChange, med, "setcap removes capabilities")
		} else {
			w.hit(c, ruleSetcap, high, "setcap grants a program root-like capabilities")
		}
	case "kill":
		w.kill(c)
	case "killall5":
		w.hit(c, ruleKillAll, high, "killall5 kills every process")
	case "killall", "pkill":
		if c.name == "killall" && hasArg(a, "-l", "--list", "-V", "--version") {
			return
		}
		for _, t := range operands(a) {
			if isSecurityService(t) {
				w.hit(c, ruleDefenseEvasion, high, c.name+" stops the security process "+t)
				return
			}
			if reachService(t) {
				w.hit(c, ruleRemoteAccessLoss, high, c.name+" stops "+t+", which keeps the machine reachable")
				return
			}
		}
		if hasArg(a, "-1") || (c.name == "pkill" && hasArg(a, "-u") && hasArg(a, "root")) {
			w.hit(c, ruleKillAll, high, c.name+" kills many processes")
			return
		}
		w.hit(c, ruleProcessKill, med, c.name+" stops processes")
	case "fuser":
		if flagSet(a, 'k') {
			w.hit(c, ruleProcessKill, med, "fuser -k kills processes")
		}
	case "shutdown", "reboot", "halt", "poweroff":
		if hasArg(a, "-c") {
			return
		}
		w.hit(c, ruleShutdown, high, c.name+" stops or restarts the machine")
	case "init", "telinit":
		if hasArg(a, "0", "6", "1", "s", "S") {
			w.hit(c, ruleShutdown, high, c.name+" changes the run level (halt, reboot, single user)")
		}
	case "systemctl", "service":
		w.services(c)
	case "launchctl":
		if hasArg(a, "list", "print", "blame", "version", "help") {
			return
		}
		for _, t := range a {
			if base := strings.TrimSuffix(path.Base(t), ".plist"); reachService(base) || base == "ssh" && strings.Contains(t, "/") {
				if hasArg(a, "unload", "bootout", "disable", "remove", "stop", "kill") {
					w.hit(c, ruleRemoteAccessLoss, high, "launchctl stops "+t+", which keeps the machine reachable")
					return
				}
			}
			if isSecurityService(t) && hasArg(a, "unload", "bootout", "disable", "remove", "stop", "kill") {
				w.hit(c, ruleDefenseEvasion, high, "launchctl stops the security agent "+t)
				return
			}
		}
		if hasArg(a, "load", "bootstrap") {
			for _, t := range operands(a) {
				if strings.Contains(t, "LaunchDaemons") || strings.Contains(t, "LaunchAgents") {
					w.hit(c, ruleLaunchdPersistence, high, "launchctl loads "+t+" to run at every boot or login")
					return
				}
			}
		}
		w.hit(c, ruleServiceChange, med, "launchctl changes a service")
	case "crontab":
		switch {
		case hasArg(a, "-l"):
		case hasArg(a, "-e"):
			w.hit(c, ruleCronEdit, med, "crontab -e edits scheduled jobs")
		case flagSet(a, 'r', "--remove") && flagSet(a, 'i'):
			w.hit(c, ruleCronRemove, med, "crontab -r -i asks before it removes all scheduled jobs")
		case flagSet(a, 'r', "--remove"):
			w.hit(c, ruleCronRemove, high, "crontab -r removes every scheduled job of the user at once, without asking and with no copy kept")
		default:
			w.hit(c, ruleCronPersistence, high, "crontab installs scheduled jobs")
		}
	case "at", "batch":
		if hasArg(a, "-l") || hasArg(a, "-r") || hasArg(a, "-d") {
			return
		}
		w.hit(c, ruleScheduledJob, med, c.name+" schedules a command to run later")
	case "systemd-run":
		timer := false
		for _, x := range a {
			if strings.HasPrefix(x, "--on-") {
				timer = true
			}
		}
		if timer && !hasArg(a, "--user") {
			w.hit(c, ruleSystemdTimerPersistence, high, "systemd-run schedules a system job that keeps running")
		} else {
			w.hit(c, ruleScheduledJob, med, "systemd-run starts a transient service")
		}
	case "useradd", "adduser", "userdel", "deluser", "passwd", "chpasswd", "vipw", "vigr", "dsenableroot":
		w.hit(c, ruleAccountChange, high, c.name+" creates, deletes or changes a user account or password")
	case "usermod", "gpasswd":
		w.hit(c, ruleAccountChange, high, c.name+" changes a user's groups or login")
	case "groupadd", "groupdel":
		w.hit(c, ruleAccountChange, med, c.name+" changes groups")
	case "pw":
		if len(a) > 0 && (strings.HasPrefix(a[0], "user") || strings.HasPrefix(a[0], "group")) && !strings.HasSuffix(a[0], "show") {
			w.hit(c, ruleAccountChange, high, "pw changes accounts")
		}
	case "dscl":
		if hasArgPrefixAny(a, "-create", "-delete", "-append", "-passwd", "-merge", "-change") {
			w.hit(c, ruleAccountChange, high, "dscl changes the directory service (accounts)")
		}
	case "sysadminctl":
		if hasArgPrefixAny(a, "-addUser", "-deleteUser", "-guestAccount", "-resetPasswordFor", "-adminUser", "-secureTokenOn") {
			w.hit(c, ruleAccountChange, high, "sysadminctl changes accounts")
		}
	case "dseditgroup":
		if hasArg(a, "edit") || hasArg(a, "create") || hasArg(a, "delete") {
			w.hit(c, ruleAccountChange, high, "dseditgroup changes group membership")
		}
	case "visudo", "sudoedit":
		w.hit(c, ruleSudoersWrite, high, c.name+" edits privileges")
	case "vim", "vi", "nano", "emacs", "ed", "ex", "nvim", "pico", "joe", "micro", "mcedit", "gedit":
		for _, t := range operands(a) {
			rt := resolvePath(t, c.cwd)
			if rule, why := sensitiveTarget(rt); rule != nil && (c.sudo || strings.HasSuffix(rt, "authorized_keys") || !strings.HasPrefix(rt, "/")) {
				w.hit(c, rule, high, c.name+" edits "+rt+": "+why)
			}
		}
		if c.stdin != nil && c.stdin.text != "" && (c.name == "ed" || c.name == "ex") {
			for _, tok := range strings.Fields(c.stdin.text) {
				if k := credentialKind(tok); k != "" {
					w.hit(c, ruleCredentialRead, high, c.name+" script opens "+tok+" ("+k+")")
					break
				}
			}
		}
	case "insmod", "kextload", "kmutil":
		w.hit(c, ruleKernelModule, high, c.name+" loads code into the kernel")
	case "modprobe":
		if flagSet(a, 'r', "--remove") || flagSet(a, 'n', "--dry-run") || hasArg(a, "-c") {
			w.hit(c, ruleKernelModule, med, "modprobe changes kernel modules")
		} else {
			w.hit(c, ruleKernelModule, high, "modprobe loads code into the kernel")
		}
	case "rmmod":
		w.hit(c, ruleKernelModule, med, "rmmod unloads a kernel module")
	case "sysctl":
		for _, x := range a {
			if strings.Contains(x, "=") {
				k := strings.ToLower(x[:strings.IndexByte(x, '=')])
				if strings.Contains(k, "randomize_va_space") || strings.Contains(k, "sysrq") || strings.Contains(k, "kptr_restrict") || strings.Contains(k, "yama") || strings.Contains(k, "modules_disabled") || strings.Contains(k, "suid_dumpable") || strings.Contains(k, "dmesg_restrict") || strings.Contains(k, "unprivileged") {
					w.hit(c, ruleKernelHardeningOff, high, "sysctl changes the kernel security setting "+k)
				} else {
					w.hit(c, ruleKernelTunableWrite, med, "sysctl changes "+k)
				}
				return
			}
		}
	case "setenforce":
		if hasArg(a, "0", "Permissive", "permissive") {
			w.hit(c, ruleDefenseEvasion, high, "setenforce 0 turns SELinux enforcement off")
		}
	case "spctl":
		if hasArg(a, "--master-disable", "--global-disable", "--disable") {
			w.hit(c, ruleDefenseEvasion, high, "spctl turns Gatekeeper off")
		}
	case "csrutil":
		if hasArg(a, "disable") {
			w.hit(c, ruleDefenseEvasion, high, "csrutil disables System Integrity Protection")
		}
	case "tmutil":
		if hasArg(a, "disable", "delete", "deletelocalsnapshots") {
			w.hit(c, ruleDefenseEvasion, high, "tmutil disables or deletes backups")
		}
	case "mdatp":
		if hasArg(a, "disabled") || hasArg(a, "false") {
			w.hit(c, ruleDefenseEvasion, high, "mdatp turns antivirus protection off")
		}
	case "defaults":
		if hasArg(a, "write") {
			for _, x := range a {
				if strings.EqualFold(x, "LoginHook") || strings.EqualFold(x, "LogoutHook") {
					w.hit(c, ruleLoginHookPersistence, high, "defaults installs a login hook")
					return
				}
			}
			w.hit(c, rulePreferenceChange, med, "defaults changes system or app preferences")
		}
	case "auditctl":
		if hasArg(a, "-D") || (hasArg(a, "-e") && hasArg(a, "0")) {
			w.hit(c, ruleDefenseEvasion, high, "auditctl deletes audit rules or disables auditing")
		} else if !hasArg(a, "-l", "-s") {
			w.hit(c, ruleAuditChange, med, "auditctl changes audit rules")
		}
	case "ufw":
		switch {
		case hasArg(a, "deny", "reject") && hasArg(a, "22", "22/tcp", "ssh", "OpenSSH"):
			w.hit(c, ruleFirewallLockout, high, "ufw blocks ssh: the machine becomes unreachable")
		case hasArg(a, "disable", "reset") || (hasArg(a, "logging") && hasArg(a, "off")):
			w.hit(c, ruleFirewallDisable, high, "ufw turns the firewall or its logging off")
		case hasArg(a, "status", "show", "app"):
		default:
			w.hit(c, ruleFirewallChange, med, "ufw changes firewall rules")
		}
	case "iptables", "ip6tables":
		switch {
		case firewallLockout(a):
			w.hit(c, ruleFirewallLockout, high, c.name+" drops incoming connections (ssh included): the machine becomes unreachable")
		case flagSet(a, 'F', "--flush") || flagSet(a, 'X', "--delete-chain") || flagSet(a, 'D', "--delete") || (flagSet(a, 'P', "--policy") && hasArg(a, "ACCEPT")):
			w.hit(c, ruleFirewallDisable, high, c.name+" flushes, deletes or opens firewall rules")
		case flagSet(a, 'L', "--list") || flagSet(a, 'S', "--list-rules"):
		default:
			w.hit(c, ruleFirewallChange, med, c.name+" changes firewall rules")
		}
	case "nft":
		if hasArg(a, "flush") || hasArg(a, "delete") {
			w.hit(c, ruleFirewallDisable, high, "nft flushes or deletes firewall rules")
		} else if !hasArg(a, "list") {
			w.hit(c, ruleFirewallChange, med, "nft changes firewall rules")
		}
	case "pfctl":
		if hasArg(a, "-d") || hasArg(a, "-F") {
			w.hit(c, ruleFirewallDisable, high, "pfctl disables or flushes the packet filter")
		}
	case "journalctl":
		for _, x := range a {
			if strings.HasPrefix(x, "--vacuum") || x == "--rotate" && false {
				w.hit(c, ruleLogTampering, high, "journalctl deletes journal entries")
				return
			}
		}
	case "log":
		if hasArg(a, "erase") {
			w.hit(c, ruleLogTampering, high, "log erase deletes the unified log")
		}
	case "history":
		if flagSet(a, 'c') || flagSet(a, 'd') || flagSet(a, 'w') && hasArg(a, "/dev/null") {
			w.hit(c, ruleHistoryTampering, high, "history -c/-d erases command history")
		}
	case "unset":
		for _, x := range a {
			if x == "HISTFILE" || x == "HISTSIZE" || x == "HISTFILESIZE" {
				w.hit(c, ruleHistoryTampering, high, "unset "+x+" stops history from being saved")
				return
			}
		}
	case "set":
		if hasArg(a, "+o") && hasArg(a, "history") {
			w.hit(c, ruleHistoryTampering, high, "set +o history stops history recording")
		}
	case "shopt":
		if hasArg(a, "-u") && hasArg(a, "histappend") {
			w.hit(c, ruleHistoryTampering, med, "shopt -u histappend")
		}
	case "security":
		if len(a) > 0 {
			switch {
			case strings.HasPrefix(a[0], "find-") && strings.Contains(a[0], "password") && !flagSet(a[1:], 'w') && !flagSet(a[1:], 'g'):
				// without -w or -g, find-*-password prints the item's attributes, not its secret
				w.hit(c, ruleKeychainChange, med, "security looks up a keychain item")
			case strings.HasPrefix(a[0], "dump-keychain") || (strings.HasPrefix(a[0], "find-") && strings.Contains(a[0], "password")) || a[0] == "export":
				w.hit(c, ruleCredentialRead, high, "security reads secrets from the keychain")
			case a[0] == "add-trusted-cert" || a[0] == "trust-settings-import":
				w.hit(c, ruleTrustStoreChange, high, "security adds a trusted root certificate")
			case a[0] == "delete-keychain":
				w.hit(c, ruleDestructiveDeleteCredentials, high, "security delete-keychain deletes a whole keychain")
			case strings.HasPrefix(a[0], "delete"):
				w.hit(c, ruleKeychainChange, med, "security deletes keychain items")
			}
		}
	case "update-ca-certificates":
		w.hit(c, ruleTrustStoreChange, med, "updates trusted certificates")
	case "kickstart", "systemsetup":
		if v, ok := optValue(a, "", "-setremotelogin"); ok && strings.EqualFold(v, "off") {
			w.hit(c, ruleRemoteAccessLoss, high, "systemsetup turns remote login (ssh) off")
			return
		}
		if hasArg(a, "-activate") || hasArgPrefixAny(a, "-setremotelogin", "-setremoteappleevents") {
			w.hit(c, ruleRemoteAccessEnable, high, c.name+" enables remote access to this machine")
		}
	case "getent":
		if hasArg(a, "shadow", "gshadow") {
			w.hit(c, ruleCredentialRead, high, "getent reads password hashes")
		}
	case "xattr":
		if flagSet(a, 'd') || flagSet(a, 'c') {
			w.hit(c, ruleQuarantineRemoval, med, "xattr removes file attributes (quarantine)")
		}
	case "ssh-keygen":
		// Generating into an existing key's path asks before overwriting;
		// a "y" on stdin answers for the person.
		if f, ok := optValue(a, "-f", ""); ok && !hasArg(a, "-l", "-y", "-F", "-R", "-H", "-L", "-Q", "-e", "-i", "-s", "-p", "-c") {
			if rf := resolvePath(f, c.cwd); credentialKind(rf) != "" && c.stdin != nil && strings.HasPrefix(strings.TrimSpace(strings.ToLower(c.stdin.text)), "y") {
				w.hit(c, ruleCredentialOverwrite, high, "ssh-keygen overwrites the key "+rf+" (the overwrite prompt is answered from stdin)")
			}
		}
	case "gpg", "gpg2":
		if hasArg(a, "--delete-secret-keys", "--delete-secret-key", "--delete-secret-and-public-key", "--delete-secret-and-public-keys") {
			w.hit(c, ruleDestructiveDeleteCredentials, high, c.name+" deletes secret keys")
		}
	case "eval", "export":
	case "git":
		w.git(c)
	case "gh":
		if len(a) >= 2 {
			switch {
			case a[0] == "repo" && a[1] == "delete":
				w.hit(c, ruleCloudDelete, high, "gh repo delete deletes a repository")
			case a[0] == "release" && (a[1] == "create" || a[1] == "upload" || a[1] == "delete"):
				w.hit(c, rulePublish, med, "gh release publishes or changes a release")
			case a[0] == "pr" && a[1] == "merge":
				w.hit(c, ruleVcsWrite, med, "gh pr merge merges a pull request")
			case a[0] == "secret" || a[0] == "variable":
				w.hit(c, ruleVcsWrite, med, "gh changes repository secrets or variables")
			case a[0] == "api":
				w.ghAPI(c)
			case (a[0] == "gist" && (a[1] == "create" || a[1] == "new" || a[1] == "edit")) || a[0] == "release" && a[1] == "upload":
				w.publishedFiles(c, "gh "+a[0]+" "+a[1])
			}
		}
	case "pip", "npm", "yarn", "pnpm", "bun", "cargo", "go", "gem", "bundle", "brew", "apt", "apt-get", "aptitude", "yum", "dnf",
		"zypper", "pacman", "apk", "conda", "mamba", "pipx", "uv", "uvx", "npx", "bunx", "poetry", "twine":
		w.packages(c)
	case "make":
		if hasArg(a, "install", "uninstall") {
			w.hit(c, rulePackageInstall, med, "make install writes outside the workspace")
		}
	case "docker", "podman", "nerdctl":
		w.docker(c)
	case "docker-compose", "podman-compose":
		c2 := *c
		c2.name, c2.args = "docker", append([]string{"compose"}, a...)
		w.docker(&c2)
	case "kubectl", "oc":
		w.kubectl(c)
	case "helm":
		switch {
		case len(a) > 1 && (a[0] == "uninstall" || a[0] == "delete" || a[0] == "del" || a[0] == "un") && !hasArg(a, "--dry-run"):
			w.hit(c, ruleClusterDelete, high, "helm "+a[0]+" removes a release and its resources from a cluster")
		case len(a) > 0 && (a[0] == "install" || a[0] == "upgrade" || a[0] == "uninstall" || a[0] == "delete" || a[0] == "rollback"):
			w.hit(c, ruleClusterChange, med, "helm "+a[0]+" changes a cluster")
		}
	case "terraform", "tofu":
		switch {
		case hasArg(a, "destroy") || (hasArg(a, "apply") && hasArg(a, "-destroy")):
			w.hit(c, ruleCloudDelete, high, c.name+" destroys infrastructure")
		case hasArg(a, "apply", "import", "taint") || (hasArg(a, "state") && hasArg(a, "rm", "mv", "push")):
			w.hit(c, ruleCloudChange, med, c.name+" changes infrastructure")
		}
	case "aws":
		w.aws(c)
	case "gcloud", "az", "doctl", "heroku", "flyctl":
		for _, x := range a {
			lx := strings.ToLower(x)
			if lx == "delete" || lx == "destroy" || strings.HasPrefix(lx, "apps:destroy") || lx == "purge" {
				w.hit(c, ruleCloudDelete, high, c.name+" deletes cloud resources")
				return
			}
		}
		for _, x := range a {
			switch strings.ToLower(x) {
			case "create", "deploy", "update", "set", "add", "scale", "start", "stop", "restart", "ssh", "scp":
				w.hit(c, ruleCloudChange, med, c.name+" changes cloud resources")
				return
			}
		}
	case "psql", "mysql", "sqlite3", "clickhouse-client", "cockroach", "sqlcmd", "duckdb", "mongo", "redis-cli":
		w.sql(c)
	case "curl", "wget", "nscurl", "aria2c", "lwp-download":
		w.http(c)
	case "http", "https", "xh", "xhs":
		w.httpie(c)
	case "nc", "socat", "telnet":
		w.rawNet(c)
	case "scp", "sftp", "rsync", "ftp", "lftp", "smbclient":
		w.copyRemote(c)
	case "ssh":
		if c.stdin.has(flowFile | flowSecret | flowEnv | flowArchive) {
			w.hit(c, ruleNetworkExfiltration, high, "ssh carries file or archive contents piped into it to another host")
		}
		w.hit(c, ruleRemoteExec, med, "ssh runs commands on another host")
		if hasArg(a, "-R") || hasArgPrefixAny(a, "-R") {
			w.hit(c, rulePortForward, med, "ssh -R exposes a local port on a remote host")
		}
	case "sshpass":
		w.hit(c, rulePasswordOnCommandLine, med, "sshpass passes a password on the command line")
	case "dig", "nslookup", "host":
		for i, x := range a {
			if i < len(c.argData) && c.argData[i] != nil && c.argData[i].flags&(flowEncoded|flowFile|flowSecret|flowEnv|flowStatic|flowCmdOut) != 0 && c.argDyn[i] {
				lvl := med
				if c.argData[i].flags&(flowEncoded|flowFile|flowSecret|flowEnv) != 0 {
					lvl = high
				}
				w.hit(c, ruleDnsExfiltration, lvl, c.name+" puts command output into a DNS query ("+core.TrimArg(x)+")")
				return
			}
		}
	case "ip", "ifconfig", "ifdown", "route", "nmcli", "tailscale", "zerotier-cli", "wg-quick", "wg", "netplan":
		w.reachRules(c)
	case "nmap", "masscan", "zmap", "nikto", "tcpdump", "tshark":
		w.hit(c, ruleNetworkScan, med, c.name+" scans or captures network traffic")
	case "ping":
		if c.inLoop {
			w.hit(c, ruleNetworkScan, med, "ping in a loop sweeps a network")
		}
	case "ngrok", "cloudflared":
		w.hit(c, ruleExposePort, med, c.name+" exposes a local service on the internet")
	case "code":
		if hasArg(a, "tunnel") {
			w.hit(c, ruleRemoteAccessTunnel, high, "code tunnel gives remote access to this machine")
		}
	case "httpd":
		w.hit(c, ruleExposePort, med, "starts a web server")
	case "php":
		if hasArg(a, "-S") {
			w.hit(c, ruleExposePort, med, "php -S starts a web server")
		}
	case "python":
		if v, ok := optValue(a, "-m", ""); ok {
			switch v {
			case "http.server", "SimpleHTTPServer", "smtpd", "pyftpdlib", "uploadserver":
				root := c.cwd
				if d, ok := optValue(a, "-d", "--directory"); ok {
					root = d
				}
				if cls := classify(root, c.cwd, w.env.Workspace); root != "" && (cls == pcHome || cls == pcRoot || cls == pcSystem && isTopLevel(resolvePath(root, c.cwd))) {
					// the home holds ~/.ssh, ~/.aws, shell history: served to
					// whoever reaches the port
					w.hit(c, ruleExposePort, high, "python -m "+v+" serves "+root+" (and the keys and credentials in it) on the network")
				} else {
					w.hit(c, ruleExposePort, med, "python -m "+v+" serves files on the network")
				}
			case "pip":
				c2 := *c
				c2.name = "pip"
				c2.args = a[2:]
				w.packages(&c2)
			}
		}
	case "mail", "sendmail", "mutt":
		if c.stdin.has(flowSecret | flowEnv) {
			w.hit(c, ruleDataUpload, high, c.name+" mails file contents")
		} else {
			w.hit(c, ruleNetworkWrite, med, c.name+" sends mail")
		}
	case "finger", "whois", "cancel":
		w.hit(c, ruleNetworkContact, med, c.name+" contacts a remote host")
	case "lp", "ab", "restic", "rclone", "gsutil", "s3cmd":
		w.hit(c, ruleNetworkWrite, med, c.name+" sends data to another host")
	case "openssl":
		if hasArg(a, "s_client") {
			if c.stdin.has(flowFile|flowSecret|flowEnv) && !c.stdin.onlyPaths("/dev/null", "/dev/zero") {
				w.hit(c, ruleNetworkExfiltration, high, "openssl s_client sends file contents to a remote host")
			} else {
				w.hit(c, ruleRawNetwork, med, "openssl s_client opens a connection")
			}
		}
	case "su":
		if u := suUser(a); u != "" && u != "root" && u != "0" {
			w.hit(c, ruleSwitchUser, med, "su starts a shell as the user "+u)
		} else {
			w.hit(c, ruleSwitchUser, high, "su starts a shell as another user (root unless one is named)")
		}
	case "find":
		roots, _ := findRoots(a)
		if hasArg(a, "-delete") {
			if !findFiltered(a) {
				w.deletion(c, true, roots)
			} else {
				// only what the tests match: the workspace as a whole is not lost
				for i, r := range roots {
					lvl, rule, why := w.deleteTarget(c, r, true, i)
					if rule == ruleDestructiveDeleteWorkspace {
						lvl, rule, why = med, ruleDeleteWorkspace, "find -delete deletes the files it matches in "+r
					}
					w.hit(c, rule, lvl, why)
				}
			}
		}
		for i, x := range a {
			if (x == "-fprint" || x == "-fprintf" || x == "-fprint0" || x == "-fls") && i+1 < len(a) {
				w.judgeWrite(c, a[i+1], false, nil, "find "+x)
			}
		}
	case "grep", "egrep", "fgrep", "rg", "ag", "ack", "git-grep":
		w.credentialSearch(c)
	case "tar", "zip", "7z", "ditto":
		w.archive(c)
	}
	if c.sudo {
		w.sudoSensitiveArgs(c)
	}
	if shells[c.name] {
		w.shellRules(c)
	}
}

// inPlaceTargets returns the files sed -i, perl -i or ruby -i edit: the
// operands, less the script (sed's first operand unless -e/-f gives it;
// the value of perl's and ruby's -e, alone or ending a cluster as in -pe).
func inPlaceTargets(name string, a []string) []string {
	if name == "sed" {
		ops := operands(a)
		if len(ops) > 0 && !hasArgPrefix(a, "-e", "--expression", "-f", "--file") {
			ops = ops[1:]
		}
		return ops
	}
	var out []string
	for i := 0; i < len(a); i++ {
		x := a[i]
		if x == "--" {
			return append(out, a[i+1:]...)
		}
		if strings.HasPrefix(x, "-") && len(x) > 1 {
			if !strings.HasPrefix(x, "-i") && strings.HasSuffix(x, "e") || x == "-e" || x == "-E" {
				i++ // the code
			}
			continue
		}
		out = append(out, x)
	}
	return out
}

// grantsOthers reports whether a chmod mode gives group or other users
// read or write access (644, 0777, go+r, a+rw, o=rw).
func grantsOthers(m string) bool {
	if n, err := strconv.ParseUint(m, 8, 32); err == nil && len(m) >= 3 {
		return n&0o066 != 0
	}
	for _, part := range strings.Split(m, ",") {
		i := strings.IndexAny(part, "+=")
		if i < 0 {
			continue
		}
		who, what := part[:i], part[i+1:]
		if (who == "" || strings.ContainsAny(who, "goa")) && strings.ContainsAny(what, "rw") {
			return true
		}
	}
	return false
}

// toRoot reports whether a chown/chgrp owner spec names root: user root or
// 0, or group root, wheel or 0.
func toRoot(cmd, spec string) bool {
	user, group := spec, ""
	if cmd == "chgrp" {
		user, group = "", spec
	} else if i := strings.IndexAny(spec, ":."); i >= 0 {
		user, group = spec[:i], spec[i+1:]
	}
	return user == "root" || user == "0" || group == "root" || group == "wheel" || group == "0"
}

func hasArgPrefix(args []string, p ...string) bool {
	for _, a := range args {
		for _, x := range p {
			if strings.HasPrefix(a, x) {
				return true
			}
		}
	}
	return false
}

func hasArgPrefixAny(args []string, p ...string) bool { return hasArgPrefix(args, p...) }

func isTopLevel(p string) bool {
	return strings.Count(strings.Trim(p, "/"), "/") == 0 || p == "/var/lib" || p == "/usr/lib" || p == "/usr/bin"
}

func setuidMode(m string) bool {
	if strings.ContainsAny(m, "ugoa+=") {
		return strings.Contains(m, "s")
	}
	if n, err := strconv.ParseUint(m, 8, 32); err == nil && len(m) >= 4 {
		return n&0o4000 != 0
	}
	return false
}

func deletionTargets(c *command) []string {
	return operands(c.args)
}

// deletion judges rm and friends by their targets.
func (w *walker) deletion(c *command, recursive bool, targets []string) {
	noPreserve := hasArg(c.args, "--no-preserve-root")
	if len(targets) == 0 {
		return
	}
	best := 0
	for i, t := range targets {
		lvl, rule, why := w.deleteTarget(c, t, recursive, i)
		if noPreserve {
			lvl, rule, why = high, ruleDestructiveDeleteRoot, "rm --no-preserve-root"
		}
		if lvl == high || best == 0 {
			w.hit(c, rule, lvl, why)
			if lvl == high {
				return
			}
			best = 1
		}
	}
}

func (w *walker) deleteTarget(c *command, t string, recursive bool, i int) (lvl events.Risk, rule *ShellRule, why string) {
	dynArg := false
	for j, a := range c.args {
		if a == t && j < len(c.argDyn) && c.argDyn[j] {
			dynArg = true
		}
	}
	if !dynArg && strings.HasPrefix(t, "$") {
		t = "./" + t // rm -rf '$HOME': a directory literally named $HOME
	}
	rt := resolvePath(t, c.cwd)
	cls := classify(t, c.cwd, w.env.Workspace)
	verb := c.name
	if recursive {
		verb += " -r"
	}
	switch cls {
	case pcRoot:
		return high, ruleDestructiveDeleteRoot, verb + " deletes " + rt + " (the filesystem root)"
	case pcHome:
		return high, ruleDestructiveDeleteHome, verb + " deletes the home directory " + t
	case pcSystem:
		if tempRoot(rt) {
			// all of /tmp: other programs' scratch files, nothing kept
			return med, ruleDeleteTemp, verb + " deletes everything in the temporary directory " + rt
		}
		return high, ruleDestructiveDeleteSystem, verb + " deletes the system path " + rt
	case pcLog:
		return high, ruleLogTampering, verb + " deletes the log " + rt
	case pcDevice:
		return high, ruleDestructiveDeleteSystem, verb + " deletes the device " + rt
	case pcHomeData:
		if historyFile(rt) {
			return high, ruleHistoryTampering, verb + " deletes " + rt
		}
		if credentialKind(rt) != "" || remoteAccessFile(rt) {
			return high, ruleDestructiveDeleteCredentials, verb + " deletes credentials " + rt
		}
		if recursive || strings.ContainsAny(rt, "*?") {
			return high, ruleDestructiveDeleteUserData, verb + " deletes user data " + rt
		}
		return med, ruleDeleteUserFile, verb + " deletes " + rt
	case pcParent:
		if recursive {
			return high, ruleDestructiveDeleteOutsideWorkspace, verb + " deletes " + t + ", outside the workspace"
		}
		return med, ruleDeleteOutsideWorkspace, verb + " deletes " + t
	case pcOther:
		if recursive {
			return high, ruleDestructiveDeleteOutsideWorkspace, verb + " deletes " + rt + ", outside the workspace"
		}
		return med, ruleDeleteOutsideWorkspace, verb + " deletes " + rt
	case pcCache:
		return med, ruleDeleteCache, verb + " deletes the cache " + rt
	case pcTemp:
		return med, ruleDeleteTemp, verb + " deletes " + rt
	case pcDynamic:
		if recursive && (strings.HasPrefix(t, "$") && strings.Contains(t, "/") && !strings.Contains(t[:strings.IndexByte(t, '/')], "(")) {
			return high, ruleDeleteUnsetVariableRoot, verb + " deletes " + t + ": if the variable is empty this is a path under /"
		}
		return med, ruleDeleteUnresolved, verb + " deletes " + t + ", which could not be resolved"
	}
	if dynArg && recursive && strings.HasPrefix(t, "$") {
		return med, ruleDeleteUnresolved, verb + " deletes " + t
	}
	if historyFile(rt) {
		return high, ruleHistoryTampering, verb + " deletes " + rt
	}
	if recursive && w.wholeWorkspace(c, rt) {
		return high, ruleDestructiveDeleteWorkspace, verb + " deletes " + t + ": the whole workspace, uncommitted and untracked work included"
	}
	if recursive && (rt == ".git" || strings.HasSuffix(rt, "/.git")) {
		return high, ruleDestructiveDeleteWorkspace, verb + " deletes the repository " + t + ": history, branches and stashes not pushed anywhere are lost"
	}
	return med, ruleDeleteWorkspace, verb + " deletes " + t + " in the workspace"
}

// findFiltered reports whether find's expression has a test that selects
// some files (-name, -type, -mtime …) rather than everything under a root.
func findFiltered(a []string) bool {
	for _, x := range a {
		if len(x) < 2 || x[0] != '-' {
			continue
		}
		switch x {
		case "-delete", "-depth", "-d", "-mindepth", "-maxdepth", "-xdev", "-mount", "-L", "-P", "-H", "-print", "-print0", "-ignore_readdir_race", "-noleaf", "-true":
			continue
		case "-exec", "-execdir", "-ok", "-okdir":
			return false // an action: the tests are before it
		}
		return true
	}
	return false
}

// wholeWorkspace reports whether rp, resolved in c's directory, is the
// workspace itself or everything in it (., *, ./*, the workspace's path):
// the starting directory when no cd moved away from it.
func (w *walker) wholeWorkspace(c *command, rp string) bool {
	if ws := w.env.Workspace; ws != "" && usableWorkspace(ws) {
		ws = path.Clean(ws)
		if rp == ws || strings.HasPrefix(rp, ws+"/") && isGlobOnly(strings.TrimPrefix(rp, ws+"/")) {
			return true
		}
	}
	if c.cwd != "" && c.cwd != "." {
		return false
	}
	return rp == "." || isGlobOnly(strings.TrimPrefix(rp, "./"))
}

// tempRoot reports whether rp is a temporary directory itself or a glob of
// everything in it (/tmp, /var/tmp/*, /private/tmp).
func tempRoot(rp string) bool {
	for _, t := range []string{"/tmp", "/var/tmp", "/private/tmp", "/private/var/tmp", "/dev/shm"} {
		if rp == t || rp == t+"/" || strings.HasPrefix(rp, t+"/") && isGlobOnly(strings.TrimPrefix(rp, t+"/")) {
			return true
		}
	}
	return false
}

func (w *walker) chmod(c *command) {
	a := c.args
	rec := flagSet(a, 'R', "--recursive")
	ops := operands(a)
	var mode string
	if len(ops) > 0 {
		mode = ops[0]
		ops = ops[1:]
	}
	for _, x := range a {
		if strings.HasPrefix(x, "-") && len(x) > 1 && strings.Trim(x[1:], "rwxXstugoa") == "" && strings.ContainsAny(x[1:], "rwx") && x != "-R" {
			mode = x
		}
	}
	if setuidMode(mode) {
		w.hit(c, ruleSetuid, high, "chmod "+mode+" sets the setuid/setgid bit")
		return
	}
	if grantsOthers(mode) {
		for _, t := range ops {
			if rt := resolvePath(t, c.cwd); credentialKind(rt) != "" && credentialKind(rt) != "system password hashes" {
				w.hit(c, ruleCredentialExposure, high, "chmod "+mode+" lets other users read or change "+rt+" ("+credentialKind(rt)+")")
				return
			}
		}
	}
	worldWritable := mode == "777" || mode == "0777" || mode == "666" || mode == "0666" || strings.Contains(mode, "o+w") || strings.Contains(mode, "a+w") || strings.Contains(mode, "a+rwx") || mode == "+w" || strings.HasSuffix(mode, "7") && len(mode) >= 3 && mode[len(mode)-1] == '7'
	for _, t := range ops {
		cls := classify(t, c.cwd, w.env.Workspace)
		rt := resolvePath(t, c.cwd)
		switch {
		case cls == pcRoot:
			w.hit(c, rulePermissionsSystem, high, "chmod changes permissions of "+rt)
			return
		case (cls == pcSystem || cls == pcHome) && (rec && isTopLevel(rt) || worldWritable || mode == "000" || mode == "0"):
			w.hit(c, rulePermissionsSystem, high, "chmod "+mode+" on "+rt)
			return
		case cls == pcHome && rec:
			w.hit(c, rulePermissionsSystem, high, "chmod -R on the home directory")
			return
		case credentialKind(rt) == "system password hashes" || strings.HasPrefix(rt, "/etc/sudoers"):
			w.hit(c, rulePermissionsSystem, high, "chmod on "+rt)
			return
		}
	}
	if worldWritable {
		w.hit(c, ruleWorldWritable, med, "chmod "+mode+" makes files writable by everyone")
		return
	}
	w.hit(c, rulePermissionsChange, med, "chmod changes permissions")
}

func (w *walker) kill(c *command) {
	a := c.args
	if hasArg(a, "-l", "-L") {
		return
	}
	sig := ""
	var targets []string
	for i, x := range a {
		if x == "-s" || x == "-n" {
			continue
		}
		if i > 0 && (a[i-1] == "-s" || a[i-1] == "-n") {
			sig = x
			continue
		}
		if strings.HasPrefix(x, "-") && len(x) > 1 && x != "-1" && x != "--" {
			sig = x[1:]
			continue
		}
		if x != "--" {
			targets = append(targets, x)
		}
	}
	if sig == "0" {
		return
	}
	for _, t := range targets {
		if t == "-1" || t == "1" {
			w.hit(c, ruleKillAll, high, "kill "+t+" kills init or every process")
			return
		}
	}
	w.hit(c, ruleProcessKill, med, "kill stops processes")
}

func (w *walker) services(c *command) {
	a := c.args
	var verb, unit string
	if c.name == "service" {
		if len(a) >= 2 {
			unit, verb = a[0], a[1]
		} else if len(a) == 1 && a[0] == "--status-all" {
			return
		}
	} else {
		ops := operands(a)
		if len(ops) > 0 {
			verb = ops[0]
		}
		if len(ops) > 1 {
			unit = strings.Join(ops[1:], " ")
		}
	}
	switch verb {
	case "", "status", "list-units", "list-unit-files", "list-timers", "show", "cat", "is-active", "is-enabled", "is-failed", "help", "-e", "--status-all", "list-sockets", "list-dependencies", "get-default":
		return
	case "poweroff", "reboot", "halt", "kexec", "emergency", "rescue", "suspend", "hibernate", "soft-reboot":
		w.hit(c, ruleShutdown, high, c.name+" "+verb+" stops or restarts the machine")
		return
	}
	sec, reach := false, false
	for _, u := range strings.Fields(unit) {
		if isSecurityService(u) {
			sec = true
		}
		if reachService(u) {
			reach = true
		}
	}
	switch verb {
	case "stop", "disable", "mask", "kill":
		if sec {
			w.hit(c, ruleDefenseEvasion, high, c.name+" "+verb+" "+unit+" turns a security or logging service off")
			return
		}
		if reach && !hasArg(a, "--user") {
			w.hit(c, ruleRemoteAccessLoss, high, c.name+" "+verb+" "+unit+" stops what keeps the machine reachable (ssh, network, VPN)")
			return
		}
		w.hit(c, ruleServiceStop, med, c.name+" "+verb+" "+unit)
	default:
		w.hit(c, ruleServiceChange, med, c.name+" "+verb+" "+unit)
	}
}

var protectedBranches = core.LazySet("main", "master", "trunk", "production", "prod", "release", "stable", "develop", "live", "gh-pages")

func protectedRef(r string) bool {
	r = strings.TrimPrefix(r, "+")
	if i := strings.LastIndexByte(r, ':'); i >= 0 {
		r = r[i+1:]
	}
	r = strings.TrimPrefix(r, "refs/heads/")
	return protectedBranches()[r] || strings.HasPrefix(r, "release/") || strings.HasPrefix(r, "release-")
}

// gitLongOptNames are the long options of git subcommands whose
// abbreviations the git rules must recognise: git accepts any unambiguous
// prefix of a long option (`reset --har`, `clean --forc`).
var gitLongOptNames = map[string][]string{
	"push":     {"force", "force-with-lease", "force-if-includes", "mirror", "delete", "prune", "dry-run", "all", "tags", "set-upstream", "no-verify", "atomic", "follow-tags", "porcelain", "quiet", "verbose", "progress", "repo", "recurse-submodules", "signed", "thin", "no-thin", "ipv4", "ipv6", "push-option", "receive-pack", "exec"},
	"reset":    {"hard", "soft", "mixed", "merge", "keep", "quiet", "patch", "intent-to-add", "recurse-submodules", "no-recurse-submodules", "pathspec-from-file", "pathspec-file-nul", "no-refresh", "refresh"},
	"clean":    {"force", "dry-run", "quiet", "interactive", "exclude"},
	"branch":   {"delete", "force", "move", "copy", "list", "all", "remotes", "contains", "merged", "no-merged", "set-upstream-to", "unset-upstream", "show-current", "track", "no-track", "verbose", "quiet", "sort", "format", "points-at", "column", "edit-description", "create-reflog", "recurse-submodules", "ignore-case", "omit-empty", "abbrev", "no-abbrev", "color", "no-color", "no-contains"},
	"checkout": {"force", "quiet", "progress", "ours", "theirs", "track", "no-track", "detach", "orphan", "merge", "conflict", "patch", "ignore-skip-worktree-bits", "ignore-other-worktrees", "recurse-submodules", "overlay", "no-overlay", "pathspec-from-file", "guess", "no-guess", "overwrite-ignore"},
	"worktree": {"force", "detach", "checkout", "lock", "reason", "orphan", "track", "guess-remote", "quiet", "verbose", "expire", "dry-run", "porcelain"},
	"stash":    {"all", "include-untracked", "keep-index", "patch", "staged", "quiet", "message", "pathspec-from-file"},
	"restore":  {"source", "staged", "worktree", "ours", "theirs", "merge", "conflict", "patch", "overlay", "no-overlay", "quiet", "progress", "recurse-submodules", "ignore-unmerged", "ignore-skip-worktree-bits", "pathspec-from-file"},
}

// gitLongOpts returns args with every abbreviated long option of the git
// subcommand sub spelled out: a prefix that only one option starts with
// is that option; a prefix several options start with is the shortest of
// them when the others extend it (`--forc`: --force).
func gitLongOpts(sub string, args []string) []string {
	names := gitLongOptNames[sub]
	if names == nil {
		return args
	}
	long := false
	for _, x := range args {
		if len(x) >= 4 && strings.HasPrefix(x, "--") {
			long = true
		}
	}
	if !long {
		return args
	}
	var out []string
	for i, x := range args {
		if x == "--" {
			return append(out, args[i:]...)
		}
		if len(x) < 4 || !strings.HasPrefix(x, "--") {
			out = append(out, x)
			continue
		}
		name, val, hasVal := strings.Cut(x[2:], "=")
		best, exact := "", false
		for _, n := range names {
			if n == name {
				exact = true
				break
			}
			if strings.HasPrefix(n, name) && (best == "" || len(n) < len(best) && strings.HasPrefix(best, n)) {
				best = n
			} else if strings.HasPrefix(n, name) && !strings.HasPrefix(n, best) {
				best = "\x00" // ambiguous: git refuses it
			}
		}
		if exact || best == "" || best == "\x00" {
			out = append(out, x)
			continue
		}
		if hasVal {
			out = append(out, "--"+best+"="+val)
		} else {
			out = append(out, "--"+best)
		}
	}
	return out
}

func (w *walker) git(c *command) {
	w.gitArgs(c, c.args, 0)
}

// gitArgs judges git run with arguments a; an alias set with -c that names
// other git arguments (`-c alias.x='reset --hard' x`) is judged as them.
func (w *walker) gitArgs(c *command, a []string, depth int) {
	i := 0
	aliases := map[string]string{}
	for i < len(a) && strings.HasPrefix(a[i], "-") {
		if a[i] == "-c" && i+1 < len(a) {
			if k, v, ok := strings.Cut(a[i+1], "="); ok && strings.HasPrefix(strings.ToLower(k), "alias.") && !strings.HasPrefix(strings.TrimSpace(v), "!") {
				aliases[strings.ToLower(k[len("alias."):])] = v
			}
		}
		if a[i] == "-c" || a[i] == "-C" || a[i] == "--git-dir" || a[i] == "--work-tree" {
			i++
		}
		i++
	}
	if i >= len(a) {
		return
	}
	sub, rest := a[i], gitLongOpts(a[i], a[i+1:])
	if v, ok := aliases[strings.ToLower(sub)]; ok && depth < 4 {
		w.gitArgs(c, append(strings.Fields(v), rest...), depth+1)
		return
	}
	dry := flagSet(rest, 'n', "--dry-run")
	switch sub {
	case "push":
		if dry {
			return
		}
		// --force-with-lease (and --force-if-includes) refuse to overwrite
		// commits the pusher has not seen: what they drop was seen first.
		force := flagSet(rest, 'f', "--force") || hasArg(rest, "--mirror")
		lease := flagSet(rest, 0, "--force-with-lease", "--force-if-includes")
		del := flagSet(rest, 'd', "--delete")
		prune := hasArg(rest, "--prune")
		ops := operands(rest)
		var refs []string
		if len(ops) > 1 {
			refs = ops[1:]
		}
		for _, r := range refs {
			if strings.HasPrefix(r, "+") {
				force = true
			}
			if strings.HasPrefix(r, ":") {
				del = true
			}
		}
		prot := false
		for _, r := range refs {
			if protectedRef(r) {
				prot = true
			}
		}
		switch {
		case hasArg(rest, "--mirror"):
			w.hit(c, ruleGitPushMirror, high, "git push --mirror overwrites every branch on the remote")
		case (force || del) && prot:
			w.hit(c, ruleGitForcePushProtected, high, "git push rewrites or deletes a protected branch ("+strings.Join(refs, " ")+")")
		case force:
			w.hit(c, ruleGitForcePush, high, "git push --force replaces the remote branch: commits pushed by others are dropped from it")
		case lease:
			w.hit(c, ruleGitForcePush, med, "git push --force-with-lease rewrites remote history it has seen")
		case prune:
			w.hit(c, ruleGitPushMirror, high, "git push --prune deletes every remote branch the refspec matches that has no local counterpart")
		case del:
			w.hit(c, ruleGitDeleteRemoteRef, med, "git push deletes a remote branch or tag")
		}
	// Uncommitted changes and untracked files have no other copy: git
	// cannot give back what these discard.
	case "reset":
		switch {
		case hasArg(rest, "--hard"):
			w.hit(c, ruleGitDiscardChanges, high, "git reset --hard discards uncommitted work, which has no other copy")
		case hasArg(rest, "--merge", "--keep"):
			w.hit(c, ruleGitDiscardChanges, med, "git reset --merge/--keep moves the branch (it keeps local changes)")
		}
	case "clean":
		switch {
		case dry || !flagSet(rest, 'f', "--force"):
		case flagSet(rest, 'X') && !flagSet(rest, 'x'):
			// -X: only what .gitignore names (build output, caches)
			w.hit(c, ruleGitDiscardChanges, med, "git clean -X deletes the ignored files (build output the build makes again)")
		default:
			w.hit(c, ruleGitDiscardChanges, high, "git clean deletes untracked files, which git has no copy of")
		}
	case "checkout":
		if hasArg(rest, "--") && len(operands(rest)) > 0 || hasArg(rest, ".") || flagSet(rest, 'f', "--force") {
			w.hit(c, ruleGitDiscardChanges, high, "git checkout overwrites uncommitted changes to the paths it names")
		}
	case "restore":
		staged, worktree := flagSet(rest, 'S', "--staged"), flagSet(rest, 'W', "--worktree")
		if (!staged || worktree) && len(operands(rest)) > 0 {
			w.hit(c, ruleGitDiscardChanges, high, "git restore overwrites uncommitted changes in the working tree")
		}
	case "worktree":
		if len(rest) > 0 && rest[0] == "remove" && flagSet(rest[1:], 'f', "--force") {
			w.hit(c, ruleGitDiscardChanges, high, "git worktree remove --force deletes a worktree with its uncommitted changes")
		}
	case "branch":
		switch del := hasArg(rest, "--delete") || flagSet(rest, 'd'); {
		case flagSet(rest, 'D') || del && flagSet(rest, 'f', "--force"):
			// unmerged commits are left reachable only from the reflog
			w.hit(c, ruleGitBranchDelete, high, "git branch -D deletes a branch even when its commits are merged nowhere")
		case del:
			w.hit(c, ruleGitBranchDelete, med, "git branch -d deletes a merged branch")
		}
	case "tag":
		if flagSet(rest, 'd', "--delete") {
			w.hit(c, ruleGitTagDelete, med, "git tag -d deletes a tag")
		}
	case "stash":
		if hasArg(rest, "drop", "clear") {
			w.hit(c, ruleGitDiscardChanges, high, "git stash drop/clear deletes stashed work")
		}
	case "rebase":
		if !hasArg(rest, "--abort", "--continue", "--skip", "--quit") {
			w.hit(c, ruleGitHistoryRewrite, med, "git rebase rewrites history")
		}
	case "commit":
		if hasArg(rest, "--amend") {
			w.hit(c, ruleGitHistoryRewrite, med, "git commit --amend rewrites the last commit")
		}
	case "filter-repo":
		if hasArg(rest, "--force", "-f") && !hasArg(rest, "--analyze", "--dry-run") {
			w.hit(c, ruleGitHistoryDiscard, high, "git filter-repo --force rewrites history in a repository that is not a fresh clone, keeps no copy of the old history and expires the reflog")
		} else {
			w.hit(c, ruleGitHistoryRewrite, med, "git "+sub+" rewrites history")
		}
	case "filter-branch", "replace":
		w.hit(c, ruleGitHistoryRewrite, med, "git "+sub+" rewrites history")
	case "reflog":
		switch {
		case hasArg(rest, "expire") && hasArgPrefix(rest, "--expire=now", "--expire=all", "--expire=0", "--expire-unreachable=now", "--expire-unreachable=all", "--expire-unreachable=0"):
			w.hit(c, ruleGitReflogPurge, high, "git reflog expire now drops the only record of commits no branch holds (what reset, rebase or a deleted branch left behind); gc then deletes them for good")
		case hasArg(rest, "expire", "delete"):
			w.hit(c, ruleGitHistoryRewrite, med, "git reflog expire drops recovery points")
		}
	case "gc":
		if hasArgPrefix(rest, "--prune=now", "--prune=all") {
			w.hit(c, ruleGitHistoryRewrite, med, "git gc --prune=now deletes unreachable commits")
		}
	case "update-ref":
		if flagSet(rest, 'd') {
			ops := operands(rest)
			if len(ops) > 0 && (strings.HasPrefix(ops[0], "refs/heads/") || ops[0] == "HEAD") {
				// no merged check at all: as branch -D
				w.hit(c, ruleGitBranchDelete, high, "git update-ref -d deletes the branch "+ops[0]+" whether or not its commits are merged anywhere")
			} else {
				w.hit(c, ruleGitBranchDelete, med, "git update-ref -d deletes a ref")
			}
		}
	case "clone":
		w.hit(c, ruleNetworkDownload, med, "git clone downloads a repository")
	case "config":
		if hasArg(rest, "--global", "--system") && len(operands(rest)) >= 2 {
			w.hit(c, ruleGitConfigGlobal, med, "git config changes user-wide settings")
		}
		ops := operands(rest)
		if len(ops) >= 2 && strings.EqualFold(ops[0], "core.hooksPath") {
			w.hit(c, ruleGitHooksDisabled, med, "git config core.hooksPath redirects or disables hooks")
		}
		if len(ops) >= 2 && strings.EqualFold(ops[0], "credential.helper") && ops[1] == "store" {
			w.hit(c, rulePlaintextCredentials, med, "git credential.helper store keeps passwords in plain text")
		}
	case "apply", "am":
		if hasArg(rest, "--unsafe-paths") {
			if d, ok := optValue(rest, "", "--directory"); ok && (d == "/" || classify(d, c.cwd, "") == pcSystem) {
				w.hit(c, ruleSystemWrite, high, "git apply --unsafe-paths writes a patch into "+d)
				return
			}
			w.hit(c, ruleSystemWrite, med, "git apply --unsafe-paths writes outside the repository")
		}
	case "submodule":
		switch {
		case len(rest) > 1 && rest[0] == "foreach":
			code := rest[1:]
			if len(code) > 0 && code[0] == "--recursive" {
				code = code[1:]
			}
			if len(code) > 0 {
				w.reparse(strings.Join(code, " "), "git submodule foreach", nil, nil, c.sudo)
			}
		case len(rest) > 0 && rest[0] == "deinit" && flagSet(rest[1:], 'f', "--force"):
			w.hit(c, ruleGitDiscardChanges, high, "git submodule deinit --force deletes submodule working trees with their local changes")
		}
	case "switch":
		if hasArg(rest, "--discard-changes") || flagSet(rest, 'f', "--force") {
			w.hit(c, ruleGitDiscardChanges, high, "git switch --discard-changes throws away uncommitted changes")
		}
	case "rm":
		if flagSet(rest, 'r') && !hasArg(rest, "--cached") {
			w.hit(c, ruleDeleteWorkspace, med, "git rm -r deletes files")
		}
	}
}

func (w *walker) packages(c *command) {
	a := c.args
	first := ""
	if ops := operandsSkipping(a, pkgValueOpts()); len(ops) > 0 {
		first = ops[0]
	}
	if u := untrustedSource(a); u != "" {
		w.hit(c, rulePackageUntrustedSource, high, c.name+" installs code from "+u+", a bare IP address or plain HTTP: no name or certificate vouches for what it serves")
	}
	switch c.name {
	case "npx", "bunx", "uvx":
		w.hit(c, rulePackageInstall, med, c.name+" downloads and runs a package")
		return
	case "twine":
		if first == "upload" {
			w.hit(c, rulePublish, med, "twine upload publishes a package")
		}
		return
	case "pipx":
		if first == "install" || first == "run" || first == "inject" || first == "upgrade" {
			w.hit(c, rulePackageInstall, med, "pipx installs or runs a package")
		}
		return
	case "uv":
		if first == "pip" && len(a) > 1 && (a[1] == "install" || a[1] == "sync") || first == "add" || first == "tool" || first == "sync" {
			w.hit(c, rulePackageInstall, med, "uv installs packages")
		}
		return
	case "go":
		if first == "install" || first == "get" {
			w.hit(c, rulePackageInstall, med, "go "+first+" downloads and installs code")
		}
		return
	case "cargo":
		if first == "install" || first == "add" {
			w.hit(c, rulePackageInstall, med, "cargo "+first+" installs packages")
		}
		if first == "publish" {
			w.hit(c, rulePublish, med, "cargo publish publishes a crate")
		}
		if first == "yank" && !hasArg(a, "--undo") {
			w.hit(c, ruleRegistryDelete, high, "cargo yank withdraws a published crate version from the registry")
		}
		return
	case "bundle":
		if first == "install" || first == "update" || first == "add" || first == "" {
			w.hit(c, rulePackageInstall, med, "bundle installs gems")
		}
		return
	}
	switch first {
	case "install", "i", "add", "ci", "update", "upgrade", "up", "remove", "uninstall", "rm", "purge", "autoremove", "dist-upgrade",
		"full-upgrade", "reinstall", "link", "exec", "dlx", "create", "tap", "-S", "-Syu", "-R", "del", "global", "x", "download":
		w.hit(c, rulePackageInstall, med, c.name+" "+first+" installs, removes or upgrades packages")
	case "publish", "push", "release":
		w.hit(c, rulePublish, med, c.name+" "+first+" publishes a package")
	case "npm":
		// yarn npm unpublish (yarn 2+ speaks to the registry through `yarn npm`)
		if ops := operandsSkipping(a, pkgValueOpts()); len(ops) > 1 && c.name == "yarn" && ops[1] == "unpublish" && !hasArg(a, "--dry-run") {
			w.hit(c, ruleRegistryDelete, high, "yarn npm unpublish removes a published package version from the registry")
		}
	case "unpublish", "yank":
		if hasArg(a, "--undo", "--dry-run") {
			break
		}
		// a registry never takes the same name and version again; a yanked
		// version stops resolving for everyone who depends on it
		w.hit(c, ruleRegistryDelete, high, c.name+" "+first+" removes a published package version from the registry")
	case "pkg", "set-script":
		// npm pkg set scripts.postinstall="…", npm set-script NAME "…": the
		// script is judged as the command it becomes; an install script
		// runs on every install of the package
		ops := operandsSkipping(a, pkgValueOpts())
		for i, o := range ops {
			name, val, ok := "", "", false
			if first == "set-script" && i == 1 && len(ops) > 2 {
				name, val, ok = o, ops[2], true
			} else if k, v, eq := strings.Cut(o, "="); eq && strings.HasPrefix(k, "scripts.") {
				name, val, ok = strings.TrimPrefix(k, "scripts."), v, true
			}
			if !ok {
				continue
			}
			if name == "install" || name == "preinstall" || name == "postinstall" || name == "prepare" {
				w.hit(c, rulePackageConfig, med, c.name+" sets the install script "+name+", which runs on every install: "+core.TrimArg(val))
			} else {
				w.hit(c, rulePackageConfig, med, c.name+" sets the script "+name+": "+core.TrimArg(val))
			}
			w.reparse(val, c.name+" script "+name, nil, nil, false)
		}
	case "config", "set":
		if hasArg(a, "set") || first == "set" {
			w.hit(c, rulePackageConfig, med, c.name+" config changes package manager settings")
		}
	case "":
		if c.name == "yarn" || c.name == "pnpm" || c.name == "bun" {
			w.hit(c, rulePackageInstall, med, c.name+" installs dependencies")
		}
		if c.name == "pacman" && (flagSet(a, 'S') || flagSet(a, 'R') || flagSet(a, 'U')) {
			w.hit(c, rulePackageInstall, med, "pacman changes packages")
		}
	}
}

func (w *walker) docker(c *command) {
	a := c.args
	if k := dockerGlobalEnd(a); k > 0 {
		// global options (-H ssh://prod, --context prod) before the
		// subcommand: judged as the subcommand they lead to
		c2 := *c
		c2.args = a[k:]
		if len(c.argDyn) >= k {
			c2.argDyn = c.argDyn[k:]
		}
		if len(c.argData) >= k {
			c2.argData = c.argData[k:]
		}
		w.docker(&c2)
		return
	}
	if len(a) == 0 {
		return
	}
	sub := a[0]
	if sub == "container" || sub == "image" || sub == "volume" || sub == "network" || sub == "system" || sub == "compose" || sub == "builder" || sub == "buildx" || sub == "stack" || sub == "swarm" {
		if len(a) > 1 {
			sub = sub + " " + a[1]
		}
	}
	switch {
	case sub == "run" || sub == "create" || sub == "container run":
		hostRoot := false
		for i, x := range a {
			v := ""
			if (x == "-v" || x == "--volume" || x == "--mount") && i+1 < len(a) {
				v = a[i+1]
			} else if strings.HasPrefix(x, "--volume=") || strings.HasPrefix(x, "--mount=") {
				v = x[strings.IndexByte(x, '=')+1:]
			} else if strings.HasPrefix(x, "-v") && len(x) > 2 {
				v = x[2:]
			}
			if v == "" {
				continue
			}
			src := v
			if strings.HasPrefix(v, "type=") || strings.Contains(v, "source=") || strings.Contains(v, "src=") {
				for _, p := range strings.Split(v, ",") {
					if strings.HasPrefix(p, "source=") || strings.HasPrefix(p, "src=") {
						src = p[strings.IndexByte(p, '=')+1:]
					}
				}
			} else if i := strings.IndexByte(v, ':'); i >= 0 {
				src = v[:i]
			}
			switch {
			case src == "/" || src == "/etc" || src == "/root" || src == "~" || src == "/home":
				hostRoot = true
			case strings.Contains(src, "docker.sock"):
				w.hit(c, ruleContainerPrivileged, med, "docker mounts the Docker socket (root on the host)")
			}
		}
		if hostRoot {
			w.hit(c, ruleContainerHostMount, high, "docker mounts the host's root, /etc or home into a container")
		}
		if hasArg(a, "--privileged") || hasArgPrefix(a, "--pid=host", "--cap-add=ALL", "--cap-add=SYS_ADMIN") || (hasArg(a, "--pid") && hasArg(a, "host")) {
			w.hit(c, ruleContainerPrivileged, med, "docker runs a privileged container")
		}
		if hasArgPrefix(a, "--network=host", "--net=host") || (hasArg(a, "--network", "--net") && hasArg(a, "host")) {
			w.hit(c, ruleContainerHostNetwork, med, "docker shares the host network")
		}
	case sub == "system prune" || sub == "container prune":
		switch {
		case hasArg(a, "--volumes"):
			w.hit(c, ruleContainerDataDelete, high, c.name+" system prune --volumes deletes all unused data, including volumes")
		case flagSet(a, 'f', "--force"):
			w.hit(c, ruleContainerDataDelete, high, c.name+" "+sub+" --force deletes every stopped container, and what was written in it, without asking")
		default:
			w.hit(c, ruleContainerDelete, med, "docker "+sub+" deletes unused containers and images (it asks first)")
		}
	case sub == "stack rm" || sub == "stack remove" || sub == "stack down":
		w.hit(c, ruleClusterDelete, high, c.name+" "+sub+" removes a deployed stack's services, networks, secrets and configs from the swarm")
	case sub == "swarm leave" && flagSet(a, 'f', "--force"):
		w.hit(c, ruleClusterDelete, high, c.name+" swarm leave --force takes the node out of the swarm even as its last manager, dropping the swarm's state")
	case sub == "volume rm" || sub == "volume prune" || sub == "compose down" && flagSet(a, 'v', "--volumes"):
		w.hit(c, ruleContainerDataDelete, high, c.name+" "+sub+" deletes volumes and the data in them")
	case strings.HasSuffix(sub, "prune") || sub == "rm" || sub == "rmi" || sub == "kill" || sub == "stop" || sub == "volume rm" || sub == "container rm" || sub == "image rm" || sub == "compose down" || sub == "network rm":
		w.hit(c, ruleContainerDelete, med, "docker "+sub+" removes or stops containers or data")
	case sub == "push" || sub == "image push" || sub == "buildx build" && hasArg(a, "--push"):
		w.hit(c, rulePublish, med, "docker push publishes an image")
	case sub == "exec" || sub == "container exec":
		w.hit(c, ruleRemoteExec, med, "docker exec runs commands inside a running container")
	case sub == "login":
		w.hit(c, ruleRegistryLogin, med, "docker login stores registry credentials")
	}
}

func (w *walker) kubectl(c *command) {
	a := c.args
	ops := operandsSkipping(a, kubectlValueOpts())
	if len(ops) == 0 {
		return
	}
	verb := ops[0]
	switch verb {
	case "delete":
		kinds := ""
		if len(ops) > 1 {
			kinds = strings.ToLower(ops[1])
		}
		dry := hasArg(a, "--dry-run") || hasArgPrefix(a, "--dry-run=") && !hasArg(a, "--dry-run=none")
		if dry {
			// --dry-run=client or =server: the request is validated (by the
			// server for =server) and nothing is removed
			w.hit(c, ruleClusterChange, med, c.name+" delete --dry-run shows what it would remove")
		} else if hasArg(a, "--all", "-A", "--all-namespaces") || strings.HasPrefix(kinds, "namespace") || kinds == "ns" || strings.HasPrefix(kinds, "node") || kinds == "no" || strings.HasPrefix(kinds, "pv") || strings.HasPrefix(kinds, "persistentvolume") || strings.HasPrefix(kinds, "crd") || strings.HasPrefix(kinds, "customresourcedefinition") || strings.HasPrefix(kinds, "clusterrole") {
			w.hit(c, ruleClusterDelete, high, c.name+" delete removes cluster-wide resources")
		} else if hasArg(a, "--dry-run") || hasArgPrefix(a, "--dry-run=") || kinds == "po" || strings.HasPrefix(kinds, "pod") || kinds == "" && !hasArg(a, "-f", "--filename", "-k", "--kustomize") {
			// pods are recreated by their controllers
			w.hit(c, ruleClusterChange, med, c.name+" delete removes resources")
		} else {
			w.hit(c, ruleClusterDelete, high, c.name+" delete removes "+kinds+" from the cluster")
		}
	case "apply", "create", "replace", "patch", "scale", "rollout", "edit", "set", "label", "annotate", "drain", "cordon", "uncordon", "taint", "autoscale", "expose", "run", "cp":
		if d := kubectlForced(verb, a); d != "" {
			w.hit(c, ruleClusterForce, high, c.name+" "+verb+" "+d)
			return
		}
		w.hit(c, ruleClusterChange, med, c.name+" "+verb+" changes the cluster")
	case "proxy":
		if v, ok := optValue(a, "", "--address"); ok && v != "127.0.0.1" && v != "localhost" {
			w.hit(c, ruleExposeClusterApi, high, "kubectl proxy exposes the cluster API on "+v)
		} else {
			w.hit(c, ruleExposePort, med, "kubectl proxy exposes the cluster API")
		}
	case "exec", "attach", "debug":
		w.hit(c, ruleRemoteExec, med, c.name+" "+verb+" runs commands inside a running pod")
	case "port-forward":
		w.hit(c, ruleExposePort, med, "kubectl port-forward exposes a cluster port")
	}
}

// kubectlForced says what a forced kubectl change does that the cluster
// would otherwise refuse, or "" when it is not forced or only a dry run:
// drain --force deletes pods no controller recreates, drain
// --delete-emptydir-data deletes their scratch data, replace --force and
// apply --force delete and re-create what they name, apply --prune
// deletes every resource the manifests no longer list.
func kubectlForced(verb string, a []string) string {
	for _, x := range a {
		if x == "--dry-run" || strings.HasPrefix(x, "--dry-run=") && x != "--dry-run=none" {
			return ""
		}
	}
	on := func(names ...string) bool {
		for _, x := range a {
			for _, n := range names {
				if x == n || x == n+"=true" {
					return true
				}
			}
		}
		return false
	}
	switch verb {
	case "drain":
		switch {
		case on("--force"):
			return "--force deletes the pods no controller manages, for good"
		case on("--delete-emptydir-data", "--delete-local-data"):
			return "deletes the pods' emptyDir data"
		}
	case "replace":
		if on("--force") {
			return "--force deletes and re-creates what it names"
		}
	case "apply":
		switch {
		case on("--prune"):
			return "--prune deletes every resource the manifests no longer list"
		case on("--force"):
			return "--force deletes and re-creates what it cannot patch"
		}
	}
	return ""
}

func (w *walker) aws(c *command) {
	a := c.args
	ops := operandsSkipping(a, awsValueOpts())
	if len(ops) < 2 {
		if len(ops) == 1 && ops[0] == "configure" {
			w.hit(c, ruleCloudChange, med, "aws configure changes credentials")
		}
		return
	}
	svc, op := ops[0], ops[1]
	if ops[len(ops)-1] == "help" {
		return // aws SERVICE OPERATION help prints the operation's manual
	}
	if svc == "s3" {
		switch op {
		case "rb":
			w.hit(c, ruleCloudDelete, high, "aws s3 rb deletes a bucket")
		case "rm":
			if hasArg(a, "--recursive") {
				w.hit(c, ruleCloudDelete, high, "aws s3 rm --recursive deletes a bucket's contents")
			} else if hasArg(a, "--dryrun") {
				w.hit(c, ruleCloudChange, med, "aws s3 rm --dryrun lists what it would delete")
			} else {
				w.hit(c, ruleCloudDelete, high, "aws s3 rm deletes an object (S3 keeps no copy unless versioning is on)")
			}
		case "cp", "mv", "sync":
			if op == "sync" && hasArg(a, "--delete") && !hasArg(a, "--dryrun") && len(ops) >= 3 && strings.HasPrefix(ops[len(ops)-1], "s3://") {
				w.hit(c, ruleCloudDelete, high, "aws s3 sync --delete deletes the objects in "+ops[len(ops)-1]+" that the source does not have")
				return
			}
			w.hit(c, ruleCloudChange, med, "aws s3 "+op+" copies data to or from S3")
		}
		return
	}
	if hasArg(a, "--dry-run") {
		// EC2's --dry-run checks the caller's permission and changes nothing
		w.hit(c, ruleCloudChange, med, "aws "+svc+" "+op+" --dry-run checks the permission to change cloud resources")
		return
	}
	if batch, ok := optValue(a, "", "--change-batch"); ok && changeBatchDeletes(batch) {
		w.hit(c, ruleCloudDelete, high, "aws "+svc+" "+op+" deletes the records its change batch names")
		return
	}
	switch {
	case strings.HasPrefix(op, "delete-") || strings.HasPrefix(op, "terminate-") || strings.HasPrefix(op, "deregister-") || strings.HasPrefix(op, "remove-") || strings.HasPrefix(op, "purge-") || strings.HasPrefix(op, "destroy-") || strings.HasPrefix(op, "disable-") || strings.HasPrefix(op, "stop-logging") || awsDestroyOp(op):
		w.hit(c, ruleCloudDelete, high, "aws "+svc+" "+op+" deletes or disables cloud resources")
	case svc == "iam" && (strings.HasPrefix(op, "create-user") || strings.HasPrefix(op, "create-access-key") || strings.HasPrefix(op, "attach-") || strings.HasPrefix(op, "put-user-policy") || strings.HasPrefix(op, "create-login-profile") || strings.HasPrefix(op, "add-user-to-group")):
		w.hit(c, ruleAccountChange, high, "aws iam "+op+" creates credentials or grants permissions")
	case strings.HasPrefix(op, "get-secret-value") || strings.HasPrefix(op, "get-parameter") && hasArg(a, "--with-decryption") || op == "get-session-token":
		w.hit(c, ruleCredentialRead, high, "aws "+svc+" "+op+" reads secrets")
	case strings.HasPrefix(op, "describe-") || strings.HasPrefix(op, "list-") || strings.HasPrefix(op, "get-") || op == "ls" || op == "wait":
	default:
		w.hit(c, ruleCloudChange, med, "aws "+svc+" "+op+" changes cloud resources")
	}
}

// changeBatchDeletes reports whether a change batch given inline (Route 53's
// {"Changes":[{"Action":"DELETE",…}]}) deletes what it names.
func changeBatchDeletes(b string) bool {
	u := strings.ToUpper(strings.Join(strings.Fields(b), ""))
	return strings.Contains(u, `"ACTION":"DELETE"`)
}

// awsValueOpts are the AWS CLI's global options that take a value, which
// may come before the service (aws --profile prod ec2 …).
var awsValueOpts = core.LazySet("--profile", "--region", "--output", "--endpoint-url", "--query", "--ca-bundle",
	"--cli-read-timeout", "--cli-connect-timeout", "--color", "--cli-binary-format")

// dockerGlobalEnd returns the index of the first argument after the
// global options of docker, podman or nerdctl (-H HOST, --context NAME,
// --config DIR, -l LEVEL, --tls…), 0 when there are none.
func dockerGlobalEnd(a []string) int {
	i := 0
	for i < len(a) && strings.HasPrefix(a[i], "-") {
		switch x := a[i]; {
		case x == "-H" || x == "--host" || x == "-c" || x == "--context" || x == "--config" || x == "-l" || x == "--log-level" ||
			x == "--tlscacert" || x == "--tlscert" || x == "--tlskey" || x == "--url" || x == "--connection" || x == "--namespace" || x == "-n":
			i += 2
		case x == "-D" || x == "--debug" || x == "--tls" || x == "--tlsverify" || x == "--remote" || x == "-r" || strings.Contains(x, "="):
			i++
		default:
			return 0 // an option not known to be global: left as it is
		}
	}
	if i >= len(a) {
		return 0
	}
	return i
}

// pkgValueOpts are package managers' global options that take a value
// and may come before the subcommand (npm --registry URL unpublish …).
var pkgValueOpts = core.LazySet("--registry", "--prefix", "-C", "--dir", "--cache", "--userconfig", "--loglevel", "-w",
	"--workspace", "--filter", "-F", "--cwd", "--globalconfig")

var secretPatternRe = core.LazyRE(`(?i)pass(?:w(?:or)?d)?|secret|token|api[_-]?key|credential|private[_ -]?key|aws_secret|aws_access|BEGIN .*PRIVATE|auth|bearer|-p\s`)

// credentialSearch: grepping for secrets across home, system paths or
// history is credential hunting; in the workspace it is everyday work.
func (w *walker) credentialSearch(c *command) {
	a := c.args
	var pats, files []string
	ops := operands(a)
	explicit := false
	for i, x := range a {
		if (x == "-e" || x == "--regexp") && i+1 < len(a) {
			pats = append(pats, a[i+1])
			explicit = true
		}
	}
	if !explicit && len(ops) > 0 {
		pats, files = ops[:1], ops[1:]
	} else {
		for _, o := range ops {
			if !hasArg(pats, o) {
				files = append(files, o)
			}
		}
	}
	secret := false
	for _, p := range pats {
		if secretPatternRe.MatchString(p) {
			secret = true
		}
	}
	if !secret {
		return
	}
	wide := false
	for _, f := range files {
		cls := classify(f, c.cwd, w.env.Workspace)
		rf := resolvePath(f, c.cwd)
		if cls == pcRoot || cls == pcHome || cls == pcSystem || historyFile(rf) || credentialKind(rf) != "" {
			wide = true
		}
	}
	if c.stdin != nil {
		for _, p := range c.stdin.paths {
			if historyFile(p) || credentialKind(p) != "" {
				wide = true
			}
		}
	}
	if wide {
		w.hit(c, RuleCredentialSearch, high, c.name+" searches for secrets ("+core.TrimArg(strings.Join(pats, " "))+") outside the workspace")
	}
}

// archive: an archive of sensitive places written to stdout or a remote host.
func (w *walker) archive(c *command) {
	a := c.args
	toStdout := false
	remote := false
	if v, ok := optValue(a, "-f", "--file"); ok {
		toStdout = v == "-"
		remote = strings.Contains(v, "@") && strings.Contains(v, ":")
	} else if c.name == "tar" {
		for _, x := range a {
			if len(x) > 1 && x[0] != '-' && strings.ContainsRune(x, 'f') && strings.ContainsAny(x, "cxt") && strings.Trim(x, "cxtvzjJpfPa") == "" {
				// old-style "czf": the next operand is the archive
			}
		}
		toStdout = !hasArgPrefix(a, "-cf", "-czf", "-cjf", "-cvf", "-czvf", "-xf", "-xvf", "-xzf", "-tf")
		for _, x := range a {
			if strings.Contains(x, "@") && strings.Contains(x, ":") && !strings.HasPrefix(x, "-") {
				remote = true
			}
		}
	}
	if remote {
		w.hit(c, ruleRemoteCopy, med, c.name+" reads or writes an archive on a remote host")
	}
	if !(toStdout && (c.remote || c.pipeOut)) && !remote {
		return
	}
	for _, p := range operands(a) {
		rp := resolvePath(p, c.cwd)
		cls := classify(p, c.cwd, w.env.Workspace)
		if cls == pcRoot || cls == pcHome || (cls == pcSystem && strings.HasPrefix(rp, "/etc")) || credentialKind(rp) != "" {
			if c.remote || remote {
				w.hit(c, ruleBulkExfiltration, high, c.name+" sends an archive of "+rp+" off the host")
			} else {
				w.hit(c, ruleBulkArchive, med, c.name+" archives "+rp+" to a pipe")
			}
			return
		}
	}
}

// sudoSensitiveArgs: under sudo, any program handed a privilege or
// persistence path may write it (GTFOBins file-write).
func (w *walker) sudoSensitiveArgs(c *command) {
	if mentionCmds()[c.name] || c.name == "" || passThrough()[c.name] && c.name != "tee" {
		return
	}
	switch c.name {
	case "cat", "less", "more", "head", "tail", "ls", "vim", "vi", "nano", "cp", "mv", "ln", "tee", "sed", "chmod", "chown", "install", "rm", "systemctl", "launchctl", "visudo":
		return
	}
	for _, a := range c.args {
		for _, tok := range pathTokens(strings.TrimLeft(a, ">")) {
			rt := resolvePath(strings.TrimLeft(tok, ">"), c.cwd)
			rule, why := sensitiveTarget(rt)
			if rule == nil && rcFile(rt) && strings.HasPrefix(rt, "/") {
				rule, why = ruleRcPersistence, "runs code in another user's shell"
			}
			if rule != nil && rule != ruleSystemConfigWrite && rule != ruleNameResolutionWrite {
				w.hit(c, rule, high, c.name+" runs as root with "+rt+" as an argument: "+why)
				return
			}
		}
	}
}

// shellRules: shells started without code read from a terminal or a pipe.
func (w *walker) shellRules(c *command) {
	if !interactiveShell(c) || c.container {
		return
	}
	if c.stdin != nil && (c.stdin.text != "" || c.stdin.flags != 0) {
		return // judged as code piped into a shell
	}
	login := false
	for _, v := range c.via {
		if strings.HasPrefix(v, "sudo -") || v == "su" || strings.HasPrefix(v, "su ") || strings.HasPrefix(v, "doas -s") {
			login = true
		}
	}
	switch {
	case c.sudo && login:
		w.hit(c, ruleRootShell, high, "opens a root login shell")
	case c.sudo:
		w.hit(c, ruleRootShell, high, "starts a root shell through "+strings.Join(c.via, " → "))
	case c.depth > 0 && len(c.via) > 0 && !strings.HasPrefix(c.via[len(c.via)-1], "alias"):
		w.hit(c, ruleShellEscape, high, "starts an interactive shell from inside "+c.via[len(c.via)-1])
	}
}

// suUser returns the user su switches to, "" when none is named (root).
func suUser(a []string) string {
	for i := 0; i < len(a); i++ {
		x := a[i]
		switch {
		case x == "-" || x == "-l" || x == "--login" || x == "-m" || x == "-p" || x == "--preserve-environment":
		case x == "-c" || x == "--command" || x == "-s" || x == "--shell" || x == "-g" || x == "--group" || x == "-G" || x == "--supp-group":
			i++
		case strings.HasPrefix(x, "-"):
		default:
			return x
		}
	}
	return ""
}

// publishedFiles judges the file operands of a command that publishes them
// to a hosting service (a gist, a snippet, a release asset): a credential
// or secret file published is sent to where others can read it.
func (w *walker) publishedFiles(c *command, how string) {
	for _, o := range operands(c.args) {
		rp := resolvePath(o, c.cwd)
		if k := credentialKind(rp); k != "" {
			w.hit(c, ruleCredentialExfiltration, high, how+" publishes "+o+" ("+k+")")
			return
		}
		if k := secretFileKind(rp); k != "" {
			w.hit(c, ruleCredentialExfiltration, high, how+" publishes "+o+" ("+k+")")
			return
		}
	}
}
