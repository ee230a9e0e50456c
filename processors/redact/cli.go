package redact

import (
	"strings"
)

// Command lines that carry a password in a flag. The detector finds the
// command word (by keyword), reads the shell words of its pipeline stage
// (quotes respected, backslash-continued lines followed), and removes the
// value of each listed flag.

type cliFlag struct {
	name     string
	attached bool   // -pSECRET
	spaced   bool   // -p SECRET
	eq       bool   // --password=SECRET
	userPass bool   // the value is user:password; the password is the secret
	sep      byte   // for userPass, the separator when it is not ':' (lftp -u user,password)
	keyValue bool   // the value is KEY=VALUE, whatever KEY is; VALUE is the secret
	prefix   string // the value must start with this (openssl "pass:"), which is kept
}

type cliSpec struct {
	cmds   []string
	prefix bool   // cmds are prefixes of the command word (ldapsearch, ldapadd…)
	sub    string // a word that must come before the flag (login, set)
	flags  []cliFlag
}

var cliSpecs = []cliSpec{
	{cmds: []string{"curl"}, flags: []cliFlag{
		{name: "-u", attached: true, spaced: true, userPass: true},
		{name: "--user", spaced: true, eq: true, userPass: true},
		{name: "-U", attached: true, spaced: true, userPass: true},
		{name: "--proxy-user", spaced: true, eq: true, userPass: true},
	}},
	{cmds: []string{"mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlsh", "mysqlcheck", "mysqlpump", "mariadb", "mariadb-dump", "mariadb-admin"},
		flags: []cliFlag{{name: "-p", attached: true}}},
	{cmds: []string{"redis-cli", "valkey-cli"}, flags: []cliFlag{
		{name: "-a", spaced: true}, {name: "--pass", spaced: true}}},
	{cmds: []string{"sshpass"}, flags: []cliFlag{{name: "-p", attached: true, spaced: true}}},
	{cmds: []string{"docker", "podman", "buildah", "skopeo", "helm", "oras", "nerdctl", "crane", "regctl", "az", "oc", "cf", "argocd"},
		sub: "login", flags: []cliFlag{{name: "-p", spaced: true}, {name: "--password", spaced: true, eq: true}}},
	{cmds: []string{"sqlcmd", "bcp", "osql"}, flags: []cliFlag{{name: "-P", attached: true, spaced: true}}},
	{cmds: []string{"ldap"}, prefix: true, flags: []cliFlag{{name: "-w", spaced: true}}},
	{cmds: []string{"mongo", "mongosh", "mongodump", "mongorestore", "mongoimport", "mongoexport", "mongostat", "mongotop"},
		flags: []cliFlag{{name: "-p", spaced: true}, {name: "--password", spaced: true, eq: true}}},
	{cmds: []string{"openssl"}, flags: []cliFlag{
		{name: "-passin", spaced: true, prefix: "pass:"}, {name: "-passout", spaced: true, prefix: "pass:"},
		{name: "-pass", spaced: true, prefix: "pass:"}, {name: "-k", spaced: true}}},
	{cmds: []string{"aws"}, sub: "set", flags: []cliFlag{
		{name: "aws_secret_access_key", spaced: true}, {name: "aws_session_token", spaced: true}}},
	{cmds: []string{"keytool", "jarsigner"}, flags: []cliFlag{
		{name: "-storepass", spaced: true}, {name: "-keypass", spaced: true},
		{name: "-srcstorepass", spaced: true}, {name: "-deststorepass", spaced: true},
		{name: "-srckeypass", spaced: true}, {name: "-destkeypass", spaced: true}}},
	{cmds: []string{"zip", "unzip", "zipcloak"}, flags: []cliFlag{{name: "-P", spaced: true}, {name: "--password", spaced: true}}},
	{cmds: []string{"7z", "7za", "7zr"}, flags: []cliFlag{{name: "-p", attached: true}}},
	{cmds: []string{"gpg", "gpg2"}, flags: []cliFlag{{name: "--passphrase", spaced: true, eq: true}}},
	{cmds: []string{"rar", "unrar"}, flags: []cliFlag{{name: "-p", attached: true}}},
	{cmds: []string{"ssh-keygen"}, flags: []cliFlag{{name: "-N", spaced: true}, {name: "-P", spaced: true}}},
	{cmds: []string{"kubectl", "oc"}, sub: "secret", flags: []cliFlag{{name: "--from-literal", spaced: true, eq: true, keyValue: true}}},
	{cmds: []string{"gh"}, sub: "set", flags: []cliFlag{{name: "--body", spaced: true, eq: true}, {name: "-b", spaced: true, attached: true}}},
	{cmds: []string{"htpasswd"}, flags: nil}, // htpasswd -b FILE USER PASSWORD: positional, see below
	{cmds: []string{"xfreerdp", "xfreerdp3", "wlfreerdp", "sdl-freerdp", "sdl-freerdp3"}, flags: []cliFlag{{name: "/p:", attached: true}}},
	{cmds: []string{"rdesktop"}, flags: []cliFlag{{name: "-p", spaced: true}}},
	{cmds: []string{"lftp"}, flags: []cliFlag{{name: "-u", spaced: true, userPass: true, sep: ','}, {name: "--user", spaced: true, userPass: true, sep: ','}}},
	{cmds: []string{"ipmitool"}, flags: []cliFlag{{name: "-P", spaced: true}}},
	{cmds: []string{"mosquitto_pub", "mosquitto_sub", "mosquitto_rr"}, flags: []cliFlag{{name: "-P", spaced: true}, {name: "--pw", spaced: true}}},
	{cmds: []string{"wget"}, flags: []cliFlag{{name: "--password", spaced: true, eq: true}, {name: "--http-password", spaced: true, eq: true}, {name: "--ftp-password", spaced: true, eq: true}, {name: "--proxy-password", spaced: true, eq: true}}},
}

