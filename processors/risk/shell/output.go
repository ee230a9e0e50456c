package shell

import (
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"github.com/vigil-dev/vigil/processors/risk/core"
)

// outputOf works out what c prints on stdout, statically where it can: echo
// and printf of literals, decoders applied to known input, listings for xargs.
// Everything else is described only by where its data came from.
func (w *walker) outputOf(c *command) *data {
	in := c.stdin
	passFlags := func() flow {
		if in == nil {
			return 0
		}
		return in.flags
	}
	argFlags := c.argFlags()
	allStatic := true
	for _, d := range c.argDyn {
		if d {
			allStatic = false
		}
	}
	switch c.name {
	case "":
		return &data{flags: passFlags() | flowUnknownXf | argFlags}
	case "echo":
		args := c.args
		nl, esc := true, false
		for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && strings.Trim(args[0][1:], "neE") == "" {
			if strings.ContainsRune(args[0], 'n') {
				nl = false
			}
			if strings.ContainsRune(args[0], 'e') {
				esc = true
			}
			args = args[1:]
		}
		s := strings.Join(args, " ")
		if esc {
			s = DecodeANSIC(s)
		}
		if nl {
			s += "\n"
		}
		return &data{text: s, known: allStatic, flags: flowStatic | argFlags, items: strings.Fields(s)}
	case "printf":
		args := c.args
		if len(args) > 0 && args[0] == "--" {
			args = args[1:]
		}
		if len(args) > 1 && args[0] == "-v" {
			return &data{known: true}
		}
		if len(args) == 0 {
			return &data{known: true}
		}
		s := printf(args[0], args[1:])
		return &data{text: s, known: allStatic, flags: flowStatic | argFlags, items: strings.Fields(s)}
	case "cat", "tac", "head", "tail", "more", "less", "nl", "strings", "od", "hexdump":
		ops := operands(c.args)
		if c.name == "head" || c.name == "tail" {
			ops = nil
			for i, a := range c.args {
				if strings.HasPrefix(a, "-") {
					continue
				}
				if i > 0 && (c.args[i-1] == "-n" || c.args[i-1] == "-c") {
					continue
				}
				ops = append(ops, a)
			}
		}
		if len(ops) == 0 || (len(ops) == 1 && ops[0] == "-") {
			if in == nil {
				return &data{}
			}
			if c.name == "cat" {
				return in
			}
			return &data{text: in.text, flags: in.flags, paths: in.paths}
		}
		d := &data{known: c.name == "cat"}
		for _, p := range ops {
			appendData(d, w.fileData(p))
		}
		if d.text == "" {
			d.known = false
		}
		return d
	case "base64", "base32", "b64decode", "openssl", "basenc":
		decode := flagSet(c.args, 'd', "--decode") || flagSet(c.args, 'D') || c.name == "b64decode"
		if c.name == "openssl" {
			decode = hasArg(c.args, "-d") && (hasArg(c.args, "base64") || hasArg(c.args, "-base64") || hasArg(c.args, "-a"))
			if !decode {
				if hasArg(c.args, "enc", "base64") {
					return &data{flags: passFlags() | flowEncoded, paths: pathsOf(in)}
				}
				if hasArg(c.args, "s_client") {
					return &data{flags: flowNetwork}
				}
				return &data{flags: passFlags() | flowEncoded | flowCmdOut, paths: pathsOf(in)}
			}
		}
		src := in
		if ops := operands(c.args); len(ops) > 0 && c.name != "openssl" {
			src = w.fileData(ops[0])
		}
		if !decode {
			return &data{flags: srcFlags(src) | flowEncoded, paths: pathsOf(src)}
		}
		d := &data{flags: srcFlags(src) | flowDecoded}
		if src != nil && src.known && c.name != "base32" {
			if b, ok := core.DecodeBase64(src.text); ok {
				d.text, d.known = b, true
			}
		}
		return d
	case "xxd":
		if flagSet(c.args, 'r') {
			d := &data{flags: passFlags() | flowDecoded}
			if in != nil && in.known && (flagSet(c.args, 'p') || hasArg(c.args, "-ps", "-plain")) {
				if b, err := hex.DecodeString(strings.Join(strings.Fields(in.text), "")); err == nil {
					d.text, d.known = string(b), true
				}
			}
			return d
		}
		return &data{flags: passFlags() | flowEncoded}
	case "tr":
		d := &data{flags: passFlags() | flowDecoded}
		ops := operands(c.args)
		if in != nil && in.known && len(ops) == 2 && !flagSet(c.args, 'd') && !flagSet(c.args, 'c') {
			if s, ok := translate(in.text, ops[0], ops[1]); ok {
				d.text, d.known = s, true
				if s == in.text {
					d.flags = passFlags()
				}
			}
		}
		return d
	case "rev":
		d := &data{flags: passFlags() | flowDecoded}
		if in != nil && in.known && len(operands(c.args)) == 0 {
			lines := strings.Split(in.text, "\n")
			for i, l := range lines {
				lines[i] = core.Reverse(l)
			}
			d.text, d.known = strings.Join(lines, "\n"), true
		}
		return d
	case "gunzip", "zcat", "bunzip2", "bzcat", "xzcat", "unxz", "uncompress", "zstdcat", "unzstd", "gpg", "age", "ccrypt":
		return &data{flags: passFlags() | flowDecoded}
	case "gzip", "bzip2", "xz", "zstd":
		if flagSet(c.args, 'd', "--decompress") {
			return &data{flags: passFlags() | flowDecoded}
		}
		return &data{flags: passFlags() | flowEncoded, paths: pathsOf(in)}
	case "curl", "wget", "nscurl", "http", "https", "xh", "fetch", "lwp-request", "aria2c":
		if c.name == "wget" {
			o, ok := optValue(c.args, "-O", "--output-document")
			if !ok {
				for _, a := range c.args {
					if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.HasSuffix(a, "O-") {
						o, ok = "-", true
					}
				}
			}
			if !ok || o != "-" {
				return &data{}
			}
		}
		if c.name == "curl" {
			if _, ok := optValue(c.args, "-o", "--output"); ok || flagSet(c.args, 'O', "--remote-name", "--remote-name-all") {
				return &data{}
			}
		}
		return &data{flags: flowNetwork}
	case "nc", "socat", "telnet", "ncat", "openssl-s_client":
		return &data{flags: flowNetwork}
	case "ssh":
		return &data{flags: flowNetwork}
	case "env", "printenv", "set", "export", "declare", "compgen":
		if c.name == "export" || c.name == "declare" || c.name == "set" {
			if len(c.args) > 0 && c.args[0] != "-p" {
				return &data{known: true}
			}
		}
		if c.name == "printenv" && len(c.args) > 0 {
			return &data{flags: flowEnv}
		}
		return &data{flags: flowEnv}
	case "tar", "zip", "7z", "ditto", "cpio", "pax":
		var paths []string
		for _, a := range operands(c.args) {
			if a != "-" && !strings.Contains(a, "@") {
				paths = append(paths, a)
			}
		}
		d := &data{flags: flowArchive | flowFile, paths: paths}
		for _, p := range paths {
			if credentialKind(p) != "" {
				d.flags |= flowSecret
			}
		}
		return d
	case "ls":
		ops := operands(c.args)
		if len(ops) == 0 {
			ops = []string{"."}
		}
		var items []string
		for _, o := range ops {
			items = append(items, strings.TrimSuffix(o, "/")+"/*")
		}
		return &data{flags: flowCmdOut, items: items}
	case "find":
		roots, name := findRoots(c.args)
		var items []string
		for _, r := range roots {
			if name != "" {
				items = append(items, strings.TrimSuffix(r, "/")+"/**/"+name)
			} else {
				items = append(items, strings.TrimSuffix(r, "/")+"/*")
			}
		}
		return &data{flags: flowCmdOut, items: items}
	case "grep", "egrep", "fgrep", "rg", "sed", "awk", "cut", "sort", "uniq", "fold", "column", "paste", "tee", "jq", "yq", "xargs", "iconv", "dos2unix", "sponge", "wc":
		d := &data{flags: passFlags() | argFlags, paths: pathsOf(in)}
		if c.name == "tee" && in != nil {
			d.text, d.known = in.text, in.known
		}
		if c.name != "tee" && c.name != "wc" {
			ops := operands(c.args)
			if len(ops) > 1 || (c.name != "grep" && c.name != "rg" && c.name != "sed" && c.name != "awk" && len(ops) > 0) {
				for _, p := range ops[min(1, len(ops)):] {
					fd := w.fileData(p)
					d.flags |= fd.flags
					d.paths = append(d.paths, fd.paths...)
				}
			}
		}
		return d
	case ":":
		for _, r := range c.redirs {
			if r.isRead() && c.stdin != nil {
				return c.stdin
			}
		}
		return &data{known: true}
	case "{}":
		return &data{known: true}
	case "true", "false", "cd", "export ", "mkdir", "touch", "rm", "cp", "mv", "chmod", "chown", "ln", "kill", "sleep", "test", "[":
		return &data{known: true}
	}
	return &data{flags: flowCmdOut | argFlags&(flowSecret|flowEnv|flowNetwork)}
}

