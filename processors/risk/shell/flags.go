package shell

import (
	"path"
	"strings"

	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Options that make a program run other programs or write files. The
// program itself looks harmless (a search, a sort, an archive tool); the
// option is what acts, so the option is judged:
//
//   - programs run per file or per line (rg --pre, rg --hostname-bin,
//     fd --exec, sort --compress-program, git --upload-pack, sed's e
//     command and s///e flag): the program is judged as a command and the
//     option itself is at least MEDIUM (exec-option);
//   - files written through an option (sort -o, curl -o, wget -O,
//     base64 -o, git --output, openssl -out, gpg -o, patch's target) are
//     judged like a redirection to the same path;
//   - archives extracted into a directory (tar -x -C DIR, unzip -d DIR,
//     7z x -oDIR, cpio -i -D DIR, or into the working directory set by cd):
//     into /, /etc, /usr, /bin, /boot, /var … their files replace system
//     files (HIGH archive-extract-system); into other system paths or a
//     home directory MEDIUM;
//   - copies into a directory (cp x /etc/, mv x /usr/bin, rsync x /etc/)
//     are judged as writes of the files they create there.

// execOptions lists, per program, options whose value is a program run by
// it (not shell code), and what it is run on.
var execOptions = map[string][]string{
	"rg":     {"--pre", "--hostname-bin"},
	"sort":   {"--compress-program"},
	"git":    {"--upload-pack", "--receive-pack", "--exec"},
	"fd":     {"-x", "--exec", "-X", "--exec-batch"},
	"fdfind": {"-x", "--exec", "-X", "--exec-batch"},
	"less":   {"--lesskey-src"},
}

// writeOptions lists, per program, options whose value is a file written.
var writeOptions = map[string][][2]string{
	"sort":    {{"-o", "--output"}},
	"curl":    {{"-o", "--output"}},
	"wget":    {{"-O", "--output-document"}, {"-o", "--output-file"}, {"-a", "--append-output"}},
	"base64":  {{"-o", "--output"}},
	"base32":  {{"-o", "--output"}},
	"git":     {{"", "--output"}},
	"openssl": {{"-out", ""}},
	"gpg":     {{"-o", "--output"}},
	"patch":   {{"-o", "--output"}},
	"uniq":    {},
	"time":    {{"-o", "--output"}},
	"xxd":     {},
	// Compilers, linkers and assemblers write what they build to -o.
	"go":      {{"-o", ""}},
	"gcc":     {{"-o", ""}},
	"cc":      {{"-o", ""}},
	"g++":     {{"-o", ""}},
	"c++":     {{"-o", ""}},
	"clang":   {{"-o", ""}},
	"clang++": {{"-o", ""}},
	"tcc":     {{"-o", ""}},
	"rustc":   {{"-o", ""}},
	"ld":      {{"-o", ""}},
	"as":      {{"-o", ""}},
}

// writeOptionTarget is one file a command writes through an option: its
// path, the option as written, and whether it appends.
type writeOptionTarget struct {
	path, how string
	appends   bool
}

// writeOptionTargets are the files c writes through its write options.
func writeOptionTargets(c *command) []writeOptionTarget {
	var out []writeOptionTarget
	for _, o := range writeOptions[c.name] {
		var long []string
		if o[1] != "" {
			long = []string{o[1]}
		}
		if v, ok := optValue(c.args, o[0], long...); ok && v != "-" && v != "" {
			how := o[0]
			if how == "" {
				how = o[1]
			}
			out = append(out, writeOptionTarget{path: v, how: how, appends: o[1] == "--append-output"})
		}
	}
	return out
}

// execFlags runs what exec options name, and judges the files write
// options name.
func (w *walker) execFlags(c *command) {
	for _, o := range execOptions[c.name] {
		short := ""
		long := []string{o}
		if len(o) == 2 {
			short, long = o, nil
		}
		v, ok := optValue(c.args, short, long...)
		if !ok || v == "" {
			continue
		}
		w.hit(c, ruleExecOption, med, c.name+" "+o+" runs "+core.TrimArg(v)+" on what it reads")
		var fs []field
		if c.name == "fd" || c.name == "fdfind" {
			// fd -x CMD ARGS…: the rest of the line is the command
			for i, a := range c.args {
				if a == o {
					fs = toFields(append(c.args[i+1:len(c.args):len(c.args)], "FILE"))
					break
				}
			}
		}
		if fs == nil {
			fs = toFields(append(strings.Fields(v), "FILE"))
		}
		if len(fs) > 0 {
			w.runSynthetic(&command{via: []string{c.name + " " + o}, sudo: c.sudo}, fs, stmtCtx{})
		}
	}
	if c.name == "sed" {
		w.sedExec(c)
	}
}

// writeFlags judges files written through options.
func (w *walker) writeFlags(c *command) {
	for _, t := range writeOptionTargets(c) {
		var content *data
		if c.name == "curl" || c.name == "wget" && t.how == "-O" {
			content = &data{flags: flowNetwork}
		}
		w.judgeWrite(c, t.path, t.appends, content, c.name+" "+t.how)
	}
	switch c.name {
	case "patch":
		if ops := operands(c.args); len(ops) > 0 {
			w.judgeWrite(c, ops[0], false, nil, "patch")
		}
	case "tar", "bsdtar":
		if tarExtracts(c.args) {
			dir, _ := optValue(c.args, "-C", "--directory")
			w.extractInto(c, dir)
		}
	case "unzip":
		if !flagSet(c.args, 'l') && !flagSet(c.args, 't') && !flagSet(c.args, 'p') && !flagSet(c.args, 'Z') {
			dir, _ := optValue(c.args, "-d", "")
			w.extractInto(c, dir)
		}
	case "7z", "7za", "7zr":
		if ops := operands(c.args); len(ops) > 0 && (ops[0] == "x" || ops[0] == "e") {
			dir := ""
			for _, a := range c.args {
				if strings.HasPrefix(a, "-o") && len(a) > 2 {
					dir = a[2:]
				}
			}
			w.extractInto(c, dir)
		}
	case "cpio":
		if flagSet(c.args, 'i', "--extract") {
			dir, _ := optValue(c.args, "-D", "--directory")
			w.extractInto(c, dir)
		}
	}
}

// tarExtracts reports whether tar's arguments extract: -x, --extract,
// --get, or an old-style first argument holding x ("xzf").
func tarExtracts(a []string) bool {
	if flagSet(a, 'x', "--extract", "--get") {
		return true
	}
	if len(a) > 0 && !strings.HasPrefix(a[0], "-") && strings.ContainsRune(a[0], 'x') && strings.Trim(a[0], "xzjJvfpPoOkmwaUWh") == "" {
		return true
	}
	return false
}

// systemTop are the top-level directories whose contents an extraction
// must never replace.
var systemTop = core.LazySet("/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/boot", "/var", "/root", "/System", "/Library", "/private")

// extractInto judges an archive extracted into dir ("" for the working
// directory).
func (w *walker) extractInto(c *command, dir string) {
	if dir == "" {
		dir = c.cwd
	}
	if dir == "" || dyn(c, dir) {
		return
	}
	rd := resolvePath(dir, c.cwd)
	switch rd {
	case "/tmp", "/var/tmp", "/dev/shm", "/usr/local", "/opt", "/srv":
		return // scratch space, or where software is meant to be unpacked
	}
	cls := classify(dir, c.cwd, w.env.Workspace)
	top := rd
	if i := strings.IndexByte(strings.TrimPrefix(rd, "/"), '/'); i >= 0 {
		top = rd[:i+1]
	}
	switch {
	case cls == pcRoot || (cls == pcSystem || cls == pcLog) && systemTop()[top] && !strings.HasPrefix(rd, "/usr/local/") && !strings.HasPrefix(rd, "/var/tmp"):
		w.hit(c, ruleArchiveExtractSystem, high, c.name+" extracts an archive into "+rd+": its files replace system files (accounts, sudoers, programs, services)")
	case cls == pcSystem:
		w.hit(c, ruleSystemWrite, med, c.name+" extracts an archive into the system path "+rd)
	case cls == pcHome || credentialKind(rd) != "" || agentConfigKind(rd+"/x") == "settings":
		w.hit(c, ruleArchiveExtractHome, med, c.name+" extracts an archive into "+rd+": it may replace start-up files, keys and agent settings")
	}
}

// copyTargets returns the paths a copy or move of srcs into dst creates: dst
// itself, or dst/<base of each source> when dst is a directory (a trailing
// slash, a directory whose entries are sensitive, or ~/.ssh).
func copyTargets(srcs []string, dst, cwd string) []string {
	rd := resolvePath(dst, cwd)
	self, _ := sensitiveTarget(rd)
	child, _ := sensitiveTarget(rd + "/x")
	dir := strings.HasSuffix(dst, "/") || rd == "~/.ssh" || rd == "/" ||
		self == nil && child != nil && !strings.Contains(path.Base(rd), ".")
	if !dir || len(srcs) == 0 {
		return []string{dst}
	}
	out := make([]string, 0, len(srcs))
	for _, s := range srcs {
		out = append(out, strings.TrimSuffix(dst, "/")+"/"+path.Base(strings.TrimSuffix(s, "/")))
	}
	return out
}

// sedExec re-parses what GNU sed's e command runs ("1e id", "e id") and
// flags the s///e flag, which runs the pattern space as a command.
func (w *walker) sedExec(c *command) {
	var scripts []string
	for i, a := range c.args {
		if (a == "-e" || a == "--expression") && i+1 < len(c.args) {
			scripts = append(scripts, c.args[i+1])
		}
	}
	if len(scripts) == 0 {
		if ops := operands(c.args); len(ops) > 0 && !hasArgPrefix(c.args, "-f", "--file") {
			scripts = ops[:1]
		}
	}
	for _, sc := range scripts {
		for _, cmd := range strings.FieldsFunc(sc, func(r rune) bool { return r == ';' || r == '\n' }) {
			cmd = strings.TrimSpace(cmd)
			// an address: a line number, $, or /regex/
			cmd = strings.TrimLeft(cmd, "0123456789$,!")
			if strings.HasPrefix(cmd, "/") {
				if j := strings.IndexByte(cmd[1:], '/'); j >= 0 {
					cmd = strings.TrimSpace(cmd[j+2:])
				}
			}
			switch {
			case strings.HasPrefix(cmd, "e ") || cmd == "e":
				w.hit(c, ruleExecOption, med, "sed's e command runs a shell command")
				if body := strings.TrimSpace(cmd[1:]); body != "" {
					w.reparse(body, "sed e", nil, nil, false)
				}
			case len(cmd) > 2 && cmd[0] == 's':
				if repl, ok := sedSubstExec(cmd); ok {
					w.hit(c, ruleExecOption, med, "sed s///e runs the edited line as a shell command")
					if repl != "" && !strings.ContainsAny(repl, `\&`) {
						w.reparse(repl, "sed s///e", nil, nil, false)
					}
				}
			}
		}
	}
}

// sedSubstExec reports whether an s command carries the e flag, and
// returns its replacement text (what is run when it replaces the whole
// line).
func sedSubstExec(cmd string) (string, bool) {
	d := cmd[1]
	n := 0
	i := 2
	replStart := -1
	for ; i < len(cmd) && n < 2; i++ {
		if cmd[i] == '\\' {
			i++
			continue
		}
		if cmd[i] == d {
			n++
			if n == 1 {
				replStart = i + 1
			}
		}
	}
	if n < 2 {
		return "", false
	}
	repl := cmd[replStart : i-1]
	flags := cmd[i:]
	if k := strings.IndexAny(flags, " }"); k >= 0 {
		flags = flags[:k]
	}
	return repl, strings.ContainsRune(flags, 'e')
}
