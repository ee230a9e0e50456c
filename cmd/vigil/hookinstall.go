package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/internal/hook"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/setup"
)

// installClients are the clients `vigil hook install` can configure (the
// OpenHands SDK's hooks file is set up by hand: docs/hooks.md).
var installClients = []string{hook.ClaudeCode, hook.Gemini, hook.Cursor}

// hookScope says which settings file of a client to use.
type hookScope struct {
	user bool
	dir  string // the project's root, for a project scope
}

// settingsPath is the settings file `vigil hook install` writes for a
// client. Claude Code's project file is settings.local.json: the hook
// names this machine's binary and data directory, which do not belong in
// a file the project shares.
func settingsPath(clientName string, sc hookScope) (string, error) {
	base := sc.dir
	if sc.user {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no home directory (%v): use --project", err)
		}
		base = h
	}
	switch clientName {
	case hook.ClaudeCode:
		if sc.user {
			return filepath.Join(base, ".claude", "settings.json"), nil
		}
		return filepath.Join(base, ".claude", "settings.local.json"), nil
	case hook.Gemini:
		return filepath.Join(base, ".gemini", "settings.json"), nil
	case hook.Cursor:
		return filepath.Join(base, ".cursor", "hooks.json"), nil
	}
	return "", fmt.Errorf("client %q: vigil hook install knows %s (OpenHands: see docs/hooks.md)", clientName, strings.Join(installClients, ", "))
}

// systemRootEnv overrides the root under which the system-wide settings
// live (tests; a chroot): default "/".
const systemRootEnv = "VIGIL_HOOK_SYSTEM_ROOT"

// systemSettingsPath is the client's system-wide, root-owned settings
// file on Linux: Claude Code's managed settings, Gemini CLI's system
// settings, Cursor's system hooks file.
func systemSettingsPath(clientName string) (string, error) {
	root := os.Getenv(systemRootEnv)
	if root == "" {
		root = "/"
	}
	switch clientName {
	case hook.ClaudeCode:
		return filepath.Join(root, "etc", "claude-code", "managed-settings.json"), nil
	case hook.Gemini:
		if p := os.Getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH"); p != "" {
			return p, nil
		}
		return filepath.Join(root, "etc", "gemini-cli", "settings.json"), nil
	case hook.Cursor:
		return filepath.Join(root, "etc", "cursor", "hooks.json"), nil
	}
	return "", fmt.Errorf("client %q has no system settings Vigil knows", clientName)
}

