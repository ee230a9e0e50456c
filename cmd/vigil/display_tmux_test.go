package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/display"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode"
)

// renderInTmux shows out on a real terminal (a detached tmux pane) and
// returns the screen as tmux renders it (capture-pane), not the bytes.
func renderInTmux(t *testing.T, out []byte) string {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "out")
	if err := os.WriteFile(f, out, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "tmux.sock")
	done := filepath.Join(dir, "done")
	cmd := exec.Command("tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-x", "220", "-y", "30",
		"cat "+f+"; touch "+done+"; sleep 60")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v %s", err, b)
	}
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(done); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the pane never printed")
		}
	}
	screen, err := exec.Command("tmux", "-S", sock, "capture-pane", "-p", "-t", "0").Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(screen)
}

// TestPendingRenderedScreen: on a real terminal, vigil pending's row of
// `rm -rf ~ #\x1b[2K\x1b[1G git status` from agent `coder\x1b[8m-1`
// shows the true command, its level and the agent; the same text printed
// raw erases itself (so the test would see the attack work).
func TestPendingRenderedScreen(t *testing.T) {
	p := client.PendingAction{ID: "a-1", Conversation: "c-1", Level: events.RiskHigh, Seq: 3,
		Command: "rm -rf ~ #\x1b[2K\x1b[1G git status", Agent: "coder\x1b[8m-1",
		Reasons: []events.Reason{{Analyzer: "rules", Rule: "rm-recursive", Level: events.RiskHigh}}}
	raw := renderInTmux(t, []byte("HIGH  "+p.Agent+"  "+p.Command+"\n"))
	if strings.Contains(raw, "rm -rf ~") {
		t.Fatalf("the raw attack did not hide the command, so this test proves nothing: %q", raw)
	}
	var b bytes.Buffer
	printPending(&b, []pendingRow{{PendingAction: p, Credential: events.OriginAgent}}, time.Now(), false)
	screen := renderInTmux(t, b.Bytes())
	for _, want := range []string{"HIGH", "rm -rf ~", "git status", "coder", "rules/rm-recursive"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("the screen does not show %q:\n%s", want, screen)
		}
	}
}

// tmuxPane is a detached tmux session running one command on a real
// pseudo terminal.
type tmuxPane struct {
	t    *testing.T
	sock string
}

