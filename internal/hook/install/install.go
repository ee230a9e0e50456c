// Package install writes and checks agent clients' hook settings for
// Vigil: which settings file each client reads (project, user, system),
// the hook entries Vigil's hooks take in it, merging them into what is
// there (idempotent, other hooks kept, a backup of the old file), and the
// doctor that says whether each installed hook reaches a node. The CLI's
// `vigil hook install` and `vigil hook doctor` are its front-end.
package install

import (
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vigil-dev/vigil/internal/hook"
	"github.com/vigil-dev/vigil/internal/hook/hookcli"
)

// hookEntry is one hook a client runs: the event, the matcher (Claude
// Code and Gemini), the command's extra flags and the client's timeout.
type hookEntry struct {
	event, matcher string
	flags          string
	timeout        int // seconds (Claude Code), milliseconds (Gemini); 0: none
}

// clientHooks are the hooks install writes, as docs/hooks.md shows them.
func clientHooks(clientName string) []hookEntry {
	switch clientName {
	case hook.ClaudeCode:
		return []hookEntry{
			{"SessionStart", "", "", 15},
			{"PreToolUse", "*", "--budget 50s", 60},
			{"PostToolUse", "*", "", 30},
			{"PermissionDenied", "*", "", 30},
			{"Stop", "", "", 15},
			{"SessionEnd", "", "", 15},
		}
	case hook.Gemini:
		return []hookEntry{
			{"SessionStart", "", "", 15000},
			{"BeforeTool", ".*", "--budget 50s", 60000},
			{"AfterTool", ".*", "", 30000},
		}
	case hook.Cursor:
		return []hookEntry{
			{"beforeShellExecution", "", "--budget 50s", 0},
			{"beforeMCPExecution", "", "--budget 50s", 0},
			{"beforeReadFile", "", "--budget 10s", 0},
			{"afterShellExecution", "", "", 0},
			{"afterMCPExecution", "", "", 0},
			{"stop", "", "", 0},
		}
	}
	return nil
}