// settingsPaths lists every settings file a client reads hooks from, in
// the order doctor reports them.
func settingsPaths(clientName, dir string) []string {
	var out []string
	if p, err := settingsPath(clientName, hookScope{user: true}); err == nil {
		out = append(out, p)
	}
	p, _ := settingsPath(clientName, hookScope{dir: dir})
	out = append(out, p)
	if clientName == hook.ClaudeCode {
		out = append(out, filepath.Join(dir, ".claude", "settings.json"))
	}
	if p, err := systemSettingsPath(clientName); err == nil {
		out = append(out, p)
	}
	return out
}

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
		}
	}
	return nil
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:=@,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellWords splits a command line as a POSIX shell would, for the simple
// quoting install writes (single and double quotes, backslashes).
func shellWords(s string) []string {
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

// isVigilHook reports whether a command runs `vigil hook CLIENT` (the
// binary under any name).
func isVigilHook(command, clientName string) bool {
	w := shellWords(command)
	for i := 0; i+2 < len(w); i++ {
		if w[i+1] == "hook" && w[i+2] == clientName {
			return true
		}
	}
	return false
}

// installOpts are install's choices beyond the command: the gating hooks'
// own flags (--budget, --on-pending, --allow-below) and, for system-wide
// settings, Claude Code's allowManagedHooksOnly.
type installOpts struct {
	budget     time.Duration // 0: the default 50s
	onPending  string
	allowBelow string
	system     bool
}

// gateFlags are the flags of a gating hook whose default flags are def.
func (io installOpts) gateFlags(def string) string {
	if !strings.HasPrefix(def, "--budget 50s") {
		return def
	}
	f := def
	if io.budget > 0 {
		f = "--budget " + io.budget.String()
	}
	if io.onPending != "" {
		f += " --on-pending " + io.onPending
	}
	if io.allowBelow != "" {
		f += " --allow-below " + io.allowBelow
	}
	return f
}

// gateTimeout is the client's timeout for a gating hook: the default, or
// the budget and 10 s more when the budget is longer.
func (io installOpts) gateTimeout(e hookEntry) int {
	if io.budget <= 50*time.Second || !strings.HasPrefix(e.flags, "--budget 50s") || e.timeout == 0 {
		return e.timeout
	}
	sec := int((io.budget + 10*time.Second + time.Second - 1) / time.Second)
	if e.timeout >= 1000 { // Gemini: milliseconds
		return sec * 1000
	}
	return sec
}

// previousOpts reads the gating flags of the Vigil hooks already in the
// settings file at path, so that a reinstall keeps them.
func previousOpts(path, clientName string) installOpts {
	var io installOpts
	cmds, err := findHookCommands(path, clientName)
	if err != nil {
		return io
	}
	for _, c := range cmds {
		w := shellWords(c)
		for i := 0; i+1 < len(w); i++ {
			switch w[i] {
			case "--budget":
				if d, err := time.ParseDuration(w[i+1]); err == nil && d >= 10*time.Second {
					io.budget = d
				}
			case "--on-pending":
				io.onPending = w[i+1]
			case "--allow-below":
				io.allowBelow = w[i+1]
			}
		}
	}
	if io.budget == 50*time.Second {
		io.budget = 0
	}
	return io
}

// mergeHooksOpts returns settings with every Vigil hook of clientName replaced
// by the entries for command: other keys and other hooks are kept as they
// are, in place; running it twice gives the same settings.
func mergeHooksOpts(settings map[string]any, clientName, command string, io installOpts) (map[string]any, error) {
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
		if f := io.gateFlags(e.flags); f != "" {
			cmd += " " + f
		}
		e.timeout = io.gateTimeout(e)
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
	if io.system && clientName == hook.ClaudeCode {
		// Only managed hooks run: project and user settings cannot add,
		// remove or override a hook.
		settings["allowManagedHooksOnly"] = true
	}
	if clientName == hook.Cursor {
		if _, ok := settings["version"]; !ok {
			settings["version"] = 1
		}
	}
	return settings, nil
}

// hookCommand is the command line a client runs: the absolute path of the
// binary, the client, and how to reach the node (the absolute data
// directory, or --nats and --creds).
func (c *cli) hookCommand(binary, clientName string) (string, error) {
	parts := []string{shellQuote(binary), "hook", clientName}
	if c.natsURL != "" {
		parts = append(parts, "--nats", shellQuote(c.natsURL))
		if c.creds != "" {
			creds, err := filepath.Abs(c.creds)
			if err != nil {
				return "", err
			}
			parts = append(parts, "--creds", shellQuote(creds))
		}
	} else {
		data, err := filepath.Abs(c.data())
		if err != nil {
			return "", err
		}
		parts = append(parts, "--data", shellQuote(data))
	}
	return strings.Join(parts, " "), nil
}

// vigilBinary is the absolute path of the running binary, refusing one
// that `go run` built in a temporary directory (it is deleted when go run
// exits, and every hook would then fail).
func vigilBinary(explicit string) (string, error) {
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
		return "", fmt.Errorf("this vigil was built by `go run` in %s, which is deleted when it exits: build it (go build -o ~/.local/bin/vigil ./cmd/vigil) and run that, or pass --binary PATH", filepath.Dir(p))
	}
	if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("--binary %s: not an executable file", p)
	}
	return p, nil
}

