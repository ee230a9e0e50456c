package install

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/internal/hook"
	"github.com/vigil-dev/vigil/internal/hook/hookcli"
	hooksettings "github.com/vigil-dev/vigil/internal/hook/settings"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/setup"
)

// Finding is one installed hook and whether it reaches a node.
type Finding struct {
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
	sys, _ := hooksettings.SystemPath(clientName)
	if path == sys {
		return ""
	}
	switch clientName {
	case hook.Gemini:
		var w []string
		proj, _ := hooksettings.Path(clientName, hooksettings.Scope{Dir: dir})
		if path == proj {
			w = append(w, "Gemini CLI ignores project hooks in an untrusted folder and with --skip-trust; headless, set GEMINI_CLI_TRUST_WORKSPACE=true (never --skip-trust), or install with --user or --system")
		}
		if !geminiHasAuthType(path) && !geminiHasAuthType(sys) {
			if up, err := hooksettings.Path(clientName, hooksettings.Scope{User: true}); err != nil || !geminiHasAuthType(up) {
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

// Target is what a hook command runs and where it reaches Vigil.
type Target struct {
	Bin   string // the binary, as the command names it
	Data  string // --data
	URL   string // --nats
	Creds string // --creds
}

// ParseCommand reads the binary and the connection flags of a
// `vigil hook CLIENT …` or `vigil-hook CLIENT …` command line.
func ParseCommand(command string) (Target, bool) {
	w := words(command)
	i := slices.IndexFunc(w, func(s string) bool { return filepath.Base(s) == hookcli.BinaryName })
	if i < 0 {
		if i = slices.Index(w, "hook"); i < 1 {
			return Target{}, false
		}
		i--
	}
	t := Target{Bin: w[i]}
	for j := i + 1; j < len(w); j++ {
		for _, f := range []struct {
			name string
			dst  *string
		}{{"--data", &t.Data}, {"--nats", &t.URL}, {"--creds", &t.Creds}} {
			if w[j] == f.name && j+1 < len(w) {
				*f.dst = w[j+1]
			} else if v, ok := strings.CutPrefix(w[j], f.name+"="); ok {
				*f.dst = v
			}
		}
	}
	return t, true
}

// Check says whether a hook can reach a node: its binary exists,
// and its credentials connect and get an answer.
func Check(ctx context.Context, t Target) (bool, string) {
	bin, warn := t.Bin, ""
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
	o := client.Options{URL: t.URL, CredsFile: t.Creds, Role: natsutil.RoleAgent, Name: "vigil-hook-doctor", Timeout: 5 * time.Second}
	if t.URL == "" {
		if t.Data == "" {
			t.Data = client.DefaultDataDir()
			warn += fmt.Sprintf("no --data: the hook uses $VIGIL_DATA or the default (%s here; the client may see another); ", t.Data)
		}
		o.DataDir = t.Data
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

// slowHookWarning says when a hook runs the whole vigil binary (`vigil
// hook CLIENT`) while a vigil-hook lies beside it ("" otherwise).
func slowHookWarning(bin string) string {
	if !filepath.IsAbs(bin) || filepath.Base(bin) == hookcli.BinaryName {
		return ""
	}
	if hb, _ := HookBinary(bin); hb != bin {
		return fmt.Sprintf("this hook runs the whole vigil binary on every tool call; %s beside it starts several times faster: run vigil hook install again", hb)
	}
	return ""
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// FindCommands lists the Vigil hook commands of clientName in the
// settings file at path.
func FindCommands(path, clientName string) ([]string, error) {
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

// Doctor finds the Vigil hooks of clients in every settings file each
// reads (SettingsPaths, with dir the project's root) and checks each
// distinct binary and node they name (Check), then adds the permission
// findings (PermissionFindings; dataDir is the data directory the
// operator named, "" for none). A settings file that is not valid JSON is
// a failed finding; none found gives no finding.
func Doctor(ctx context.Context, clients []string, dir, dataDir string) []Finding {
	var found []Finding
	for _, cn := range clients {
		for _, path := range hooksettings.Paths(cn, dir) {
			cmds, err := FindCommands(path, cn)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				found = append(found, Finding{Client: cn, Path: path, Detail: err.Error()})
				continue
			}
			seen := map[Target]bool{}
			for _, command := range cmds {
				t, ok := ParseCommand(command)
				if !ok {
					found = append(found, Finding{Client: cn, Path: path, Command: command, Detail: "not a vigil hook command"})
					continue
				}
				if seen[t] {
					continue // the same binary and node, other flags
				}
				seen[t] = true
				ok, detail := Check(ctx, t)
				warn := scopeWarning(cn, path, dir)
				if w := slowHookWarning(t.Bin); w != "" {
					warn = strings.TrimPrefix(warn+"; "+w, "; ")
				}
				found = append(found, Finding{Client: cn, Path: path, Command: command, OK: ok, Detail: detail, Warning: warn})
			}
		}
	}
	if slices.Contains(clients, hook.Gemini) {
		found = append(found, geminiFindings(found, dir)...)
	}
	return append(found, PermissionFindings(found, dataDir)...)
}

// geminiFindings are the reasons Gemini CLI would not run the Vigil hooks
// found: a system settings file it skips (Gemini CLI reads it only when
// the file and every directory above it are owned by root and not
// writable by group or others), and a user or project settings file whose
// hooksConfig turns them off ("enabled": false, unless the system file
// pins true; "disabled" naming a Vigil hook, which Gemini unions over
// every scope, so that even a system hook is skipped).
func geminiFindings(found []Finding, dir string) []Finding {
	sys, _ := hooksettings.SystemPath(hook.Gemini)
	var out []Finding
	seen := false
	for _, f := range found {
		if f.Client != hook.Gemini || f.Command == "" {
			continue
		}
		seen = true
		if f.Path == sys {
			if why := geminiSkips(sys); why != "" {
				out = append(out, Finding{Client: hook.Gemini, Path: sys,
					Detail: "Gemini CLI skips this system settings file, hooks included: " + why + "; fix: sudo chown root:root and chmod go-w the file and each directory above it"})
			}
		}
	}
	if !seen {
		return nil
	}
	pinned := hooksConfig(sys)["enabled"] == true && geminiSkips(sys) == ""
	var paths []string
	if p, err := hooksettings.Path(hook.Gemini, hooksettings.Scope{User: true}); err == nil {
		paths = append(paths, p)
	}
	if p, err := hooksettings.Path(hook.Gemini, hooksettings.Scope{Dir: dir}); err == nil {
		paths = append(paths, p)
	}
	for _, p := range paths {
		hc := hooksConfig(p)
		if hc["enabled"] == false && !pinned {
			out = append(out, Finding{Client: hook.Gemini, Path: p,
				Detail: `"hooksConfig": {"enabled": false} turns off every hook, Vigil's included; fix: remove it, or install with --system (which pins "enabled": true)`})
		}
		l, _ := hc["disabled"].([]any)
		for _, d := range l {
			if n, _ := d.(string); isVigilHook(n, hook.Gemini) {
				out = append(out, Finding{Client: hook.Gemini, Path: p,
					Detail: `"hooksConfig": {"disabled": [...]} names Vigil's hook, so Gemini CLI skips it in every scope (system included); fix: remove the entry`})
				break
			}
		}
	}
	return out
}

// hooksConfig is the "hooksConfig" object of a Gemini settings file (nil
// when there is none).
func hooksConfig(path string) map[string]any {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var m struct {
		HooksConfig map[string]any `json:"hooksConfig"`
	}
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m.HooksConfig
}

// geminiSkips says why Gemini CLI would skip the system settings file at
// path ("" when it reads it).
func geminiSkips(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	for _, p := range []string{path, real} {
		for d := p; ; d = filepath.Dir(d) {
			if why := rootOnly(d); why != "" {
				return why
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	return ""
}

// rootOnly says why p is not owned by root or is writable by group or
// others ("" when neither).
func rootOnly(p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		return ""
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 {
		return fmt.Sprintf("%s is owned by uid %d, not root", p, st.Uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Sprintf("%s is writable by group or others (%o)", p, fi.Mode().Perm())
	}
	return ""
}

// PermissionFindings checks, as this process's user (run doctor as the
// agent's user), what an agent running as it could reach of the Vigil its
// hooks use (setup.CheckAccess): the credentials of every data directory
// the hooks name, of dataDir, of the deployment `vigil setup host` recorded and of
// its default data directory, but the agent's; the hooks' binaries and
// settings files. One failed finding per problem, naming its fix, or one
// ok finding; none when no hook was found.
func PermissionFindings(found []Finding, dataDir string) []Finding {
	var in setup.AccessInput
	add := func(list *[]string, p string) {
		if p != "" && !slices.Contains(*list, p) {
			*list = append(*list, p)
		}
	}
	for _, f := range found {
		t, ok := ParseCommand(f.Command)
		if !ok {
			continue
		}
		add(&in.Settings, f.Path)
		bin := t.Bin
		if !filepath.IsAbs(bin) {
			if p, err := exec.LookPath(bin); err == nil {
				bin = p
			}
		}
		add(&in.Binaries, bin)
		if t.Data != "" {
			if abs, err := filepath.Abs(t.Data); err == nil {
				add(&in.DataDirs, abs)
			}
		}
	}
	if len(in.Settings) == 0 {
		return nil
	}
	if dataDir != "" {
		if abs, err := filepath.Abs(dataDir); err == nil {
			add(&in.DataDirs, abs)
		}
	}
	if d, err := setup.ReadDeployment(setup.DefaultEtcDir); err == nil {
		add(&in.DataDirs, d.DataDir)
	}
	add(&in.DataDirs, setup.DefaultDataDir)
	problems := setup.CheckAccess(in)
	if len(problems) == 0 {
		return []Finding{{Client: "permissions", Path: filepath.Join(setup.DefaultEtcDir, setup.DeploymentFile), OK: true,
			Detail: "this user cannot read any Vigil credential but the agent's, nor write the hooks' binaries or settings"}}
	}
	out := make([]Finding, 0, len(problems))
	for _, p := range problems {
		out = append(out, Finding{Client: "permissions", Path: p.Path, Detail: p.What + "; fix: " + p.Fix})
	}
	return out
}
