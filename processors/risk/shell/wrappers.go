package shell

import (
	"strings"
)

// Options that take a value, per wrapper: the walker must skip the value to
// find the wrapped command.
var wrapperOptArgs = map[string]string{
	"sudo":       " -u -g -C -D -h -p -r -t -U -T -R --user --group --close-from --chdir --host --prompt --role --type --other-user --command-timeout --chroot ",
	"doas":       " -u -C ",
	"pkexec":     " --user ",
	"run0":       " --user -u --unit --property --description --slice --machine -D --chdir ",
	"env":        " -u -C -S --unset --chdir --split-string ",
	"exec":       " -a ",
	"nice":       " -n --adjustment ",
	"ionice":     " -c -n --class --classdata ",
	"timeout":    " -s -k --signal --kill-after ",
	"stdbuf":     " -i -o -e --input --output --error ",
	"strace":     " -o -e -s -u -E -a -b -O -P -S -X -I ",
	"ltrace":     " -o -e -s -u -E -a -n -x -A -D -F ",
	"setsid":     " ",
	"chrt":       " -T -P -D ",
	"flock":      " -E -w --conflict-exit-code --timeout ",
	"runuser":    " -u -g -G --user --group --supp-group -s --shell -w --whitelist-environment ",
	"logsave":    " ",
	"firejail":   " ",
	"nsenter":    " -t --target -S --setuid -G --setgid -w --wd -r --root ",
	"chroot":     " --userspec --groups ",
	"valgrind":   " ",
	"caffeinate": " -t -w ",
	"grc":        " -c --config ",
	"watch":      " -n --interval -q --equexit -s --shell ",
	"systemd-run": " -u --unit -p --property --description --slice -E --setenv -M --machine --on-active --on-boot " +
		"--on-startup --on-unit-active --on-unit-inactive --on-calendar --timer-property --uid --gid --nice --working-directory -D --path-property --socket-property --service-type ",
	"unshare": " -S -G -R -w --setuid --setgid --root --wd --map-user --map-group --propagation --setgroups ",
	"xargs":   " -a -d -E -I -J -L -n -P -R -S -s --arg-file --delimiter --max-lines --max-args --max-procs --max-chars --process-slot-var ",
	"script":  " -c -E -t -T -I -O -B --command --echo --log-in --log-out --log-io --log-timing ",
}

// shells are programs that run shell code.
var shells = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true,
	"csh": true, "tcsh": true, "fish": true, "elvish": true, "yash": true, "posh": true, "rbash": true,
	"pwsh": true, "powershell": true, "nu": true, "xonsh": true, "oksh": true, "loksh": true,
}

// skipOpts returns the index of the first non-option argument of a wrapper,
// given the wrapper's value-taking options; "--" ends the options.
func skipOpts(name string, fs []field) int {
	withArg := wrapperOptArgs[name]
	i := 0
	for i < len(fs) {
		a := fs[i].s
		if a == "--" {
			return i + 1
		}
		if len(a) < 2 || a[0] != '-' {
			return i
		}
		if strings.HasPrefix(a, "--") {
			if strings.Contains(a, "=") {
				i++
				continue
			}
			if strings.Contains(withArg, " "+a+" ") {
				i += 2
				continue
			}
			i++
			continue
		}
		// short option, maybe with an attached value
		if len(a) == 2 && strings.Contains(withArg, " "+a+" ") {
			i += 2
			continue
		}
		i++
	}
	return i
}

