package redact

import "strings"

// Span confinement in command-bearing fields.
//
// Redaction runs before anything is scored or shown, so a span that
// swallowed part of a command would change what the log says will run: a
// private-key detector that reads from a BEGIN line to an END line removes
// the `rm -rf ~` an agent put between them. In a string that holds a
// command or code (CommandKey), no redacted span crosses a shell word, an
// operator, a quote or a line: a finding that would is cut into its pieces
// (the runs of bytes between separators), and only the pieces that hold
// secret material are replaced. Every separator of the text stays where it
// was, so the stored command has the same words, operators, quotes and
// lines as the one that runs.
//
// Which pieces are replaced, for a finding that crosses a separator:
//
//   - On each line of the finding that holds a piece of secret material
//     (secretPiece: at least 8 bytes of the base64 and token alphabet with a
//     digit or one of + / =, or 24 such bytes), those pieces are replaced;
//     the other pieces of the line (armour such as -----BEGIN, PRIVATE,
//     KEY-----, a header name, Bearer) stay visible.
//   - A line of a multi-line finding with no such piece is not secret
//     material (a key's body is base64 lines) and stays visible whole.
//   - Where confinement cannot keep the command visible, the replaced
//     piece is named RuleUnsafeSpan instead of the detector's rule, and the
//     scorer treats that as HIGH (a person judges what could not be shown):
//     a piece of secret material in command position (the first word of a
//     line, or the word after ; & | ( ` or {), which may be a program; and
//     a one-line finding that crosses a separator but holds no piece of
//     secret material, whose pieces are all replaced (a password with a ;
//     in it, a token without a digit).
//
// Findings that do not cross a separator (nearly all: a token is one word)
// are left as they are, and the work budget's whole-string replacement
// (RuleBudget) is not cut: it says the string could not be examined.

// RuleUnsafeSpan names a redaction in a command-bearing field that may hide
// part of what the command does (see CommandKey). The risk scorer scores an
// action that carries one HIGH.
const RuleUnsafeSpan = "vigil.unsafe-span"

// CommandKey reports whether a string found under the map key key holds a
// command or code, so that its redactions are confined to shell words and
// lines: command, cmd, script, code, cli_command, args (a command given
// as one string), and every key that contains "command", "cmd", "script",
// "args" or "argument" in any case (GIT_SSH_COMMAND, shellCommand,
// prescript, raw_args, arguments: tool arguments sent as a JSON string).
func CommandKey(key string) bool {
	k := strings.ToLower(key)
	switch k {
	case "code", "args", "argv", "input", "program", "exec", "run", "shell", "sql", "query", "source", "expression":
		return true
	}
	for _, part := range []string{"command", "cmd", "script", "args", "argument"} {
		if strings.Contains(k, part) {
			return true
		}
	}
	return false
}

// isSep reports whether c ends a shell word: blanks and line ends,
// operators, quotes, backslash and the backquote.
func isSep(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', ';', '&', '|', '<', '>', '(', ')', '`', '\'', '"', '\\', '{', '}':
		return true
	}
	return false
}

func isLineEnd(c byte) bool { return c == '\n' || c == '\r' }

// secretPiece reports whether a piece of a finding that crosses separators
// is secret material: base64, hex or token bytes, long enough and not a
// plain word.
func secretPiece(p string) bool {
	if len(p) < 8 {
		return false
	}
	marked := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '-':
		case c >= '0' && c <= '9', c == '+', c == '/', c == '=':
			marked = true
		default:
			return false
		}
	}
	return marked || len(p) >= 24
}

// commandPosition reports whether the piece of s starting at i is where a
// shell reads a program name: the first word of the text or of a line, or
// the word after an operator that starts a command.
func commandPosition(s string, i int) bool {
	j := i - 1
	for j >= 0 && (s[j] == ' ' || s[j] == '\t') {
		j--
	}
	if j < 0 {
		return true
	}
	switch s[j] {
	case '\n', '\r', ';', '&', '|', '(', '`', '{':
		return true
	}
	return false
}

// crosses reports whether s[a:b] holds a separator.
func crosses(s string, a, b int) bool {
	for i := a; i < b; i++ {
		if isSep(s[i]) {
			return true
		}
	}
	return false
}

// confine returns fs (sorted, disjoint findings in s) with every finding
// that crosses a separator cut into the pieces it replaces (see above).
// The result is sorted and disjoint; each finding in it lies within one
// piece of s.
func confine(s string, fs []Finding) []Finding {
	cut := false
	for _, f := range fs {
		if f.Rule != RuleBudget && f.Rule != ruleRedactionError && crosses(s, f.Start, f.End) {
			cut = true
			break
		}
	}
	if !cut {
		return fs
	}
	out := make([]Finding, 0, len(fs)+4)
	for _, f := range fs {
		if f.Rule == RuleBudget || f.Rule == ruleRedactionError || !crosses(s, f.Start, f.End) {
			out = append(out, f)
			continue
		}
		out = confineOne(s, f, out)
	}
	return out
}

// piece is a run of non-separator bytes within a finding.
type piece struct{ start, end int }

// confineOne appends to out the pieces of finding f that are replaced.
func confineOne(s string, f Finding, out []Finding) []Finding {
	// Split the finding into lines, and each line into pieces.
	var lines [][]piece
	var cur []piece
	multi := false
	i := f.Start
	for i < f.End {
		c := s[i]
		switch {
		case isLineEnd(c):
			lines = append(lines, cur)
			cur = nil
			multi = true
			i++
		case isSep(c):
			i++
		default:
			j := i
			for j < f.End && !isSep(s[j]) {
				j++
			}
			cur = append(cur, piece{i, j})
			i = j
		}
	}
	lines = append(lines, cur)
	n := len(out)
	for _, ps := range lines {
		secret := false
		for _, p := range ps {
			if secretPiece(s[p.start:p.end]) {
				secret = true
				break
			}
		}
		switch {
		case secret:
			for _, p := range ps {
				if !secretPiece(s[p.start:p.end]) {
					continue
				}
				rule := f.Rule
				if commandPosition(s, p.start) {
					rule = RuleUnsafeSpan
				}
				out = append(out, Finding{Rule: rule, Start: p.start, End: p.end})
			}
		case !multi:
			for _, p := range ps {
				out = append(out, Finding{Rule: RuleUnsafeSpan, Start: p.start, End: p.end})
			}
		}
	}
	if len(out) == n {
		// A multi-line finding with no line of secret material: what the
		// detector read as a secret is not shaped like one, and showing it
		// could show the secret. Replace every piece; a person judges.
		for _, ps := range lines {
			for _, p := range ps {
				out = append(out, Finding{Rule: RuleUnsafeSpan, Start: p.start, End: p.end})
			}
		}
	}
	return out
}