// installResult is what install did to one settings file.
type installResult struct {
	Client   string `json:"client"`
	Path     string `json:"path"`
	Command  string `json:"command"`
	Changed  bool   `json:"changed"`
	Backup   string `json:"backup,omitempty"`
	Settings []byte `json:"-"`
}

// installHookOpts merges the client's hooks into its settings file at path.
// The file is rewritten only when its content changes, after a copy of the
// old one is kept beside it; dryRun computes the result and writes nothing.
func installHookOpts(clientName, path, command string, now time.Time, dryRun bool, io installOpts) (installResult, error) {
	res := installResult{Client: clientName, Path: path, Command: command}
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
	merged, err := mergeHooksOpts(settings, clientName, command, io)
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
	if io.system {
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

func newHookInstallCmd(c *cli) *cobra.Command {
	var (
		project, user, dryRun, system bool
		dir, binary                   string
		budget                        time.Duration
		onPending, allowBelow         string
	)
	cmd := &cobra.Command{
		Use:   "install claude-code|gemini|cursor [--project|--user]",
		Short: "Write a client's hook settings for this Vigil (absolute binary path and data directory)",
		Long: `Merge Vigil's hooks into an agent client's settings, so that its hook runs
this binary with this data directory whatever environment the client
starts it in (a client does not inherit VIGIL_DATA from your shell).

  --project (default)  the project in --dir (default: the current directory):
                       Claude Code .claude/settings.local.json (not shared:
                       it names this machine's paths), Gemini CLI
                       .gemini/settings.json, Cursor .cursor/hooks.json
  --user               ~/.claude/settings.json, ~/.gemini/settings.json,
                       ~/.cursor/hooks.json: every project of this user

The hook runs with --data DIR (the data directory as --data or
$VIGIL_DATA say now, made absolute), or --nats URL --creds FILE when
given. Existing settings and other hooks are kept; an earlier Vigil hook
of the same client is replaced; running install again changes nothing.
The old file is copied to FILE.vigil-backup-<time> before it is changed.
--dry-run prints the settings instead of writing them.

A hook that cannot reach Vigil denies every tool call (fail closed): keep
vigil serve running, and check with vigil hook doctor.`,
		Example: `  vigil hook install claude-code --data ~/.local/share/vigil
  vigil hook install gemini --user
  vigil hook doctor`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if project && user || system && (project || user) {
				return errors.New("--project, --user and --system: choose one")
			}
			if budget != 0 && (budget < 5*time.Second || budget > 10*time.Minute) {
				return fmt.Errorf("--budget %s: use 5s to 10m (the client's hook timeout is set 10s above it)", budget)
			}
			if onPending != "" && onPending != hook.Ask && onPending != hook.Deny {
				return fmt.Errorf("--on-pending %q: use ask or deny", onPending)
			}
			if allowBelow != "" {
				allowBelow = strings.ToUpper(allowBelow)
				if allowBelow != "LOW" && allowBelow != "MEDIUM" && allowBelow != "HIGH" {
					return fmt.Errorf("--allow-below %q: use LOW, MEDIUM or HIGH", allowBelow)
				}
			}
			if dir == "" {
				wd, err := os.Getwd()
				if err != nil {
					return err
				}
				dir = wd
			}
			abs, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			path, err := settingsPath(args[0], hookScope{user: user, dir: abs})
			if err != nil {
				return err
			}
			if system {
				if path, err = systemSettingsPath(args[0]); err != nil {
					return err
				}
			}
			io := previousOpts(path, args[0])
			io.system = system
			if cmd.Flags().Changed("budget") {
				io.budget = budget
				if budget == 50*time.Second {
					io.budget = 0
				}
			}
			if cmd.Flags().Changed("on-pending") {
				io.onPending = onPending
			}
			if cmd.Flags().Changed("allow-below") {
				io.allowBelow = allowBelow
			}
			bin, err := vigilBinary(binary)
			if err != nil {
				return err
			}
			command, err := c.hookCommand(bin, args[0])
			if err != nil {
				return err
			}
			res, err := installHookOpts(args[0], path, command, time.Now(), dryRun, io)
			if err != nil {
				return err
			}
			switch {
			case dryRun:
				fmt.Fprintf(c.stdout, "# %s (not written: --dry-run)\n%s", path, res.Settings)
			case !res.Changed:
				fmt.Fprintf(c.stdout, "%s: already set up (unchanged)\n", path)
			default:
				fmt.Fprintf(c.stdout, "%s: Vigil's %s hooks written\n", path, args[0])
				if res.Backup != "" {
					fmt.Fprintf(c.stdout, "  the previous file is kept as %s\n", res.Backup)
				}
			}
			fmt.Fprintf(c.stdout, "  hook command: %s\n", command)
			if args[0] == hook.Gemini {
				fmt.Fprintln(c.stdout, `  older Gemini CLI versions also need "tools": {"enableHooks": true}`)
				fmt.Fprintln(c.stdout, `  headless (gemini -p): set "security": {"auth": {"selectedType": "gemini-api-key"}} in settings, and`)
				fmt.Fprintln(c.stdout, `  GEMINI_CLI_TRUST_WORKSPACE=true for project hooks; never --skip-trust (it skips the project's`)
				fmt.Fprintln(c.stdout, `  .gemini/settings.json, hooks included): use --user or --system hooks where the folder is untrusted`)
			}
			if system && os.Geteuid() != 0 {
				fmt.Fprintln(c.stdout, "  warning: not run as root: the agent's user may be able to edit this file; run it with sudo")
			}
			fmt.Fprintf(c.stdout, "  check it with: %s hook doctor %s\n", shellQuote(bin), args[0])
			if c.natsURL == "" {
				setup.NoticeSingleUser(c.stdout, c.data())
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&project, "project", false, "write the project's settings (the default)")
	f.BoolVar(&user, "user", false, "write the user's settings (every project)")
	f.BoolVar(&system, "system", false, "write the client's system-wide settings (run as root; Claude Code: /etc/claude-code/managed-settings.json with allowManagedHooksOnly; $VIGIL_HOOK_SYSTEM_ROOT moves the root)")
	f.DurationVar(&budget, "budget", 50*time.Second, "the gating hooks' --budget (kept across reinstalls)")
	f.StringVar(&onPending, "on-pending", "", "the gating hooks' --on-pending ask|deny (kept across reinstalls)")
	f.StringVar(&allowBelow, "allow-below", "", "the gating hooks' --allow-below LOW|MEDIUM|HIGH (kept across reinstalls)")
	f.StringVar(&dir, "dir", "", "the project's root for --project (default: the current directory)")
	f.StringVar(&binary, "binary", "", "the vigil binary the hook runs (default: this one)")
	f.BoolVar(&dryRun, "dry-run", false, "print the merged settings; write nothing")
	return cmd
}

// doctorFinding is one installed hook and whether it reaches a node.
type doctorFinding struct {
	Client  string `json:"client"`
	Path    string `json:"path"`
	Command string `json:"command"`
	OK      bool   `json:"ok"`
	Detail  string `json:"detail"`
	// Warning: the client may ignore this hook (see scopeWarning).
	Warning string `json:"warning,omitempty"`
}

// scopeWarning says when a client would ignore a hook installed in path:
// Gemini CLI skips project settings in an untrusted folder and with
// --skip-trust, and runs headless only with an auth type in settings;
// Claude Code runs only managed hooks once managed settings say
// allowManagedHooksOnly.
func scopeWarning(clientName, path, dir string) string {
	sys, _ := systemSettingsPath(clientName)
	if path == sys {
		return ""
	}
	switch clientName {
	case hook.Gemini:
		var w []string
		proj, _ := settingsPath(clientName, hookScope{dir: dir})
		if path == proj {
			w = append(w, "Gemini CLI ignores project hooks in an untrusted folder and with --skip-trust; headless, set GEMINI_CLI_TRUST_WORKSPACE=true (never --skip-trust), or install with --user or --system")
		}
		if !geminiHasAuthType(path) && !geminiHasAuthType(sys) {
			if up, err := settingsPath(clientName, hookScope{user: true}); err != nil || !geminiHasAuthType(up) {
				w = append(w, `headless gemini -p also needs "security": {"auth": {"selectedType": "gemini-api-key"}} (or another type) in its settings`)
			}
		}
		return strings.Join(w, "; ")
	case hook.ClaudeCode:
		if b, err := os.ReadFile(sys); err == nil {
			var m map[string]any
			if json.Unmarshal(b, &m) == nil && m["allowManagedHooksOnly"] == true {
				return sys + " sets allowManagedHooksOnly: Claude Code ignores this hook (the managed one runs)"
			}
		}
	}
	return ""
}

func geminiHasAuthType(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var m struct {
		Security struct {
			Auth struct {
				SelectedType string `json:"selectedType"`
			} `json:"auth"`
		} `json:"security"`
	}
	return json.Unmarshal(b, &m) == nil && m.Security.Auth.SelectedType != ""
}

// hookTarget is what a hook command runs and where it reaches Vigil.
type hookTarget struct {
	bin, data, url, creds string
}

// parseHookCommand reads the binary and the connection flags of a
// `vigil hook CLIENT …` command line.
func parseHookCommand(command string) (hookTarget, bool) {
	w := shellWords(command)
	i := slices.Index(w, "hook")
	if i < 1 {
		return hookTarget{}, false
	}
	t := hookTarget{bin: w[i-1]}
	for j := i; j < len(w); j++ {
		for _, f := range []struct {
			name string
			dst  *string
		}{{"--data", &t.data}, {"--nats", &t.url}, {"--creds", &t.creds}} {
			if w[j] == f.name && j+1 < len(w) {
				*f.dst = w[j+1]
			} else if v, ok := strings.CutPrefix(w[j], f.name+"="); ok {
				*f.dst = v
			}
		}
	}
	return t, true
}

// checkHookTarget says whether a hook can reach a node: its binary exists,
// and its credentials connect and get an answer.
func checkHookTarget(ctx context.Context, t hookTarget) (bool, string) {
	bin, warn := t.bin, ""
	if !filepath.IsAbs(bin) {
		p, err := exec.LookPath(bin)
		if err != nil {
			return false, fmt.Sprintf("%q is not on this PATH (nor an absolute path): run vigil hook install again", bin)
		}
		warn = fmt.Sprintf("%q is found on this PATH (%s), but the client's PATH may differ: run vigil hook install again for an absolute path; ", bin, p)
		bin = p
	}
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return false, fmt.Sprintf("the binary %s is missing or not executable: rebuild it, or run vigil hook install again", bin)
	}
	o := client.Options{URL: t.url, CredsFile: t.creds, Role: natsutil.RoleAgent, Name: "vigil-hook-doctor", Timeout: 5 * time.Second}
	if t.url == "" {
		if t.data == "" {
			t.data = client.DefaultDataDir()
			warn += fmt.Sprintf("no --data: the hook uses $VIGIL_DATA or the default (%s here; the client may see another); ", t.data)
		}
		o.DataDir = t.data
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cl, err := client.Connect(ctx, o)
	if err != nil {
		return false, warn + "cannot reach Vigil: " + oneLine(err.Error())
	}
	defer cl.Close()
	rtt, err := cl.Conn().RTT()
	if err != nil {
		return false, warn + "connected, but the node does not answer: " + oneLine(err.Error())
	}
	return true, fmt.Sprintf("%sreaches the node at %s with the agent credentials (round trip %s)", warn, cl.Conn().ConnectedUrlRedacted(), rtt.Round(10*time.Microsecond))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// findHookCommands lists the Vigil hook commands of clientName in the
// settings file at path.
func findHookCommands(path, clientName string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var settings map[string]any
	if err := json.Unmarshal(b, &settings); err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	hooks, _ := settings["hooks"].(map[string]any)
	var out []string
	add := func(cmd string) {
		if isVigilHook(cmd, clientName) && !slices.Contains(out, cmd) {
			out = append(out, cmd)
		}
	}
	for _, v := range hooks {
		list, _ := v.([]any)
		for _, item := range list {
			m, _ := item.(map[string]any)
			if cmd, ok := m["command"].(string); ok {
				add(cmd)
			}
			inner, _ := m["hooks"].([]any)
			for _, h := range inner {
				if hm, _ := h.(map[string]any); hm != nil {
					if cmd, ok := hm["command"].(string); ok {
						add(cmd)
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

func newHookDoctorCmd(c *cli) *cobra.Command {
	var (
		dir    string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "doctor [claude-code|gemini|cursor]",
		Short: "Say whether each installed client hook can reach a Vigil node",
		Long: `Look for Vigil's hooks in the clients' settings (the user's and the
project's in --dir, default the current directory), and for each hook
command check that its binary exists and that it reaches a node with
the agent credentials it names. Exit 0 when every hook found reaches a
node, 1 when one does not or none is installed.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			clients := installClients
			if len(args) == 1 {
				if !slices.Contains(installClients, args[0]) {
					return fmt.Errorf("client %q: use one of %s", args[0], strings.Join(installClients, ", "))
				}
				clients = args[:1]
			}
			if dir == "" {
				wd, err := os.Getwd()
				if err != nil {
					return err
				}
				dir = wd
			}
			var found []doctorFinding
			for _, cn := range clients {
				for _, path := range settingsPaths(cn, dir) {
					cmds, err := findHookCommands(path, cn)
					if errors.Is(err, os.ErrNotExist) {
						continue
					}
					if err != nil {
						found = append(found, doctorFinding{Client: cn, Path: path, Detail: err.Error()})
						continue
					}
					seen := map[hookTarget]bool{}
					for _, command := range cmds {
						t, ok := parseHookCommand(command)
						if !ok {
							found = append(found, doctorFinding{Client: cn, Path: path, Command: command, Detail: "not a vigil hook command"})
							continue
						}
						if seen[t] {
							continue // the same binary and node, other flags
						}
						seen[t] = true
						ok, detail := checkHookTarget(cmd.Context(), t)
						found = append(found, doctorFinding{Client: cn, Path: path, Command: command, OK: ok, Detail: detail, Warning: scopeWarning(cn, path, dir)})
					}
				}
			}
			found = append(found, c.permissionFindings(found)...)
			bad := len(found) == 0
			for _, f := range found {
				bad = bad || !f.OK
			}
			if asJSON {
				enc := json.NewEncoder(c.stdout)
				enc.SetIndent("", "  ")
				if found == nil {
					found = []doctorFinding{}
				}
				enc.Encode(found)
			} else {
				if len(found) == 0 {
					fmt.Fprintf(c.stdout, "no Vigil hook installed for %s (in the user's settings or in %s): run vigil hook install CLIENT\n", strings.Join(clients, ", "), dir)
				}
				for _, f := range found {
					mark := "ok  "
					if !f.OK {
						mark = "FAIL"
					}
					fmt.Fprintf(c.stdout, "%s %s, %s\n     %s\n", mark, f.Client, f.Path, f.Detail)
					if f.Command != "" {
						fmt.Fprintf(c.stdout, "     hook: %s\n", f.Command)
					}
					if f.Warning != "" {
						fmt.Fprintf(c.stdout, "     warning: %s\n", f.Warning)
					}
				}
			}
			if bad {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "the project's root (default: the current directory)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
