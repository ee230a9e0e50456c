package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Aliases and functions named like common commands replace those commands
// for the rest of the shell session (for every session when written to an
// rc file): `alias ls='rm -rf'`, `cd() { …; }`. What the new body does is
// judged where it runs; the redefinition itself is MEDIUM
// (command-shadowing), HIGH for programs people type passwords or keys into
// (a fake sudo or ssh captures them). A body that only wraps the command
// it shadows (`alias ls='ls --color'`, `cd() { builtin cd "$@" && ls; }`)
// is left alone.

// shellBuiltins are builtins people rely on without a second look.
var shellBuiltins = core.LazySet("cd", "pwd", "exit", "export", "source", ".", "exec", "kill", "read", "echo", "printf", "test", "type",
	"unalias", "unset", "set", "trap", "command", "builtin", "alias", "history", "jobs", "wait", "umask", "ulimit", "hash")

// credentialPrompts are programs that ask for passwords, passphrases or
// tokens, or hold keys.
var credentialPrompts = core.LazySet("sudo", "su", "doas", "pkexec", "ssh", "scp", "sftp", "ssh-add", "passwd", "gpg", "git", "login",
	"kinit", "op", "aws", "gh", "docker", "security", "mysql", "psql", "vault", "openssl", "npm", "pip")

// shadows reports whether defining name replaces a common command.
func shadows(name string) bool {
	n := strings.ToLower(name)
	return knownCommand(n) || shellBuiltins()[n] || wrapperOptArgs[n] != "" || interpreters[n].lang != "" || credentialPrompts()[n]
}

// shadowing judges a redefinition of name (kind "alias" or "function").
func (w *walker) shadowing(kind, name string, wraps bool, span [2]int) {
	if !shadows(name) || wraps && (kind == "alias" || !credentialPrompts()[strings.ToLower(name)]) {
		// A function around sudo or ssh that also calls the real one is
		// exactly how a password is captured: never left alone.
		return
	}
	lvl, why := med, " replaces the "+name+" command for the rest of the session"
	if credentialPrompts()[strings.ToLower(name)] {
		lvl, why = high, " replaces "+name+", a program people type passwords and passphrases into: a fake one captures them"
	}
	w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: ruleCommandShadowing, Level: lvl, Detail: kind + " " + name + why, Span: span, Command: name})
}

// aliasWraps reports whether an alias body only runs the command it is
// named after (with options, or through command/builtin/\name).
func aliasWraps(name, body string) bool {
	f := strings.Fields(body)
	for len(f) > 0 && (f[0] == "command" || f[0] == "builtin" || strings.Contains(f[0], "=")) {
		f = f[1:]
	}
	if len(f) == 0 {
		return false
	}
	first := strings.TrimPrefix(strings.Trim(f[0], `'"`), `\`)
	return first == name || CanonicalName(first) == CanonicalName(name)
}

// funcWraps reports whether a function body calls the command it shadows
// through command or builtin (cd() { builtin cd "$@"; }), or the program
// by path (ls() { /bin/ls -G "$@"; }).
func funcWraps(name string, body *syntax.Stmt) bool {
	found := false
	syntax.Walk(body, func(n syntax.Node) bool {
		ce, ok := n.(*syntax.CallExpr)
		if !ok || len(ce.Args) == 0 || found {
			return !found
		}
		first := ce.Args[0].Lit()
		switch {
		case (first == "command" || first == "builtin") && len(ce.Args) > 1 && ce.Args[1].Lit() == name:
			found = true
		case strings.HasSuffix(first, "/"+name) || first == `\`+name:
			found = true
		}
		return !found
	})
	return found
}
