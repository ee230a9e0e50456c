package shell

import (
	"strings"

	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Commands whose name Vigil cannot resolve: an unset or computed variable
// (`$X -rf /`, `${0/x/r}m -rf /`, `$SUDO_CMD rm -rf /`), a substitution whose
// output is unknown (`$(get-tool) …`). Whatever the name turns out to be,
// the arguments are what the program acts on, so an unresolved program fed
// destructive arguments is judged at least as risky as the worst command
// those arguments fit:
//
//   - `-c CODE` / `-e CODE`: the code of a shell or an interpreter
//     ($SHELL -c, $SH -c) — analysed as shell code and as code;
//   - a first operand that names a program Vigil knows: the variable is a
//     wrapper or a prefix (`$SUDO rm -rf /`, `$RUN bash -c …`), and the rest
//     is judged as that command;
//   - recursive or root-removal flags (`-r`, `-R`, `-rf`, `--recursive`,
//     `--no-preserve-root`): judged as rm with the same arguments;
//   - `of=`/`if=`: judged as dd; a raw disk device: judged as mkfs;
//   - a mode (`777`, `u+s`) or an owner (`root:root`) then paths: judged as
//     chmod or chown.
//
// Any unresolved program is at least MEDIUM (`unresolved-command`): Vigil
// cannot tell what it runs. A name whose directory alone is unknown
// (`$(go env GOPATH)/bin/golangci-lint`) is resolved to its base name
// before this applies (see commandName).

// commandName returns the canonical name of a command word, and whether it
// stays unresolved. A dynamic directory with a literal base name
// ("$GOPATH/bin/tool", "$(npm bin)/eslint") names that base.
func commandName(f field) (string, bool) {
	if !f.dyn {
		return CanonicalName(f.s), false
	}
	i := strings.LastIndexByte(f.s, '/')
	if i >= 0 && i < len(f.s)-1 {
		if base := f.s[i+1:]; !strings.ContainsAny(base, "$`(){}…*?[") {
			return CanonicalName(base), false
		}
	}
	return "", true
}

var (
	modeArgRe  = core.LazyRE(`^(?:[0-7]{3,4}|[ugoa]*[-+=][rwxXst]+(?:,[ugoa]*[-+=][rwxXst]+)*)$`)
	ownerArgRe = core.LazyRE(`^[A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?:?$|^:[A-Za-z_][\w.-]*$`)
)

// dynamicCommand handles a command whose name is not known statically.
func (w *walker) dynamicCommand(c *command) {
	w.hit(c, ruleUnresolvedCommand, high, "the program to run ("+core.TrimArg(c.path)+") could not be resolved, so what it does is unknown")
	as := func(name string, args []string, argDyn []bool, argData []*data) {
		fs := make([]field, 0, len(args)+1)
		fs = append(fs, field{s: name})
		for i, a := range args {
			f := field{s: a}
			if i < len(argDyn) {
				f.dyn = argDyn[i]
			}
			if i < len(argData) {
				f.d = argData[i]
			}
			fs = append(fs, f)
		}
		w.runSynthetic(&command{via: []string{"unresolved " + core.TrimArg(c.path) + " as " + name}, sudo: c.sudo}, fs, stmtCtx{stdin: c.stdin})
	}
	a := c.args
	for i, x := range a {
		if x == "--" || !strings.HasPrefix(x, "-") {
			break
		}
		if (x == "-c" || x == "-e") && i+1 < len(a) {
			w.flowExec(c, flowOf(c, i+1), "an unresolved program's "+x)
			w.reparse(a[i+1], "$? "+x, nil, c.stdin, false)
			w.analyzeCode("unknown", a[i+1], c, "$? "+x)
			return
		}
	}
	// A wrapper or prefix: the first operand names a program.
	for i, x := range a {
		if x == "--" {
			continue
		}
		if strings.HasPrefix(x, "-") {
			continue
		}
		if i < len(c.argDyn) && c.argDyn[i] {
			break
		}
		n := CanonicalName(x)
		if knownCommand(n) || wrapperOptArgs[n] != "" || interpreters[n].lang != "" || n == "nohup" || n == "exec" {
			as(x, a[i+1:], tail(c.argDyn, i+1), tailData(c.argData, i+1))
			return
		}
		break
	}
	ops := operands(a)
	switch {
	case hasArgPrefix(a, "of=") || hasArgPrefix(a, "if="):
		as("dd", a, c.argDyn, c.argData)
		return
	case len(ops) >= 2 && modeArgRe.MatchString(ops[0]):
		as("chmod", a, c.argDyn, c.argData)
		return
	case len(ops) >= 2 && strings.Contains(ops[0], ":") && ownerArgRe.MatchString(ops[0]):
		as("chown", a, c.argDyn, c.argData)
		return
	case flagSet(a, 'r', "--recursive") || flagSet(a, 'R') || hasArg(a, "--no-preserve-root"):
		as("rm", a, c.argDyn, c.argData)
		return
	}
	for _, o := range ops {
		if classify(o, c.cwd, "") == pcDevice {
			as("mkfs", a, c.argDyn, c.argData)
			return
		}
	}
}

func tail(b []bool, i int) []bool {
	if i >= len(b) {
		return nil
	}
	return b[i:]
}

func tailData(d []*data, i int) []*data {
	if i >= len(d) {
		return nil
	}
	return d[i:]
}