// unwrap strips wrappers (sudo, env, nohup, timeout, xargs …) off fs and
// records what they implied on cmd. It returns the wrapped command's fields.
func (w *walker) unwrap(cmd *command, fs []field, ctx stmtCtx) []field {
	for guard := 0; len(fs) > 0 && guard < 16; guard++ {
		if fs[0].dyn || fs[0].glob {
			return fs
		}
		name := CanonicalName(fs[0].s)
		rest := fs[1:]
		switch name {
		case "sudo", "doas", "pkexec", "run0":
			cmd.sudo = true
			i := skipOpts(name, rest)
			opts := rest[:min(i, len(rest))]
			if i >= len(rest) {
				// No command: a root shell (-i, -s) or bookkeeping (-l, -v, -k).
				for _, o := range opts {
					if o.s == "-i" || o.s == "-s" || o.s == "--login" || o.s == "--shell" || (len(o.s) > 1 && o.s[0] == '-' && o.s[1] != '-' && strings.ContainsAny(o.s, "is")) {
						cmd.via = append(cmd.via, name+" "+o.s)
						return []field{{s: "sh"}}
					}
				}
				if name == "sudo" {
					return fs
				}
				cmd.via = append(cmd.via, name)
				return []field{{s: "sh"}}
			}
			cmd.sudoUser = ""
			if name == "sudo" || name == "doas" {
				if u, ok := fieldOpt(opts, "-u", "--user"); ok && u != "root" && u != "0" && u != "#0" && !strings.HasPrefix(u, "$") {
					cmd.sudoUser = u
				}
			}
			for _, o := range opts {
				if o.s == "-S" || o.s == "-A" || longOpt(o.s, "--stdin") || longOpt(o.s, "--askpass") || len(o.s) > 2 && o.s[0] == '-' && o.s[1] != '-' && strings.ContainsAny(o.s[1:], "SA") && isLetters(o.s[1:]) {
					cmd.sudoPass = true
				}
			}
			cmd.via = append(cmd.via, name)
			fs = rest[i:]
		case "env":
			i := 0
			for i < len(rest) {
				a := rest[i].s
				if a == "-S" || a == "--split-string" {
					if i+1 < len(rest) {
						split := strings.Fields(rest[i+1].s)
						var nf []field
						for _, s := range split {
							nf = append(nf, field{s: s})
						}
						rest = append(nf, rest[i+2:]...)
						i = 0
						continue
					}
				}
				if a == "--" {
					i++
					break
				}
				if strings.HasPrefix(a, "-") {
					if a == "-u" || a == "-C" || a == "--unset" || a == "--chdir" {
						i += 2
					} else {
						i++
					}
					continue
				}
				if eq := strings.IndexByte(a, '='); eq > 0 {
					if cmd.assigns == nil {
						cmd.assigns = map[string]string{}
					}
					cmd.assigns[a[:eq]] = a[eq+1:]
					w.checkAssign(a[:eq], a[eq+1:], rest[i].dyn, w.outer)
					i++
					continue
				}
				break
			}
			if i >= len(rest) {
				return fs // plain env: prints the environment
			}
			cmd.via = append(cmd.via, "env")
			fs = rest[i:]
		case "command":
			if len(rest) > 0 && (rest[0].s == "-v" || rest[0].s == "-V") {
				return fs
			}
			if len(rest) > 0 && rest[0].s == "-p" {
				rest = rest[1:]
			}
			if len(rest) == 0 {
				return fs
			}
			cmd.via = append(cmd.via, name)
			fs = rest
		case "builtin", "nohup", "time", "unbuffer", "catchsegv", "dbus-launch", "proxychains", "proxychains4", "torsocks", "tsocks", "pexec", "setsid", "caffeinate", "valgrind", "grc", "chronic", "ifne":
			i := skipOpts(name, rest)
			if i >= len(rest) {
				return fs
			}
			cmd.via = append(cmd.via, name)
			fs = rest[i:]
		case "exec":
			i := skipOpts(name, rest)
			if i >= len(rest) {
				return fs // exec with only redirections
			}
			cmd.via = append(cmd.via, name)
			fs = rest[i:]
		case "nice", "ionice", "stdbuf", "strace", "ltrace":
			if hasArgField(rest, "-p") && name != "nice" && name != "stdbuf" {
				return fs
			}
			if name == "strace" || name == "ltrace" {
				if o, ok := fieldOpt(rest, "-o", "--output"); ok {
					cmd.redirs = append(cmd.redirs, redir{op: ">", target: o})
				}
			}
			i := skipOpts(name, rest)
			if name == "nice" && i < len(rest) && len(rest[i].s) > 1 && rest[i].s[0] == '-' {
				i++
			}
			if i >= len(rest) {
				return fs
			}
			cmd.via = append(cmd.via, name)
			fs = rest[i:]
		case "timeout":
			i := skipOpts(name, rest)
			i++ // the duration
			if i >= len(rest) {
				return fs
			}
			cmd.via = append(cmd.via, name)
			fs = rest[i:]
		case "chrt", "taskset":
			if hasArgField(rest, "-p") {
				return fs
			}
			i := skipOpts(name, rest)
			i++ // priority or mask
			if i >= len(rest) {
				return fs
			}
			cmd.via = append(cmd.via, name)
			fs = rest[i:]
		case "setarch":
			if len(rest) == 0 {
				return fs
			}
			i := 1 + skipOpts(name, rest[1:])
			if i >= len(rest) {
				cmd.via = append(cmd.via, name)
				return []field{{s: "sh"}}
			}
			cmd.via = append(cmd.via, name)
			fs = rest[i:]
		case "flock":
			i := skipOpts(name, rest)
			if c, ok := fieldOpt(rest, "-c", "--command"); ok {
				cmd.via = append(cmd.via, name)
				w.reparse(c, "flock -c", nil, ctx.stdin, false)
				return fs
			}
			i++ // the lock file
			if i >= len(rest) {
				return fs
			}
			cmd.via = append(cmd.via, name)
			fs = rest[i:]
		case "logsave":
			i := skipOpts(name, rest) + 1
			if i >= len(rest) {
				return fs
			}
			cmd.via = append(cmd.via, name)
			fs = rest[i:]
		case "nsenter", "firejail", "chroot":
			i := skipOpts(name, rest)
			if name == "chroot" {
				i++
			}
			cmd.via = append(cmd.via, name)
			if i >= len(rest) {
				return []field{{s: "sh"}}
			}
			fs = rest[i:]
		case "runuser", "su", "sg":
			if c, ok := fieldOpt(rest, "-c", "--command"); ok {
				var words []string
				for _, f := range rest {
					words = append(words, f.s)
				}
				// su -c as a named account other than root runs with that
				// account's powers: judged by what it runs, as sudo -u is
				asRoot := name != "sg"
				if u := suUser(words); u != "" && u != "root" && u != "0" {
					asRoot = false
				}
				cmd.sudo = cmd.sudo || asRoot
				w.reparse(c, name+" -c", nil, ctx.stdin, asRoot)
				return fs
			}
			if name == "runuser" {
				i := skipOpts(name, rest)
				if i < len(rest) {
					cmd.via = append(cmd.via, name)
					fs = rest[i:]
					continue
				}
			}
			return fs
		case "busybox":
			if len(rest) == 0 || strings.HasPrefix(rest[0].s, "-") {
				return fs
			}
			cmd.via = append(cmd.via, name)
			fs = rest
		case "npm":
			if len(rest) > 0 && rest[0].s == "exec" && len(rest) > 1 {
				r := rest[1:]
				if r[0].s == "--" {
					r = r[1:]
				}
				if len(r) > 0 && (strings.Contains(r[0].s, "/") || shells[CanonicalName(r[0].s)]) {
					cmd.via = append(cmd.via, "npm exec")
					fs = r
					continue
				}
			}
			return fs
		case "watch":
			i := skipOpts(name, rest)
			if i >= len(rest) {
				return fs
			}
			cmd.via = append(cmd.via, name)
			if hasArgField(rest[:i], "-x") || hasArgField(rest[:i], "--exec") {
				fs = rest[i:]
				continue
			}
			var parts []string
			for _, f := range rest[i:] {
				parts = append(parts, f.s)
			}
			w.reparse(strings.Join(parts, " "), "watch", nil, nil, false)
			return fs
		case "script":
			if c, ok := fieldOpt(rest, "-c", "--command"); ok {
				w.reparse(c, "script -c", nil, ctx.stdin, false)
			}
			return fs
		case "systemd-run":
			i := skipOpts(name, rest)
			if hasArgField(rest[:min(i, len(rest))], "-S") || hasArgField(rest[:min(i, len(rest))], "--shell") {
				cmd.via = append(cmd.via, name)
				return []field{{s: "sh"}}
			}
			if i >= len(rest) {
				return fs
			}
			// Keep systemd-run visible for its own rule, but also judge the command.
			sub := &command{sudo: cmd.sudo, via: append(append([]string(nil), cmd.via...), "systemd-run"), synthetic: true}
			w.runSynthetic(sub, rest[i:], ctx)
			return fs
		case "xargs":
			return w.xargs(cmd, rest, ctx)
		case "unshare":
			fs = unshareCommand(cmd, rest)
		case "screen":
			out, ok := w.screenCommand(cmd, rest, ctx)
			if !ok {
				return fs
			}
			fs = out
		case "parallel":
			w.parallel(cmd, rest, ctx)
			return fs
		default:
			return fs
		}
	}
	return fs
}