// Quote quotes s for a POSIX shell when it needs it.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:=@,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// words splits a command line as a POSIX shell would, for the simple
// quoting install writes (single and double quotes, backslashes). It
// splits on blanks only and expands nothing, so a hand-written
// "cd /x && vigil hook cursor" still shows its vigil words (a shell
// parser refuses the && and would hide that hook from install and
// doctor).
func words(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote, esc := false, rune(0), false
	for _, r := range s {
		switch {
		case esc:
			cur.WriteRune(r)
			esc, in = false, true
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				esc = true
			default:
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '\\':
			esc = true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// Argv is the argument vector of a hook command line as install writes
// it (its words: see words), for running it without a shell.
func Argv(command string) []string { return words(command) }

// isVigilHook reports whether a command runs `vigil hook CLIENT` (the
// binary under any name) or `vigil-hook CLIENT`.
func isVigilHook(command, clientName string) bool {
	w := words(command)
	for i := 0; i+1 < len(w); i++ {
		if w[i+1] == clientName && filepath.Base(w[i]) == hookcli.BinaryName {
			return true
		}
		if i+2 < len(w) && w[i+1] == "hook" && w[i+2] == clientName {
			return true
		}
	}
	return false
}

// Options are install's choices beyond the command: the gating hooks'
// own flags (--budget, --on-pending, --allow-below) and, for system-wide
// settings, Claude Code's allowManagedHooksOnly.
type Options struct {
	Budget     time.Duration // 0: the default 50s
	OnPending  string        // "", hook.Ask or hook.Deny
	AllowBelow string        // "", LOW, MEDIUM or HIGH
	System     bool          // the settings file is the system-wide one
}

// gateFlags are the flags of a gating hook whose default flags are def.
func (o Options) gateFlags(def string) string {
	if !strings.HasPrefix(def, "--budget 50s") {
		return def
	}
	f := def
	if o.Budget > 0 {
		f = "--budget " + o.Budget.String()
	}
	if o.OnPending != "" {
		f += " --on-pending " + o.OnPending
	}
	if o.AllowBelow != "" {
		f += " --allow-below " + o.AllowBelow
	}
	return f
}

// gateTimeout is the client's timeout for a gating hook: the default, or
// the budget and 10 s more when the budget is longer.
func (o Options) gateTimeout(e hookEntry) int {
	if o.Budget <= 50*time.Second || !strings.HasPrefix(e.flags, "--budget 50s") || e.timeout == 0 {
		return e.timeout
	}
	sec := int((o.Budget + 10*time.Second + time.Second - 1) / time.Second)
	if e.timeout >= 1000 { // Gemini: milliseconds
		return sec * 1000
	}
	return sec
}

// Previous reads the gating flags of the Vigil hooks already in the
// settings file at path, so that a reinstall keeps them.
func Previous(path, clientName string) Options {
	var o Options
	cmds, err := FindCommands(path, clientName)
	if err != nil {
		return o
	}
	for _, c := range cmds {
		w := words(c)
		for i := 0; i+1 < len(w); i++ {
			switch w[i] {
			case "--budget":
				if d, err := time.ParseDuration(w[i+1]); err == nil && d >= 10*time.Second {
					o.Budget = d
				}
			case "--on-pending":
				o.OnPending = w[i+1]
			case "--allow-below":
				o.AllowBelow = w[i+1]
			}
		}
	}
	if o.Budget == 50*time.Second {
		o.Budget = 0
	}
	return o
}

// merge returns settings with every Vigil hook of clientName replaced
// by the entries for command: other keys and other hooks are kept as they
// are, in place; running it twice gives the same settings.
func merge(settings map[string]any, clientName, command string, o Options) (map[string]any, error) {
	hooks, _ := settings["hooks"].(map[string]any)
	if settings["hooks"] != nil && hooks == nil {
		return nil, errors.New(`"hooks" is not a JSON object`)
	}
	if hooks == nil {
		hooks = map[string]any{}
	}
	// Drop our hooks wherever they are, keeping everyone else's.
	for ev, v := range hooks {
		list, ok := v.([]any)
		if !ok {
			continue
		}
		var kept []any
		for _, item := range list {
			m, ok := item.(map[string]any)
			if !ok {
				kept = append(kept, item)
				continue
			}
			if cmd, ok := m["command"].(string); ok { // Cursor: flat entries
				if !isVigilHook(cmd, clientName) {
					kept = append(kept, item)
				}
				continue
			}
			inner, ok := m["hooks"].([]any)
			if !ok {
				kept = append(kept, item)
				continue
			}
			var innerKept []any
			for _, h := range inner {
				hm, _ := h.(map[string]any)
				if cmd, _ := hm["command"].(string); hm != nil && isVigilHook(cmd, clientName) {
					continue
				}
				innerKept = append(innerKept, h)
			}
			if len(innerKept) == 0 {
				continue
			}
			m["hooks"] = innerKept
			kept = append(kept, m)
		}
		if len(kept) == 0 {
			delete(hooks, ev)
		} else {
			hooks[ev] = kept
		}
	}
	for _, e := range clientHooks(clientName) {
		cmd := command
		if f := o.gateFlags(e.flags); f != "" {
			cmd += " " + f
		}
		e.timeout = o.gateTimeout(e)
		var item map[string]any
		if clientName == hook.Cursor {
			item = map[string]any{"command": cmd}
		} else {
			h := map[string]any{"type": "command", "command": cmd}
			if e.timeout > 0 {
				h["timeout"] = e.timeout
			}
			item = map[string]any{"hooks": []any{h}}
			if e.matcher != "" {
				item["matcher"] = e.matcher
			}
		}
		list, _ := hooks[e.event].([]any)
		hooks[e.event] = append(list, item)
	}
	settings["hooks"] = hooks
	if o.System && clientName == hook.ClaudeCode {
		// Only managed hooks run: project and user settings cannot add,
		// remove or override a hook.
		settings["allowManagedHooksOnly"] = true
	}
	if o.System && clientName == hook.Gemini {
		// Gemini CLI merges system settings last: hooksConfig.enabled
		// here overrides a user's or project's "enabled": false. Its
		// hooksConfig.disabled is a union over every scope, which no
		// system setting can undo (doctor checks it).
		hc, _ := settings["hooksConfig"].(map[string]any)
		if hc == nil {
			hc = map[string]any{}
		}
		hc["enabled"] = true
		if l, ok := hc["disabled"].([]any); ok {
			var kept []any
			for _, d := range l {
				if n, _ := d.(string); !isVigilHook(n, clientName) {
					kept = append(kept, d)
				}
			}
			hc["disabled"] = kept
			if kept == nil {
				delete(hc, "disabled")
			}
		}
		settings["hooksConfig"] = hc
	}
	if clientName == hook.Cursor {
		if _, ok := settings["version"]; !ok {
			settings["version"] = 1
		}
	}
	return settings, nil
}

// Command is the command line a client runs: the absolute path of the
// binary and the client (`vigil-hook CLIENT` when binary is a vigil-hook,
// else `vigil hook CLIENT`), and how to reach the node: t.URL and t.Creds
// (made absolute) when t.URL is set, else the absolute t.Data. t.Bin is
// ignored.
func Command(binary, clientName string, t Target) (string, error) {
	parts := []string{Quote(binary), "hook", clientName}
	if filepath.Base(binary) == hookcli.BinaryName {
		parts = []string{Quote(binary), clientName}
	}
	if t.URL != "" {
		parts = append(parts, "--nats", Quote(t.URL))
		if t.Creds != "" {
			creds, err := filepath.Abs(t.Creds)
			if err != nil {
				return "", err
			}
			parts = append(parts, "--creds", Quote(creds))
		}
	} else {
		data, err := filepath.Abs(t.Data)
		if err != nil {
			return "", err
		}
		parts = append(parts, "--data", Quote(data))
	}
	return strings.Join(parts, " "), nil
}

// Binary is the absolute path of the vigil binary install runs as (or
// the one explicit names), refusing one that `go run` built in a
// temporary directory (it is deleted when go run exits, and every hook
// would then fail).
func Binary(explicit string) (string, error) {
	p := explicit
	if p == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("cannot find this binary (%v): pass --binary PATH", err)
		}
		p = exe
	}
	p, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	if explicit == "" && strings.Contains(p, string(filepath.Separator)+"go-build") {
		return "", fmt.Errorf("this vigil was built by `go run` in %s, which is deleted when it exits: build it (go build -tags netgo -o ~/.local/bin/ ./cmd/vigil ./cmd/vigil-hook) and run that, or pass --binary PATH", filepath.Dir(p))
	}
	if !hookcli.Executable(p) {
		return "", fmt.Errorf("--binary %s: not an executable file", p)
	}
	return p, nil
}

// HookBinary is the binary the clients' settings run for the vigil binary
// at bin (absolute): the vigil-hook beside it when there is an executable
// one (it starts several times faster: it links only the hook), else bin
// itself (`vigil hook CLIENT`). A bin that is a vigil-hook is returned as
// it is. note says, when it is not "", what the person should know: that
// the slower vigil is used, or that the vigil-hook beside it comes from
// another build than bin.
func HookBinary(bin string) (hookBin, note string) {
	if filepath.Base(bin) == hookcli.BinaryName {
		return bin, ""
	}
	p, ok := hookcli.Beside(bin)
	if !ok {
		return bin, fmt.Sprintf("no %s beside %s: the hook runs the whole vigil binary, which starts several times slower on every tool call; build it there (go build -tags netgo -o %s/ ./cmd/vigil-hook) and run install again", hookcli.BinaryName, bin, filepath.Dir(bin))
	}
	if a, b := buildOf(bin), buildOf(p); a != b {
		return p, fmt.Sprintf("%s is from another build than %s (%s, %s): rebuild both from one tree", p, bin, b, a)
	}
	return p, ""
}

// buildOf names the build of the binary at p: its module version and VCS
// revision as the Go toolchain recorded them ("unknown" when it cannot tell).
func buildOf(p string) string {
	bi, err := buildinfo.ReadFile(p)
	if err != nil {
		return "unknown"
	}
	rev, mod := "", ""
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				mod = "+modified"
			}
		}
	}
	if rev == "" {
		return bi.Main.Version
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return rev + mod
}