func cliKeywords() []string {
	var kws []string
	for _, sp := range cliSpecs {
		kws = append(kws, sp.cmds...)
	}
	return kws
}

// cliWord is one shell word of a stage: its raw span.
type cliWord struct{ a, b int }

// The end of a command word, and its last '/', are found once per word, so
// many hits inside one word (az=az=…, /curl/curl/…) do not each walk it.
func detectCLIPassword(sc *scan, hits []ruleHit) {
	s := sc.s
	next := 0
	var buf [32]cliWord
	base := cmdBase{we: -1}
	for _, h := range hits {
		if sc.over {
			return
		}
		if h.start < next || !cmdStart(s, h.start) {
			continue
		}
		if h.end < len(s) && isWordByte(s[h.end]) && !strings.EqualFold(s[h.start:h.end], "ldap") {
			continue // "gh" in ghp_…, "mysql" in mysqldump (a keyword of its own); ldap is a prefix
		}
		// The command word, and the spec it belongs to.
		we := sc.runEnd(runCLIWord, h.start)
		word := s[h.start:we]
		spec := findCLISpec(base.of(sc, h.start, we))
		if spec == nil {
			continue
		}
		words, end := stageWords(s, we, buf[:0])
		sc.charge(end - we)
		next = end
		if word == "htpasswd" {
			htpasswd(sc, s, words)
			continue
		}
		subSeen := spec.sub == ""
		for i, w := range words {
			raw := s[w.a:w.b]
			if !subSeen {
				subSeen = raw == spec.sub
				continue
			}
			for _, f := range spec.flags {
				va, vb := -1, -1
				switch {
				case raw == f.name && f.spaced && i+1 < len(words):
					v := words[i+1]
					if s[v.a] == '-' && len(f.prefix) == 0 {
						continue
					}
					va, vb = v.a, v.b
				case f.eq && strings.HasPrefix(raw, f.name+"="):
					va, vb = w.a+len(f.name)+1, w.b
				case f.attached && len(raw) > len(f.name) && strings.HasPrefix(raw, f.name) && raw[len(f.name)] != '=':
					va, vb = w.a+len(f.name), w.b
				default:
					continue
				}
				va, vb = unquote(s, va, vb)
				if f.prefix != "" {
					if !strings.HasPrefix(s[va:vb], f.prefix) {
						continue
					}
					va += len(f.prefix)
				}
				if f.keyValue {
					e := strings.IndexByte(s[va:vb], '=')
					if e <= 0 {
						continue
					}
					va += e + 1
				}
				if f.userPass {
					v := s[va:vb]
					sep := byte(':')
					if f.sep != 0 {
						sep = f.sep
					}
					c := strings.IndexByte(v, sep)
					switch {
					case c >= 0 && c < len(v)-1:
						va += c + 1
					case looksRandomToken(strings.TrimSuffix(v, ":"), 16, sc.r.threshold):
						vb = va + len(strings.TrimSuffix(v, ":")) // curl -u TOKEN: (Stripe style)
					default:
						continue
					}
				}
				if va < vb && !isPlaceholderValue(s[va:vb]) {
					sc.emit(va, vb, h.start, vb)
				}
			}
		}
	}
}

