package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
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
	printPending(&b, []client.PendingAction{p}, time.Now(), false)
	screen := renderInTmux(t, b.Bytes())
	for _, want := range []string{"HIGH", "rm -rf ~", "git status", "coder", "rules/rm-recursive"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("the screen does not show %q:\n%s", want, screen)
		}
	}
}
