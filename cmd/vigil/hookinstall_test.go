package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/internal/hook/install"
	hooksettings "github.com/vigil-dev/vigil/internal/hook/settings"
)

// fakeBinary is an executable file standing in for an installed vigil.
func fakeBinary(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bin dir", "vigil")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// commandsOf lists the hook commands of event in Claude-style settings.
func commandsOf(settings map[string]any, event string) []string {
	var out []string
	hooks, _ := settings["hooks"].(map[string]any)
	list, _ := hooks[event].([]any)
	for _, item := range list {
		m, _ := item.(map[string]any)
		if c, ok := m["command"].(string); ok {
			out = append(out, c)
		}
		inner, _ := m["hooks"].([]any)
		for _, h := range inner {
			if c, ok := h.(map[string]any)["command"].(string); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

func backups(t *testing.T, path string) []string {
	t.Helper()
	m, _ := filepath.Glob(path + ".vigil-backup-*")
	return m
}

// TestHookInstallClaudeCodeMerges: install keeps the user's settings and
// other hooks, replaces an earlier Vigil hook, writes the absolute binary
// and data directory, backs up the old file, and changes nothing when run
// again.
func TestHookInstallClaudeCodeMerges(t *testing.T) {
	home, project, data := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	bin := fakeBinary(t)
	path := filepath.Join(project, ".claude", "settings.local.json")
	old := `{"permissions":{"allow":["Bash(npm run test:*)"]},
 "hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"./lint-hook.sh"},{"type":"command","command":"vigil hook claude-code"}]}],
          "Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}]}}`
	writeFile(t, mkdirDir(t, filepath.Dir(path)), filepath.Base(path), old)
	out, stderr, code := runGate(t, "", "hook", "install", "claude-code", "--project", "--dir", project, "--binary", bin, "--data", data)
	if code != 0 || !strings.Contains(out, "hooks written") || !strings.Contains(out, "previous file is kept") {
		t.Fatalf("install: exit %d\n%s%s", code, out, stderr)
	}
	s := readJSON(t, path)
	if p, _ := s["permissions"].(map[string]any); p == nil {
		t.Fatalf("permissions lost: %v", s)
	}
	want := install.Quote(bin) + " hook claude-code --data " + data
	if !strings.Contains(want, "'") {
		t.Fatalf("a path with a space must be quoted: %s", want)
	}
	pre := commandsOf(s, "PreToolUse")
	if len(pre) != 2 || pre[0] != "./lint-hook.sh" || pre[1] != want+" --budget 50s" {
		t.Fatalf("PreToolUse commands = %q", pre)
	}
	for _, ev := range []string{"SessionStart", "PostToolUse", "PermissionDenied"} {
		if c := commandsOf(s, ev); len(c) != 1 || c[0] != want {
			t.Fatalf("%s commands = %q", ev, c)
		}
	}
	if c := commandsOf(s, "Stop"); len(c) != 2 || c[0] != "notify-send done" || c[1] != want {
		t.Fatalf("Stop commands = %q", c)
	}
	bs := backups(t, path)
	if len(bs) != 1 {
		t.Fatalf("backups = %v", bs)
	}
	if b, _ := os.ReadFile(bs[0]); string(b) != old {
		t.Fatalf("the backup is not the old file: %s", b)
	}
	before, _ := os.ReadFile(path)
	out, stderr, code = runGate(t, "", "hook", "install", "claude-code", "--dir", project, "--binary", bin, "--data", data)
	if code != 0 || !strings.Contains(out, "unchanged") {
		t.Fatalf("install again: exit %d\n%s%s", code, out, stderr)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) || len(backups(t, path)) != 1 {
		t.Fatal("a second install changed the file or backed it up again")
	}
	// The command parses back to the same binary and data directory.
	if tg, ok := install.ParseCommand(pre[1]); !ok || tg.Bin != bin || tg.Data != data {
		t.Fatalf("parsed %+v from %s", tg, pre[1])
	}
}

// TestHookInstallScopes: --user writes under HOME; Gemini and Cursor get
// their own files and shapes; a file that is not JSON is left alone.
func TestHookInstallScopes(t *testing.T) {
	home, project, data := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	bin := fakeBinary(t)
	if _, stderr, code := runGate(t, "", "hook", "install", "gemini", "--user", "--binary", bin, "--data", data); code != 0 {
		t.Fatal(stderr)
	}
	g := readJSON(t, filepath.Join(home, ".gemini", "settings.json"))
	if c := commandsOf(g, "BeforeTool"); len(c) != 1 || !strings.HasSuffix(c[0], "hook gemini --data "+data+" --budget 50s") {
		t.Fatalf("gemini BeforeTool = %q", c)
	}
	if _, stderr, code := runGate(t, "", "hook", "install", "cursor", "--dir", project, "--binary", bin, "--data", data); code != 0 {
		t.Fatal(stderr)
	}
	cu := readJSON(t, filepath.Join(project, ".cursor", "hooks.json"))
	if cu["version"] != float64(1) || len(commandsOf(cu, "beforeShellExecution")) != 1 || len(commandsOf(cu, "beforeReadFile")) != 1 {
		t.Fatalf("cursor hooks.json = %v", cu)
	}
	// --dry-run writes nothing.
	out, _, code := runGate(t, "", "hook", "install", "claude-code", "--user", "--dry-run", "--binary", bin, "--data", data)
	if code != 0 || !strings.Contains(out, "not written") {
		t.Fatalf("dry run: %s", out)
	}
	if _, err := os.Stat(filepath.Join(home, ".claude", "settings.json")); !os.IsNotExist(err) {
		t.Fatal("--dry-run wrote the settings")
	}
	// Not JSON: refused, untouched.
	bad := writeFile(t, mkdirDir(t, filepath.Join(home, ".claude")), "settings.json", "{not json")
	if _, stderr, code := runGate(t, "", "hook", "install", "claude-code", "--user", "--binary", bin, "--data", data); code != 1 || !strings.Contains(stderr, "not valid JSON") {
		t.Fatalf("bad JSON: exit %d %s", code, stderr)
	}
	if b, _ := os.ReadFile(bad); string(b) != "{not json" {
		t.Fatal("a file that is not JSON was changed")
	}
	// Both scopes, an unknown client, a binary `go run` would delete.
	if _, stderr, code := runGate(t, "", "hook", "install", "claude-code", "--user", "--project"); code != 1 || !strings.Contains(stderr, "choose one") {
		t.Fatalf("both scopes: %s", stderr)
	}
	if _, stderr, code := runGate(t, "", "hook", "install", "vscode", "--binary", bin); code != 1 || !strings.Contains(stderr, "claude-code, gemini, cursor") {
		t.Fatalf("unknown client: %s", stderr)
	}
	if _, err := install.Binary(""); err == nil || !strings.Contains(err.Error(), "go run") {
		// The test binary lives in a go-build temporary directory.
		t.Fatalf("the test binary was accepted as the hook's binary: %v", err)
	}
}

func mkdirDir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHookDoctor: doctor finds the installed hooks and says whether they
// reach a node, against a real one and against none.
func TestHookDoctor(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	bin := fakeBinary(t)
	// Nothing installed: say so, exit 1.
	out, _, code := runGate(t, "", "hook", "doctor", "--dir", project)
	if code != 1 || !strings.Contains(out, "no Vigil hook installed") {
		t.Fatalf("doctor (nothing): exit %d %s", code, out)
	}
	_, data := startGateNode(t)
	if _, stderr, code := runGate(t, "", "hook", "install", "claude-code", "--dir", project, "--binary", bin, "--data", data); code != 0 {
		t.Fatal(stderr)
	}
	// Single-user mode: the hook reaches the node, and doctor fails
	// because this user reads the approver's credential (install.PermissionFindings).
	out, stderr, code := runGate(t, "", "hook", "doctor", "--dir", project)
	if code != 1 || !strings.Contains(out, "FAIL permissions") || !strings.Contains(out, "ok   claude-code") || !strings.Contains(out, "reaches the node at nats://127.0.0.1:") || strings.Count(out, "ok   ") != 1 {
		t.Fatalf("doctor (running): exit %d\n%s%s", code, out, stderr)
	}
	// A second client whose data directory has no server: FAIL, exit 1.
	if _, stderr, code := runGate(t, "", "hook", "install", "gemini", "--user", "--binary", bin, "--data", t.TempDir()); code != 0 {
		t.Fatal(stderr)
	}
	out, _, code = runGate(t, "", "hook", "doctor", "--dir", project)
	if code != 1 || !strings.Contains(out, "FAIL gemini") || !strings.Contains(out, "cannot reach Vigil") || !strings.Contains(out, "ok   claude-code") {
		t.Fatalf("doctor (one down): exit %d\n%s", code, out)
	}
	out, _, code = runGate(t, "", "hook", "doctor", "claude-code", "--dir", project, "--json")
	var all, fs []install.Finding
	json.Unmarshal([]byte(out), &all)
	for _, f := range all {
		if f.Client != "permissions" {
			fs = append(fs, f)
		}
	}
	if code != 1 || len(fs) != 1 || !fs[0].OK || len(all) == len(fs) {
		t.Fatalf("doctor claude-code --json: exit %d %s", code, out)
	}
}

// TestHookInstallKeepsFlagsAndSystem: the gating hooks' flags given once
// are kept by a later install without them; --system writes the managed
// settings (under $VIGIL_HOOK_SYSTEM_ROOT) with allowManagedHooksOnly.
func TestHookInstallKeepsFlagsAndSystem(t *testing.T) {
	root := t.TempDir()
	t.Setenv(hooksettings.SystemRootEnv, root)
	proj := t.TempDir()
	data := t.TempDir()
	bin := filepath.Join(t.TempDir(), "vigil")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		c := &cli{stdout: &out, stderr: &errb, dataDir: data}
		cmd := newRootCmd(c)
		cmd.SetArgs(append([]string{"hook", "install"}, args...))
		cmd.SetOut(&out)
		cmd.SetErr(&errb)
		if err := cmd.ExecuteContext(context.Background()); err != nil {
			t.Fatalf("install %v: %v\n%s", args, err, errb.String())
		}
		return out.String()
	}
	path := filepath.Join(proj, ".claude", "settings.local.json")
	run("claude-code", "--dir", proj, "--binary", bin, "--budget", "90s", "--on-pending", "deny", "--allow-below", "low")
	run("claude-code", "--dir", proj, "--binary", bin)
	s := readJSON(t, path)
	pre := commandsOf(s, "PreToolUse")
	if len(pre) != 1 || !strings.HasSuffix(pre[0], "--budget 1m30s --on-pending deny --allow-below LOW") {
		t.Fatalf("PreToolUse after reinstall = %q", pre)
	}
	run("claude-code", "--system", "--binary", bin)
	sys := filepath.Join(root, "etc", "claude-code", "managed-settings.json")
	m := readJSON(t, sys)
	if m["allowManagedHooksOnly"] != true || len(commandsOf(m, "PreToolUse")) != 1 {
		t.Fatalf("managed settings: %v", m)
	}
}

// TestHookInstallGeminiSystem: --system writes Gemini CLI's system
// settings with "hooksConfig": {"enabled": true} (merged last, it
// overrides a user's false) and drops Vigil's hook from its own disabled
// list; doctor says when Gemini CLI would skip that file (not root-owned,
// or under a directory others can write, as a temporary one is) and when
// a user's settings disable Vigil's hook (a union over every scope).
func TestHookInstallGeminiSystem(t *testing.T) {
	root, home, proj, data := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv(hooksettings.SystemRootEnv, root)
	t.Setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", "")
	t.Setenv("HOME", home)
	bin := fakeBinary(t)
	sys := filepath.Join(root, "etc", "gemini-cli", "settings.json")
	writeFile(t, mkdirDir(t, filepath.Dir(sys)), "settings.json",
		`{"security":{"auth":{"selectedType":"gemini-api-key"}},"hooksConfig":{"notifications":false,"disabled":["`+bin+` hook gemini --data /old","other"]}}`)
	if out, stderr, code := runGate(t, "", "hook", "install", "gemini", "--system", "--binary", bin, "--data", data); code != 0 {
		t.Fatalf("install --system: exit %d %s%s", code, out, stderr)
	}
	m := readJSON(t, sys)
	hc, _ := m["hooksConfig"].(map[string]any)
	if hc["enabled"] != true || hc["notifications"] != false || fmt.Sprint(hc["disabled"]) != "[other]" || len(commandsOf(m, "BeforeTool")) != 1 {
		t.Fatalf("system settings: %v", m)
	}
	if m["security"] == nil {
		t.Fatalf("the admin's settings were dropped: %v", m)
	}
	cmd := commandsOf(m, "BeforeTool")[0]
	userSettings := filepath.Join(home, ".gemini", "settings.json")
	writeFile(t, mkdirDir(t, filepath.Dir(userSettings)), "settings.json",
		fmt.Sprintf(`{"hooksConfig":{"enabled":false,"disabled":[%q]}}`, cmd))
	out, _, code := runGate(t, "", "hook", "doctor", "gemini", "--dir", proj, "--json")
	var found []install.Finding
	if err := json.Unmarshal([]byte(out), &found); err != nil || code != 1 {
		t.Fatalf("doctor: exit %d %v\n%s", code, err, out)
	}
	var skipped, disabled, off bool
	for _, f := range found {
		skipped = skipped || f.Path == sys && !f.OK && strings.Contains(f.Detail, "Gemini CLI skips this system settings file")
		disabled = disabled || f.Path == userSettings && strings.Contains(f.Detail, `"disabled"`)
		off = off || f.Path == userSettings && strings.Contains(f.Detail, `"enabled": false`)
	}
	if !skipped || !disabled {
		t.Errorf("doctor findings (want the skipped system file and the user's disabled entry): %s", out)
	}
	// The system file pins "enabled": true only where Gemini reads it;
	// this one it skips, so the user's false counts.
	if !off {
		t.Errorf("doctor does not name the user's \"enabled\": false while the system file is skipped: %s", out)
	}
}