func srcFlags(d *data) flow {
	if d == nil {
		return 0
	}
	return d.flags
}

func pathsOf(d *data) []string {
	if d == nil {
		return nil
	}
	return d.paths
}

// printf renders a printf format with its arguments, for the common
// directives (%s %b %d %c %%); the format is reused while arguments remain.
func printf(format string, args []string) string {
	var b strings.Builder
	ai := 0
	for round := 0; round < 64; round++ {
		used := false
		for i := 0; i < len(format); i++ {
			ch := format[i]
			if ch == '\\' && i+1 < len(format) {
				j := i + 1
				for j < len(format) && j < i+4 && (isHex(format[j]) || format[j] == 'x') {
					j++
				}
				if format[i+1] == 'x' || (format[i+1] >= '0' && format[i+1] <= '7') {
					b.WriteString(DecodeANSIC(format[i:j]))
					i = j - 1
					continue
				}
				b.WriteString(DecodeANSIC(format[i : i+2]))
				i++
				continue
			}
			if ch != '%' || i+1 >= len(format) {
				b.WriteByte(ch)
				continue
			}
			j := i + 1
			for j < len(format) && strings.IndexByte("-+ #0123456789.", format[j]) >= 0 {
				j++
			}
			if j >= len(format) {
				break
			}
			verb := format[j]
			i = j
			if verb == '%' {
				b.WriteByte('%')
				continue
			}
			arg := ""
			if ai < len(args) {
				arg = args[ai]
				ai++
				used = true
			}
			switch verb {
			case 'b':
				b.WriteString(DecodeANSIC(arg))
			case 'c':
				if arg != "" {
					_, n := utf8.DecodeRuneInString(arg)
					b.WriteString(arg[:n])
				}
			default:
				b.WriteString(arg)
			}
		}
		if !used || ai >= len(args) {
			break
		}
	}
	return b.String()
}