// Result is what install did to one settings file.
type Result struct {
	Client   string `json:"client"`
	Path     string `json:"path"`
	Command  string `json:"command"`
	Changed  bool   `json:"changed"`
	Backup   string `json:"backup,omitempty"`
	Settings []byte `json:"-"`
}

// Install merges the client's hooks into its settings file at path.
// The file is rewritten only when its content changes, after a copy of the
// old one is kept beside it; dryRun computes the result and writes nothing.
func Install(clientName, path, command string, now time.Time, dryRun bool, o Options) (Result, error) {
	res := Result{Client: clientName, Path: path, Command: command}
	settings := map[string]any{}
	old, err := os.ReadFile(path)
	switch {
	case err == nil:
		if len(bytes.TrimSpace(old)) > 0 {
			if err := json.Unmarshal(old, &settings); err != nil {
				return res, fmt.Errorf("%s is not valid JSON (%v): fix it, or move it away and run install again", path, err)
			}
			if settings == nil {
				settings = map[string]any{}
			}
		}
	case errors.Is(err, os.ErrNotExist):
		old = nil
	default:
		return res, err
	}
	merged, err := merge(settings, clientName, command, o)
	if err != nil {
		return res, fmt.Errorf("%s: %v", path, err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(merged); err != nil {
		return res, err
	}
	res.Settings = buf.Bytes()
	if old != nil && sameJSON(old, res.Settings) {
		return res, nil
	}
	res.Changed = true
	if dryRun {
		return res, nil
	}
	mode := os.FileMode(0o644)
	if o.System {
		mode = 0o644 // root-owned, world-readable, writable by root alone
	}
	if old != nil {
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
		res.Backup = path + ".vigil-backup-" + now.UTC().Format("20060102T150405Z")
		if err := os.WriteFile(res.Backup, old, mode); err != nil {
			return res, fmt.Errorf("back up %s: %w", path, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return res, err
	}
	tmp := path + ".vigil-tmp"
	if err := os.WriteFile(tmp, res.Settings, mode); err != nil {
		return res, err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return res, err
	}
	return res, nil
}

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xa, yb)
}
