package attack

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/display"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode"
)

// TestEscapesReachAPersonAsText: an injected agent, with its own
// credential only, sends a command that erases its own row and an agent
// name that conceals the rest of the line. What an approver's client reads
// back holds them as they were sent (the exact bytes, for --json), and
// what display makes of them, as every CLI surface shows it, holds no
// byte a terminal interprets and still shows the true command, its level
// and the agent.
func TestEscapesReachAPersonAsText(t *testing.T) {
	tg := startTarget(t)
	agent := tg.clientAs(t, natsutil.RoleAgent)
	command := "rm -rf ~ #\x1b[2K\x1b[1G git status"
	name := "coder\x1b[8m-1"
	ev := events.Event{V: events.CurrentVersion, ID: "esc-1", Kind: events.KindAction, Conversation: "c-esc", Agent: name,
		Time: time.Now().UTC(), Data: map[string]any{"tool": "bash", "args": map[string]any{"command": command}}}
	if _, err := agent.Append(t.Context(), ev); err != nil {
		t.Fatalf("append: %v", err)
	}
	approver := tg.clientAs(t, natsutil.RoleApprover)
	testnode.Eventually(t, 20*time.Second, func() string {
		ps, err := approver.Pending(t.Context(), "c-esc")
		if err != nil {
			return err.Error()
		}
		if len(ps) != 1 {
			return fmt.Sprintf("%d pending, want 1", len(ps))
		}
		p := ps[0]
		if p.Command != command {
			return fmt.Sprintf("the stored command is %q, want the exact bytes %q", p.Command, command)
		}
		rules := []string{}
		for _, r := range p.Reasons {
			rules = append(rules, r.Analyzer+"/"+r.Rule)
		}
		shown := display.Line(string(p.Level), rules...) + "  " + display.Field(p.Agent, 40, false) + "  " + display.Field(p.Command, 72, false)
		if strings.ContainsAny(shown, "\x1b\u009b\r\n") {
			t.Fatalf("what a person sees holds an escape: %q", shown)
		}
		for _, want := range []string{"HIGH", "rm -rf ~", "coder", `\x1b[8m-1`, "git status"} {
			if !strings.Contains(shown, want) {
				t.Fatalf("what a person sees does not show %q: %q", want, shown)
			}
		}
		return ""
	})
}