// htpasswd -b[other flags] FILE USER PASSWORD (or -nb USER PASSWORD).
func htpasswd(sc *scan, s string, words []cliWord) {
	var pos []cliWord
	batch, n := false, false
	for _, w := range words {
		raw := s[w.a:w.b]
		if strings.HasPrefix(raw, "-") && len(raw) > 1 {
			batch = batch || strings.Contains(raw, "b")
			n = n || strings.Contains(raw, "n")
			continue
		}
		pos = append(pos, w)
	}
	want := 3
	if n {
		want = 2
	}
	if !batch || len(pos) < want {
		return
	}
	w := pos[want-1]
	va, vb := unquote(s, w.a, w.b)
	if va < vb && !isPlaceholderValue(s[va:vb]) {
		sc.emit(va, vb, w.a, w.b)
	}
}

// cmdBase finds the base name of command words that end at one index
// (the text after their last '/'), walking the word once for all the
// keyword hits inside it.
type cmdBase struct {
	we    int // the words' end; 0: nothing known
	from  int // s[from:we] has been searched
	slash int // the last '/' in s[from:we], or -1
}

// of returns the base name of the word s[a:we].
func (c *cmdBase) of(sc *scan, a, we int) string {
	if c.we != we || a < c.from {
		*c = cmdBase{we: we, from: we, slash: -1}
	}
	if c.slash < 0 && a < c.from {
		if k := strings.LastIndexByte(sc.s[a:c.from], '/'); k >= 0 {
			c.slash = a + k
		}
		sc.charge(c.from - a)
		c.from = a
	}
	if c.slash >= a {
		return sc.s[c.slash+1 : we]
	}
	return sc.s[a:we]
}

// findCLISpec returns the spec of a command word's base name (the text
// after its last '/').
func findCLISpec(word string) *cliSpec {
	word = strings.TrimSuffix(word, ".exe")
	for i := range cliSpecs {
		sp := &cliSpecs[i]
		for _, c := range sp.cmds {
			if word == c || sp.prefix && strings.HasPrefix(word, c) && isAlnumWord(word[len(c):]) {
				return sp
			}
		}
	}
	return nil
}

func isAlnumWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) {
			return false
		}
	}
	return true
}