func hasArgField(fs []field, v string) bool {
	for _, f := range fs {
		if f.s == v {
			return true
		}
	}
	return false
}

// fieldOpt finds the value of -c CMD style options, also when the short
// option ends a cluster of flags (getopt's -qc CMD is -q -c CMD).
func fieldOpt(fs []field, short, long string) (string, bool) {
	for i, f := range fs {
		if (f.s == short || f.s == long || shortCluster(f.s, short)) && i+1 < len(fs) {
			return fs[i+1].s, true
		}
		if strings.HasPrefix(f.s, long+"=") {
			return f.s[len(long)+1:], true
		}
	}
	return "", false
}

// shortCluster reports whether a is a cluster of single-letter flags
// (-qc) whose last one is short (-c).
func shortCluster(a, short string) bool {
	if len(short) != 2 || len(a) < 3 || a[0] != '-' || a[1] == '-' || a[len(a)-1] != short[1] {
		return false
	}
	for i := 1; i < len(a)-1; i++ {
		if !(a[i] >= 'a' && a[i] <= 'z' || a[i] >= 'A' && a[i] <= 'Z') {
			return false
		}
	}
	return true
}

// itemsOf lists what a command reading d line by line would get.
func itemsOf(d *data) []string {
	if d == nil {
		return nil
	}
	if len(d.items) > 0 {
		return d.items
	}
	if d.known && d.text != "" {
		return strings.Fields(strings.ReplaceAll(d.text, "\x00", "\n"))
	}
	return nil
}

