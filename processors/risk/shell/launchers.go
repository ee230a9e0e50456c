package shell

import (
	"strings"

	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Launchers: programs that start another program given as their
// arguments or as a string of code, unwrapped so that what they start is
// judged as if it were typed (unshare, screen -dm, tmux new -d, parallel
// … :::, gdb -ex '!…', expect spawn). See failclosed.go for argument
// templates (xargs -I, parallel {}, find -exec {}) whose items decide what
// runs.

// shortOptWithValue reports whether the short-option cluster a (such as
// -dmS) ends in a letter of vals, and so takes the next argument.
func shortOptWithValue(a, vals string) bool {
	return len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(vals, a[len(a)-1]) >= 0
}

// screenCommand returns the command screen starts: screen [opts] CMD ARGS,
// and reparses the string screen -X stuff types into a window.
func (w *walker) screenCommand(cmd *command, rest []field, ctx stmtCtx) ([]field, bool) {
	i := 0
	for i < len(rest) {
		a := rest[i].s
		if a == "-X" {
			var parts []string
			for _, f := range rest[i+1:] {
				parts = append(parts, f.s)
			}
			if len(parts) > 1 && parts[0] == "stuff" {
				w.reparse(strings.ReplaceAll(strings.Join(parts[1:], " "), `\n`, "\n"), "screen -X stuff", nil, nil, false)
			}
			return nil, false
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		if strings.HasPrefix(a, "-Logfile") || shortOptWithValue(a, "SceEhpTt") {
			i += 2
			continue
		}
		if a == "-r" || a == "-R" || a == "-x" || a == "-ls" || a == "-list" || a == "-wipe" || a == "-v" {
			return nil, false // attach, list: starts nothing
		}
		i++
	}
	cmd.via = append(cmd.via, "screen")
	if i >= len(rest) {
		return []field{{s: "sh"}}, true
	}
	return rest[i:], true
}

// unshareCommand returns the command unshare starts ($SHELL without one).
func unshareCommand(cmd *command, rest []field) []field {
	i := 0
	for i < len(rest) {
		a := rest[i].s
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		if !strings.Contains(a, "=") && (a == "-S" || a == "-G" || a == "-R" || a == "-w" || a == "--setuid" || a == "--setgid" ||
			a == "--root" || a == "--wd" || a == "--map-user" || a == "--map-group" || a == "--propagation" || a == "--setgroups" || a == "--map-users" || a == "--map-groups") {
			i += 2
			continue
		}
		i++
	}
	cmd.via = append(cmd.via, "unshare")
	if i >= len(rest) {
		return []field{{s: "sh"}}
	}
	return rest[i:]
}

// parallel judges GNU parallel: each argument after ::: fills the command
// template (at {} or appended), and with no template each argument is a
// command line. An argument source Vigil cannot read (::::, stdin) with a
// template that is code is a template-exec.
func (w *walker) parallel(cmd *command, rest []field, ctx stmtCtx) {
	i := 0
	ph := "{}"
	quote := false
	for i < len(rest) {
		a := rest[i].s
		if len(a) < 2 || a[0] != '-' || a == ":::" || a == "::::" || a == ":::+" {
			break
		}
		switch {
		case a == "--dry-run" || a == "--dryrun":
			return // prints the command lines, runs none
		case a == "-q" || a == "--quote":
			quote = true
		case a == "-I" && i+1 < len(rest):
			ph = rest[i+1].s
		case strings.HasPrefix(a, "-I") && len(a) > 2:
			ph = a[2:]
			i++
			continue
		case strings.HasPrefix(a, "--replace="):
			ph = strings.TrimPrefix(a, "--replace=")
		}
		if !strings.Contains(a, "=") && (a == "-j" || a == "--jobs" || a == "-S" || a == "--sshlogin" || a == "--joblog" || a == "--results" ||
			a == "-a" || a == "--arg-file" || a == "-d" || a == "--delimiter" || a == "-I" || a == "--tmpdir" || a == "--workdir" || a == "--colsep" || a == "-C" || a == "--timeout" || a == "--delay" || a == "-n" || a == "-N" || a == "--env") {
			i += 2
			continue
		}
		i++
	}
	var tmpl []string
	for ; i < len(rest) && rest[i].s != ":::" && rest[i].s != "::::" && rest[i].s != ":::+"; i++ {
		tmpl = append(tmpl, rest[i].s)
	}
	var items []string
	fromFile := false
	for ; i < len(rest); i++ {
		switch rest[i].s {
		case ":::", ":::+":
			continue
		case "::::":
			fromFile = true
			i++
			continue
		}
		items = append(items, rest[i].s)
	}
	if len(items) == 0 && !fromFile {
		items = itemsOf(ctx.stdin)
		if len(items) == 0 {
			fromFile = true
		}
	}
	// Without -q the template's words are joined and run by a shell (a
	// quoted 'cmd {} && cmd2' is a command line): where {} lands is read
	// from that line's words. Parallel quotes what it fills in, so an item
	// is code only in a code position.
	words := tmpl
	if !quote {
		words = strings.Fields(strings.Join(tmpl, " "))
	}
	if len(words) > 0 && fromFile && (templateInCode(words, ph) || !strings.Contains(strings.Join(words, " "), ph) && (shells[CanonicalName(words[0])] || CanonicalName(words[0]) == "eval")) {
		w.templateExec(cmd, "parallel", tmpl)
	}
	if len(tmpl) == 0 && fromFile {
		w.templateExec(cmd, "parallel", []string{"{}"})
		return
	}
	if fromFile && len(items) == 0 {
		// arguments Vigil cannot read: the template is judged with an
		// unknown argument in their place
		items = []string{"$PARALLEL_ITEM"}
	}
	if len(items) > 8 {
		items = items[:8]
	}
	for _, it := range items {
		if len(tmpl) == 0 {
			w.reparse(it, "parallel :::", nil, nil, false)
			continue
		}
		// parallel runs the line through a shell: the template as typed
		// (each word quoted with -q), the item quoted where it is filled in
		qi := it
		if it != "$PARALLEL_ITEM" {
			qi = Quote(it)
		}
		var q []string
		used := false
		for _, t := range tmpl {
			if strings.Contains(t, ph) {
				used = true
			}
			if quote {
				parts := strings.Split(t, ph)
				for k := range parts {
					parts[k] = Quote(parts[k])
				}
				q = append(q, strings.Join(parts, qi))
			} else {
				q = append(q, strings.ReplaceAll(t, ph, qi))
			}
		}
		if !used {
			q = append(q, qi)
		}
		w.reparse(strings.Join(q, " "), "parallel", nil, nil, false)
	}
}

// tmux judges the tmux commands that start or type a shell command:
// new-session, new-window, split-window, respawn-*, run-shell, send-keys.
func (w *walker) tmux(c *command) {
	a := c.args
	i := 0
	for i < len(a) && strings.HasPrefix(a[i], "-") {
		if a[i] == "-c" && i+1 < len(a) {
			w.reparse(a[i+1], "tmux -c", nil, nil, false)
			return
		}
		if a[i] == "-L" || a[i] == "-S" || a[i] == "-f" || a[i] == "-T" {
			i++
		}
		i++
	}
	if i >= len(a) {
		return
	}
	sub, rest := a[i], a[i+1:]
	valOpts := ""
	switch sub {
	case "new", "new-session", "new-window", "neww", "split-window", "splitw", "respawn-pane", "respawnp", "respawn-window", "respawnw", "display-popup", "popup":
		valOpts = "scntxyeFfdlpLTwWh"
	case "run-shell", "run":
		valOpts = "dtc"
	case "send-keys", "send":
		valOpts = "tN"
	default:
		return
	}
	j := 0
	for j < len(rest) && strings.HasPrefix(rest[j], "-") && len(rest[j]) > 1 {
		r := rest[j]
		if r == "--" {
			j++
			break
		}
		if len(r) == 2 && strings.IndexByte(valOpts, r[1]) >= 0 && !(sub != "send-keys" && sub != "send" && (r == "-d" || r == "-P" || r == "-h" || r == "-v" || r == "-l" || r == "-b")) {
			j += 2
			continue
		}
		j++
	}
	if j >= len(rest) {
		return
	}
	words := rest[j:]
	if sub == "send-keys" || sub == "send" {
		var keep []string
		for _, k := range words {
			switch k {
			case "Enter", "C-m", "KPEnter", "C-j":
				continue
			}
			keep = append(keep, k)
		}
		if len(keep) > 0 {
			w.reparse(strings.Join(keep, " "), "tmux send-keys", nil, nil, false)
		}
		return
	}
	w.reparse(strings.Join(words, " "), "tmux "+sub, nil, nil, false)
}

// gdb judges gdb -ex / -eval-command: "!CMD" and "shell CMD" run a shell
// command, "python …" runs Python.
func (w *walker) gdb(c *command) {
	a := c.args
	for i := 0; i < len(a); i++ {
		x := a[i]
		var v string
		switch {
		case (x == "-ex" || x == "--ex" || x == "-eval-command" || x == "--eval-command" || x == "-iex" || x == "--iex") && i+1 < len(a):
			v = a[i+1]
			i++
		case strings.HasPrefix(x, "--eval-command="), strings.HasPrefix(x, "-eval-command="):
			v = x[strings.IndexByte(x, '=')+1:]
		default:
			continue
		}
		v = strings.TrimSpace(v)
		switch {
		case strings.HasPrefix(v, "!"):
			w.reparse(strings.TrimPrefix(v, "!"), "gdb -ex !", nil, nil, false)
		case strings.HasPrefix(v, "shell ") || strings.HasPrefix(v, "pipe "):
			w.reparse(v[strings.IndexByte(v, ' ')+1:], "gdb -ex shell", nil, nil, false)
		case strings.HasPrefix(v, "python ") || strings.HasPrefix(v, "pi ") || strings.HasPrefix(v, "python-interactive "):
			w.analyzeCode("python", v[strings.IndexByte(v, ' ')+1:], c, "gdb -ex python")
		}
	}
}

// tclCalls are the Tcl/expect commands that start a program.
var tclCallRe = core.LazyRE(`(?m)(?:^|[;\[{]|\bthen\b)\s*(?:spawn|exec|system|open\s+"\|)\s+((?:-\w+\s+)*)([^;\]\n}"]+)`)

// tclCode reparses the programs a Tcl or expect script starts.
func (w *walker) tclCode(code, how string) {
	for _, m := range tclCallRe.FindAllStringSubmatch(code, 16) {
		line := strings.TrimSpace(m[2])
		if line != "" {
			w.reparse(line, how+" spawn", nil, nil, false)
		}
	}
}