// translate applies tr SET1 SET2 with ranges and classes.
func translate(s, set1, set2 string) (string, bool) {
	a, ok1 := expandTrSet(set1)
	bb, ok2 := expandTrSet(set2)
	if !ok1 || !ok2 || len(a) == 0 || len(bb) == 0 {
		return "", false
	}
	m := map[rune]rune{}
	for i, r := range a {
		if i < len(bb) {
			m[r] = bb[i]
		} else {
			m[r] = bb[len(bb)-1]
		}
	}
	var out strings.Builder
	for _, r := range s {
		if t, ok := m[r]; ok {
			out.WriteRune(t)
		} else {
			out.WriteRune(r)
		}
	}
	return out.String(), true
}

func expandTrSet(s string) ([]rune, bool) {
	s = strings.Trim(s, "[]")
	switch s {
	case ":upper:":
		s = "A-Z"
	case ":lower:":
		s = "a-z"
	case ":digit:":
		s = "0-9"
	}
	if strings.Contains(s, "[:") || strings.Contains(s, ":]") {
		return nil, false
	}
	s = DecodeANSIC(s)
	r := []rune(s)
	var out []rune
	for i := 0; i < len(r); i++ {
		if i+2 < len(r) && r[i+1] == '-' && r[i] <= r[i+2] {
			if r[i+2]-r[i] > 1024 {
				return nil, false
			}
			for c := r[i]; c <= r[i+2]; c++ {
				out = append(out, c)
			}
			i += 2
			continue
		}
		out = append(out, r[i])
	}
	return out, true
}
