package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/internal/hook/install"
)

// hookBuildTags are the build tags the README builds the binaries with:
// netgo makes vigil-hook a static binary (nats.go's net package links libc
// through cgo otherwise), whose start skips the dynamic loader.
const hookBuildTags = "netgo"

// buildHookBin builds cmd/vigil-hook into dir, beside a stand-in vigil
// (a script: install only needs an executable there), and returns both.
func buildHookBin(t *testing.T, dir string) (vigil, hookBin string) {
	t.Helper()
	vigil, hookBin = filepath.Join(dir, "vigil"), filepath.Join(dir, "vigil-hook")
	if err := os.WriteFile(vigil, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("go", "build", "-tags", hookBuildTags, "-o", hookBin, "../vigil-hook").CombinedOutput(); err != nil {
		t.Fatalf("go build ../vigil-hook: %v\n%s", err, out)
	}
	return vigil, hookBin
}

// runArgv runs a hook command's words with stdin, as a client does.
func runArgv(t *testing.T, argv []string, stdin string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", argv[0], err)
	}
	return out.String(), errb.String(), code
}

// TestInstalledVigilHook: with vigil-hook beside vigil, install writes
// `vigil-hook CLIENT` into the client's settings, in place of an earlier
// `vigil hook CLIENT` (whose flags it keeps); the installed command allows
// a benign call, does not allow the agent to make it unrunnable, denies
// when Vigil is down, and doctor checks it.
func TestInstalledVigilHook(t *testing.T) {
	project, dir := t.TempDir(), t.TempDir()
	vigil, hookBin := buildHookBin(t, dir) // before HOME moves: the build cache is under it
	t.Setenv("HOME", t.TempDir())
	data := startHookNode(t)
	path := filepath.Join(project, ".claude", "settings.local.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	old := fmt.Sprintf(`{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"%s hook claude-code --data %s --budget 20s --on-pending deny","timeout":60}]}]}}`, vigil, data)
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runGate(t, "", "hook", "install", "claude-code", "--dir", project, "--binary", vigil, "--data", data)
	if code != 0 {
		t.Fatalf("install: exit %d %s", code, stderr)
	}
	want := install.Quote(hookBin) + " claude-code --data " + install.Quote(data)
	if !strings.Contains(out, "hook command: "+want) {
		t.Fatalf("install output:\n%s", out)
	}
	settings := readJSON(t, path)
	var pre []string
	for _, ev := range []string{"SessionStart", "PreToolUse", "PostToolUse", "PermissionDenied", "Stop", "SessionEnd"} {
		cmds := commandsOf(settings, ev)
		if len(cmds) != 1 || !strings.HasPrefix(cmds[0], want) {
			t.Fatalf("%s hooks: %q, want one %q", ev, cmds, want)
		}
		if ev == "PreToolUse" {
			pre = install.Argv(cmds[0])
			if !strings.HasSuffix(cmds[0], "--budget 20s --on-pending deny") {
				t.Errorf("the earlier hook's flags were not kept: %q", cmds[0])
			}
		}
	}
	out, _, code = runArgv(t, pre, claudePreToolUse("toolu_01INSTALLEDALLOW0000000000"))
	if code != 0 || !strings.Contains(out, `"permissionDecision":"allow"`) {
		t.Fatalf("benign call: exit %d %s", code, out)
	}
	chmod := strings.Replace(claudePreToolUse("toolu_01INSTALLEDCHMOD0000000000"), "git status", "chmod 000 "+hookBin, 1)
	// The agent's chmod waits for a person; the test's budget is shorter.
	short := slices.Clone(pre)
	short[slices.Index(short, "20s")] = "2s"
	out, _, code = runArgv(t, short, chmod)
	if code != 0 || !strings.Contains(out, `"permissionDecision":"deny"`) {
		t.Fatalf("chmod 000 of the hook binary: exit %d %s", code, out)
	}
	down := []string{hookBin, "claude-code", "--data", t.TempDir()}
	out, _, code = runArgv(t, down, claudePreToolUse("toolu_01INSTALLEDDOWN00000000000"))
	if code != 0 || !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, "unreachable") {
		t.Fatalf("Vigil down: exit %d %s", code, out)
	}
	if out, _, code := runArgv(t, []string{hookBin, "claude"}, "{}"); code != 2 {
		t.Fatalf("unknown client: exit %d %s", code, out)
	}
	out, _, _ = runGate(t, "", "hook", "doctor", "claude-code", "--dir", project)
	if !strings.Contains(out, "ok   claude-code") || !strings.Contains(out, "hook: "+want) {
		t.Fatalf("doctor:\n%s", out)
	}
}