// xargs turns "… | xargs CMD ARGS" into CMD ARGS ITEMS, with the items the
// upstream command would print when they can be told.
func (w *walker) xargs(cmd *command, rest []field, ctx stmtCtx) []field {
	i := skipOpts("xargs", rest)
	repl := ""
	fromFile := false
	for j := 0; j < i && j < len(rest); j++ {
		a := rest[j].s
		switch {
		case (a == "-I" || a == "-J") && j+1 < len(rest):
			repl = rest[j+1].s
		case strings.HasPrefix(a, "--replace="):
			repl = strings.TrimPrefix(a, "--replace=")
		case a == "--replace":
			repl = "{}" // GNU: an optional value, attached with "=" only
		case strings.HasPrefix(a, "-i"):
			repl = "{}"
			if len(a) > 2 {
				repl = a[2:]
			}
		case a == "-a" || strings.HasPrefix(a, "--arg-file"):
			fromFile = true
		}
	}
	cmd.via = append(cmd.via, "xargs")
	if !hasArgField(rest[:min(i, len(rest))], "-o") && !hasArgField(rest[:min(i, len(rest))], "--open-tty") {
		// xargs reads its items from stdin and gives the command
		// /dev/null: what was piped in reaches it only as arguments
		cmd.stdin = &data{known: true}
	}
	sub := rest[min(i, len(rest)):]
	if len(sub) == 0 {
		sub = []field{{s: "echo"}}
	}
	items := itemsOf(ctx.stdin)
	if repl != "" && ctx.stdin != nil && ctx.stdin.known && ctx.stdin.text != "" {
		// -I reads one item per line, blanks included.
		items = nil
		for _, l := range strings.Split(strings.ReplaceAll(ctx.stdin.text, "\x00", "\n"), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				items = append(items, l)
			}
		}
	}
	var itemData *data
	if ctx.stdin != nil {
		itemData = &data{flags: ctx.stdin.flags, paths: ctx.stdin.paths}
	}
	if fromFile {
		items = nil
	}
	dynItem := len(items) == 0
	if dynItem {
		if fromFile {
			return sub
		}
		items = []string{"$ITEM"}
	}
	if len(items) > 16 {
		items = items[:16]
	}
	out := append([]field(nil), sub...)
	if dynItem {
		var ss []string
		for _, f := range sub {
			ss = append(ss, f.s)
		}
		ph := repl
		if ph == "" && len(ss) > 0 && (shells[CanonicalName(ss[0])] || CanonicalName(ss[0]) == "eval") {
			ph = "\x00items" // appended items become the shell's code or its $0
			ss = append(ss, ph)
		}
		if templateInCode(ss, ph) {
			w.templateExec(&command{name: "xargs", span: w.outer}, "xargs", ss)
		}
	}
	if repl != "" {
		for k := range out {
			if strings.Contains(out[k].s, repl) {
				out[k] = field{s: strings.ReplaceAll(out[k].s, repl, items[0]), dyn: dynItem, d: itemData}
			}
		}
		return out
	}
	for _, it := range items {
		out = append(out, field{s: it, dyn: dynItem, d: itemData})
	}
	return out
}

// runSynthetic records a command Vigil built itself (find -exec, xargs,
// docker exec …) from fields, through the same unwrapping and judging.
func (w *walker) runSynthetic(base *command, fs []field, ctx stmtCtx) {
	if len(fs) == 0 || w.exhausted {
		return
	}
	savedVia, savedSudo := w.via, w.sudo
	w.via = base.via
	w.sudo = base.sudo
	savedCont, savedRemote := w.container, w.remote
	w.container = w.container || base.container
	w.remote = w.remote || base.remote
	saved := w.top
	w.top = false
	cmd := &command{stdin: ctx.stdin, synthetic: true}
	fs = w.unwrap(cmd, fs, ctx)
	if len(fs) > 0 {
		if b, ok := w.funcs[fs[0].s]; ok && !fs[0].dyn {
			_ = b
		}
		cmd.path = fs[0].s
		cmd.name, cmd.dynName = commandName(fs[0])
		if fs[0].glob {
			cmd.name, cmd.dynName, cmd.glob = "", true, true
		}
		for _, f := range fs[1:] {
			cmd.args = append(cmd.args, f.s)
			cmd.argDyn = append(cmd.argDyn, f.dyn)
			cmd.argData = append(cmd.argData, f.d)
		}
		cmd.win = isWindowsCommand(cmd.name, cmd.args)
	}
	w.finish(cmd, stmtCtx{stdin: ctx.stdin}, nil)
	w.top = saved
	w.via, w.sudo = savedVia, savedSudo
	w.container, w.remote = savedCont, savedRemote
}
