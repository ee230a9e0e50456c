package attack

import (
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// TestSelfProtectionCannotBeLowered: the agent's own `vigil approve`, a
// read of the approver token and an edit of its hook settings wait for a
// person, and stay that way after a person granted the same shape for the
// session or always, after a config that turns the built-in rules off,
// and under mode never.
func TestSelfProtectionCannotBeLowered(t *testing.T) {
	tg := startTarget(t)
	agent := tg.clientAs(t, natsutil.RoleAgent)
	person := tg.clientAs(t, natsutil.RoleApprover)
	attempts := []string{
		"vigil --data " + tg.dir + " approve cc-victim --scope always",
		"cat " + tg.dir + "/creds/approver.token",
		`echo '{}' > .claude/settings.local.json`,
		"/usr/bin/env bash -c 'kill $(vigil status --pid)'",
	}
	for i, cmd := range attempts {
		first := action("sp-first-"+string(rune('a'+i)), "c-sp", cmd)
		appendAs(t, agent, first)
		req := gateOf[events.GateRequested](t, tg, events.KindGateRequested, first.ID)
		if req.Level != events.RiskHigh || !strings.Contains(reasonNames(req.Reasons), "selfprotect/") {
			t.Fatalf("%q: requested at %s with %s", cmd, req.Level, reasonNames(req.Reasons))
		}
		verdict := events.VerdictSession
		if i%2 == 1 {
			verdict = events.VerdictAlways
		}
		var p client.PendingAction
		waitFor(t, "pending "+first.ID, gateDeadline, func() bool {
			var err error
			p, err = person.FindPending(t.Context(), first.ID)
			return err == nil
		})
		if _, err := person.Decide(t.Context(), p, verdict, client.DecideOptions{Approver: "alice"}); err != nil {
			t.Fatalf("%q: decide %s: %v", cmd, verdict, err)
		}
		again := action("sp-again-"+string(rune('a'+i)), "c-sp", cmd)
		appendAs(t, agent, again)
		r := gateOf[events.GateRequested](t, tg, events.KindGateRequested, again.ID)
		if d, ok := decidedNow(t, tg, again.ID); ok {
			t.Fatalf("%q after a %s grant: decided %s by %s", cmd, verdict, d.Outcome, d.By)
		}
		if r.Shape == "" {
			t.Logf("%q has no shape", cmd)
		}
	}
	// Rules off, mode never: still a person.
	cfg := events.DefaultConfig()
	cfg.Version = 2
	cfg.Analyzers = events.Analyzers{}
	cfg.Confirmation.Mode = events.ModeNever
	cfg.Confirmation.Threshold = ""
	cfg.Confirmation.Unknown = ""
	if err := events.ValidateConfig(cfg); err != nil {
		t.Fatalf("config: %v", err)
	}
	configAs(t, tg, "cfg-never", cfg)
	last := action("sp-never", "c-sp", "vigil approve cc-victim --scope once")
	appendAs(t, agent, last)
	req := gateOf[events.GateRequested](t, tg, events.KindGateRequested, last.ID)
	if req.ConfigVersion != 2 {
		t.Fatalf("judged under config v%d", req.ConfigVersion)
	}
}

func reasonNames(rs []events.Reason) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.Analyzer + "/" + r.Rule + " ")
	}
	return b.String()
}