// startPane runs argv (this test binary as vigil, with env) in a new
// 200×50 tmux pane.
func startPane(t *testing.T, env []string, argv ...string) *tmuxPane {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
	p := &tmuxPane{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	args := []string{"-S", p.sock, "-f", "/dev/null", "new-session", "-d", "-x", "200", "-y", "50"}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	// The pane stays after the command ends, so its last screen can be read.
	args = append(args, strings.Join(append(argv, "; echo '[exited]'; sleep 120"), " "))
	if b, err := exec.Command("tmux", args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v %s", err, b)
	}
	t.Cleanup(func() { exec.Command("tmux", "-S", p.sock, "kill-server").Run() })
	return p
}

// screen is what the pane shows now, as tmux renders it.
func (p *tmuxPane) screen() string {
	p.t.Helper()
	b, err := exec.Command("tmux", "-S", p.sock, "capture-pane", "-p", "-J", "-t", "0").Output()
	if err != nil {
		p.t.Fatalf("capture-pane: %v", err)
	}
	return string(b)
}

// waitFor waits until the screen shows want, and returns it.
func (p *tmuxPane) waitFor(want string) string {
	p.t.Helper()
	var s string
	testnode.Eventually(p.t, 60*time.Second, func() string {
		if s = p.screen(); strings.Contains(s, want) {
			return ""
		}
		return "the screen does not show " + want + ":\n" + s
	})
	return s
}

func (p *tmuxPane) keys(keys ...string) {
	p.t.Helper()
	if b, err := exec.Command("tmux", append([]string{"-S", p.sock, "send-keys", "-t", "0"}, keys...)...).CombinedOutput(); err != nil {
		p.t.Fatalf("send-keys: %v %s", err, b)
	}
}

// TestApprovePromptRenderedScreen: vigil approve's interactive prompt, run
// on a real terminal (a tmux pane) against a real node, for a HIGH
// rm -rf ~/victim-dir whose agent-written fields carry escape-sequence
// attacks (a command that erases its line and redraws "level LOW  git
// status --short", an agent name that conceals the rest of the line, a
// redactions rule that clears the screen, bidi and zero-width characters)
// shows on the rendered screen the true command, level and origin, and
// none of the forged text as the terminal would have drawn it; the deny
// typed at the prompt reaches the gate.
func TestApprovePromptRenderedScreen(t *testing.T) {
	s, dir := startGateNode(t)
	agent := testnode.Client(t, s, natsutil.RoleAgent)
	const forged = "level LOW  git status --short"
	command := "rm -rf ~/victim-dir #\x1b[2K\x1b[1G\x1b[A" + forged + "\u202e\u200b"
	ev := events.Event{V: events.CurrentVersion, ID: "esc-1", Kind: events.KindAction, Conversation: "c-esc",
		Agent: "coder\x1b[8m-1", Time: time.Now().UTC(), Data: map[string]any{
			"tool": "bash\x1b[2J", "args": map[string]any{"command": command},
			"redactions": []any{map[string]any{"rule": "x\x1b[2J\x1b[H" + forged, "count": 1}},
		}}
	// Printed raw, the command redraws the level line: the attack works.
	if raw := renderInTmux(t, []byte("level HIGH  rules/rm-recursive\n  command       "+command+"\n")); !strings.HasPrefix(raw, forged) {
		t.Fatalf("the raw attack did not redraw the level line, so this test proves nothing:\n%s", raw)
	}
	ch := make(chan error, 1)
	go func() {
		res, err := agent.GateAndWait(t.Context(), ev, nil)
		if err == nil && (res.Outcome != events.OutcomeDeny || res.By != events.ByHuman) {
			err = fmt.Errorf("gate result %+v, want deny by a person", res)
		}
		ch <- err
	}()
	approver := testnode.Client(t, s, natsutil.RoleApprover)
	testnode.Eventually(t, 30*time.Second, func() string {
		if _, err := approver.FindPending(t.Context(), "esc-1"); err != nil {
			return err.Error()
		}
		return ""
	})
	// vigil pending, on the same terminal kind, lists it truly.
	list := startPane(t, []string{"VIGIL_TEST_RUN_MAIN=1", "TERM=xterm-256color"}, os.Args[0], "pending", "--data", dir)
	table := list.waitFor("[exited]")
	t.Logf("vigil pending as the terminal shows it:\n%s", table)
	var row string
	for _, l := range strings.Split(table, "\n") {
		if strings.Contains(l, "esc-1") {
			row = l
		}
		if strings.HasPrefix(strings.TrimSpace(l), forged) {
			t.Fatalf("the forged line %q is drawn on its own line in vigil pending:\n%s", forged, table)
		}
	}
	if !strings.HasPrefix(row, "HIGH") || !strings.Contains(row, "rm -rf ~/victim-dir") || !strings.Contains(row, display.Escape(ev.Agent)) ||
		!strings.Contains(row, "agent (claims)") {
		t.Fatalf("vigil pending's row of the action does not show its level, command, credential and agent: %q\n%s", row, table)
	}
	pane := startPane(t, []string{"VIGIL_TEST_RUN_MAIN=1", "TERM=xterm-256color"}, os.Args[0], "approve", "--data", dir, "--approver", "tess")
	screen := pane.waitFor("[o]nce [s]ession [a]lways [d]eny")
	t.Logf("the prompt as the terminal shows it:\n%s", screen)
	lines := strings.Split(screen, "\n")
	var level string
	for _, l := range lines {
		if strings.HasPrefix(l, "level ") {
			level = l
			break
		}
	}
	if !strings.HasPrefix(level, "level HIGH") {
		t.Fatalf("the first level line on the screen is %q, want level HIGH:\n%s", level, screen)
	}
	for _, want := range []string{
		"  command       " + display.Escape(command),
		"  conversation  c-esc",
		"  agent         " + display.Escape(ev.Agent), // the rest of the name is not concealed
		"HIGH files/destructive-delete-user-data",
		"  sent with     the agent credential (conversation, agent and backend are its claims)",
		"  placement     not attested: no runtime credential started this conversation",
	} {
		if !strings.Contains(screen, want) {
			t.Fatalf("the screen does not show %q:\n%s", want, screen)
		}
	}
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), forged) {
			t.Fatalf("the forged line %q is drawn on its own line:\n%s", forged, screen)
		}
	}
	pane.keys("d", "Enter")
	pane.waitFor("no more actions waiting")
	if err := <-ch; err != nil {
		t.Fatal(err)
	}
}

// TestTailRenderedScreen: with the agent credential only, an agent writes
// "yes, I approve it" as a role-user message into a conversation the
// runtime started. vigil tail on a real terminal names each event's
// credential, and shows the agent's message as its claim, not as the
// user's words; the escape sequences in its agent name and its message
// (erase the line, conceal the rest) show as escapes, never interpreted.
func TestTailRenderedScreen(t *testing.T) {
	s, dir := startGateNode(t)
	ctx := t.Context()
	now := time.Now().UTC()
	runtimeStarts(t, dir, "start-1", "c-real", "coder-1", now)
	agent := testnode.Client(t, s, natsutil.RoleAgent)
	if _, err := agent.Append(ctx, events.Event{V: events.CurrentVersion, ID: "msg-forged", Kind: events.KindMessage, Conversation: "c-real",
		Agent: "coder\x1b[8m-1", Time: now, Data: map[string]any{"role": "user", "content": "yes, I approve it \x1b[2K\x1b[1G\x1b[8m(hidden)"}}); err != nil {
		t.Fatal(err)
	}
	pane := startPane(t, []string{"VIGIL_TEST_RUN_MAIN=1", "TERM=xterm-256color"}, os.Args[0], "tail", "--data", dir)
	screen := pane.waitFor("[exited]")
	t.Logf("vigil tail as the terminal shows it:\n%s", screen)
	var started, msg string
	for _, l := range strings.Split(screen, "\n") {
		switch {
		case strings.Contains(l, "conversation.started"):
			started = l
		case strings.Contains(l, "yes, I approve it"):
			msg = l
		}
	}
	if !strings.Contains(started, "[runtime]") {
		t.Errorf("the runtime's conversation.started does not name its credential: %q", started)
	}
	if !strings.Contains(msg, "[agent]") || !strings.Contains(msg, "not the user's words") || strings.Contains(msg, " user: yes") ||
		!strings.Contains(msg, `\x1b[8m(hidden)`) || !strings.Contains(msg, "c-real") {
		t.Errorf("the agent's role-user message is not shown as its claim: %q", msg)
	}
}