// cmdStart reports whether a command word may start at i: at the start of
// the text or after a blank, a separator, a quote, a path, ( or `.
func cmdStart(s string, i int) bool {
	if i == 0 {
		return true
	}
	switch s[i-1] {
	case ' ', '\t', '\n', '\r', ';', '|', '&', '(', '`', '"', '\'', '/', '{', '=', '$':
		return true
	}
	return false
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func isStageEnd(c byte) bool { return c == '\n' || c == '|' || c == ';' || c == '&' || c == '\r' }

// stageWords splits the rest of a pipeline stage, from i, into shell words,
// following quotes and backslash-newline continuations. It returns the
// words and where the stage ends.
func stageWords(s string, i int, out []cliWord) ([]cliWord, int) {
	lim := min(len(s), i+4096)
	for i < lim && len(out) < 64 {
		for i < lim && (isBlank(s[i]) || (s[i] == '\\' && i+1 < lim && (s[i+1] == '\n' || s[i+1] == '\r'))) {
			if s[i] == '\\' {
				i++
			}
			i++
			for i < lim && (s[i] == '\n' || s[i] == '\r') {
				i++
			}
		}
		if i >= lim || isStageEnd(s[i]) {
			break
		}
		a := i
		for i < lim && !isBlank(s[i]) && !isStageEnd(s[i]) {
			if q := s[i]; q == '"' || q == '\'' {
				k := strings.IndexByte(s[i+1:lim], q)
				if k < 0 {
					i = lim
					break
				}
				i += k + 2
				continue
			}
			if s[i] == '\\' && i+1 < lim && (s[i+1] == '\n' || s[i+1] == '\r') {
				break // a line continuation ends the word
			}
			if s[i] == '\\' {
				i = min(i+2, lim) // an escaped character, or a lone trailing backslash
				continue
			}
			i++
		}
		if i > a {
			out = append(out, cliWord{a, min(i, lim)})
		} else {
			i++ // never loop without progress
		}
	}
	return out, i
}

// unquote narrows [a, b) to the inside of its quotes when it is quoted.
func unquote(s string, a, b int) (int, int) {
	if b-a >= 2 && (s[a] == '"' || s[a] == '\'') && s[b-1] == s[a] {
		return a + 1, b - 1
	}
	return a, b
}

// ---- a user flag and a password flag on one command line ----

// userPassKeywords are the password flags the open-world rule reads.
var userPassKeywords = []string{"-p", "-pw", "--password", "--pass", "--pw", "-password"}

// userFlags name the user of a command whose -p flag is then its password.
var userFlags = map[string]bool{"-u": true, "-U": true, "-l": true, "--user": true, "--username": true, "-user": true, "-username": true, "--login": true}

// detectUserPassFlags is the open-world rule for command lines: a program
// Vigil has no table for, given a user (-u NAME, --username NAME, -l NAME)
// and a -p / -P / --password VALUE, takes VALUE as that user's password
// (snowsql, cqlsh, evil-winrm, hydra …). VALUE must read like one: a
// letter and a digit or symbol, no path, no variable, no port; programs
// whose -p means something else (mysql's -p NAME is a database) have
// their own specs and are left to them.
func detectUserPassFlags(sc *scan, hits []ruleHit) {
	s := sc.s
	next := 0
	var buf [64]cliWord
	for _, h := range hits {
		if sc.over {
			return
		}
		flag := h.start
		if flag < next || flag == 0 || !isBlank(s[flag-1]) {
			continue
		}
		// The stage's start: back to a line start or a shell operator.
		a := flag
		for a > 0 && flag-a < 1024 && !isStageEnd(s[a-1]) {
			a--
		}
		for a < flag && isBlank(s[a]) {
			a++
		}
		words, end := stageWords(s, a, buf[:0])
		sc.charge(end - a)
		next = end
		if len(words) < 4 {
			continue
		}
		cmd := s[words[0].a:words[0].b]
		if i := strings.LastIndexByte(cmd, '/'); i >= 0 {
			cmd = cmd[i+1:]
		}
		if findCLISpec(cmd) != nil {
			continue
		}
		user := false
		for i, w := range words[:len(words)-1] {
			if userFlags[s[w.a:w.b]] && s[words[i+1].a] != '-' {
				user = true
			}
		}
		if !user {
			continue
		}
		for i, w := range words[:len(words)-1] {
			if w.a < flag {
				continue
			}
			switch s[w.a:w.b] {
			case "-p", "-P", "-pw", "--password", "--pass", "--pw", "-password":
			default:
				continue
			}
			va, vb := unquote(s, words[i+1].a, words[i+1].b)
			if v := s[va:vb]; typedPassword(v) {
				sc.emit(va, vb, w.a, vb)
			}
		}
	}
}

// typedPassword reports whether a command-line value reads like a
// password: 6 to 128 characters, a letter and a digit or symbol, no path,
// file name, variable, port list or placeholder.
func typedPassword(v string) bool {
	if len(v) < 6 || len(v) > 128 || strings.ContainsAny(v, "/$`") || isPlaceholderValue(v) || looksLikePath(v) {
		return false
	}
	letter, other := false, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case isUpper(c) || isLower(c):
			letter = true
		default:
			other = true
		}
	}
	if !letter || !other || strings.Trim(strings.TrimPrefix(v, "v"), "0123456789.") == "" {
		return false // v1.2.3: a version
	}
	if dot := strings.LastIndexByte(v, '.'); dot > 0 && len(v)-dot <= 5 && isPlainWords(v[dot+1:]) {
		return false // a file name: dump.sql, id_rsa.pub
	}
	return true
}
