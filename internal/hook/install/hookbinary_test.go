package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exe writes an executable file (a stand-in binary) at dir/name.
func exe(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHookBinary: install names the vigil-hook beside the vigil binary
// when there is an executable one, else vigil itself, and says why.
func TestHookBinary(t *testing.T) {
	dir := t.TempDir()
	vigil := exe(t, dir, "vigil")
	if got, note := HookBinary(vigil); got != vigil || !strings.Contains(note, "no vigil-hook beside") {
		t.Fatalf("no vigil-hook: HookBinary = %q, %q", got, note)
	}
	hb := filepath.Join(dir, "vigil-hook")
	if err := os.WriteFile(hb, []byte("not executable"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := HookBinary(vigil); got != vigil {
		t.Fatalf("a vigil-hook that is not executable: HookBinary = %q", got)
	}
	if err := os.Chmod(hb, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, note := HookBinary(vigil); got != hb || note != "" {
		t.Fatalf("vigil-hook beside vigil: HookBinary = %q, %q", got, note)
	}
	if got, note := HookBinary(hb); got != hb || note != "" {
		t.Fatalf("vigil-hook itself: HookBinary = %q, %q", got, note)
	}
}

// TestHookCommandForms: the command install writes for each binary, and
// what install and doctor read back from both forms (an install made
// before vigil-hook existed is found, replaced and checked the same way).
func TestHookCommandForms(t *testing.T) {
	for _, tc := range []struct {
		bin, want string
	}{
		{"/opt/v/vigil-hook", "/opt/v/vigil-hook claude-code --data /d"},
		{"/opt/v/vigil", "/opt/v/vigil hook claude-code --data /d"},
		{"/a b/vigil-hook", "'/a b/vigil-hook' claude-code --data /d"},
	} {
		cmd, err := Command(tc.bin, "claude-code", Target{Data: "/d"})
		if err != nil || cmd != tc.want {
			t.Errorf("Command(%q) = %q, %v; want %q", tc.bin, cmd, err, tc.want)
		}
		if !isVigilHook(cmd, "claude-code") || isVigilHook(cmd, "gemini") {
			t.Errorf("isVigilHook(%q) is wrong", cmd)
		}
		tg, ok := ParseCommand(cmd + " --budget 50s")
		if !ok || tg.Bin != tc.bin || tg.Data != "/d" {
			t.Errorf("ParseCommand(%q) = %+v, %v", cmd, tg, ok)
		}
		if got := Argv(cmd); got[0] != tc.bin {
			t.Errorf("Argv(%q) = %q", cmd, got)
		}
	}
	for _, cmd := range []string{"vigil-hook", "/x/vigil-hooks claude-code", "/x/vigil-hook gemini", "echo vigil-hook"} {
		if isVigilHook(cmd, "claude-code") {
			t.Errorf("isVigilHook(%q, claude-code) = true", cmd)
		}
	}
	if tg, ok := ParseCommand("vigil-hook cursor --nats nats://h:4222 --creds=/c/agent.creds"); !ok || tg.Bin != "vigil-hook" || tg.URL != "nats://h:4222" || tg.Creds != "/c/agent.creds" {
		t.Errorf("ParseCommand(vigil-hook --nats --creds=) = %+v, %v", tg, ok)
	}
}

// TestSlowHookWarning: doctor warns about a `vigil hook` command only
// when a vigil-hook lies beside that vigil.
func TestSlowHookWarning(t *testing.T) {
	dir := t.TempDir()
	vigil := exe(t, dir, "vigil")
	if w := slowHookWarning(vigil); w != "" {
		t.Fatalf("no vigil-hook: %q", w)
	}
	hb := exe(t, dir, "vigil-hook")
	if w := slowHookWarning(vigil); !strings.Contains(w, hb) {
		t.Fatalf("vigil-hook beside vigil: %q", w)
	}
	if w := slowHookWarning(hb); w != "" {
		t.Fatalf("vigil-hook itself: %q", w)
	}
}
