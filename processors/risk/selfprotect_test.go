package risk

import (
	"testing"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
	"github.com/vigil-dev/vigil/processors/risk/shell"
)

func TestSelfProtectRegistry(t *testing.T) {
	s := mustScorer(t, events.DefaultConfig())
	for _, r := range shell.SelfRules() {
		if r.Doc == "" || len(r.Fires) == 0 || len(r.Quiet) == 0 {
			t.Errorf("%s: incomplete declaration", r.ID)
		}
		for _, ex := range r.Fires {
			ev := shell.SelfExampleEvent(ex)
			a := s.ScoreAction(&ev, Env{Workspace: "/tmp/t/proj"})
			ok := false
			for _, re := range a.Reasons {
				if re.Analyzer == core.AnalyzerSelfProtect && re.Rule == r.ID && re.Level == events.RiskHigh {
					ok = true
				}
			}
			if !ok || a.Level != events.RiskHigh {
				t.Errorf("%s must fire HIGH on %s %v: %s %s", r.ID, ex.Tool, ex.Args, a.Level, reasonsBrief(a))
			}
		}
		for _, ex := range r.Quiet {
			ev := shell.SelfExampleEvent(ex)
			a := s.ScoreAction(&ev, Env{Workspace: "/tmp/t/proj"})
			for _, re := range a.Reasons {
				if re.Analyzer == core.AnalyzerSelfProtect {
					t.Errorf("%s: must not fire on %s %v: %s/%s %s", r.ID, ex.Tool, ex.Args, re.Analyzer, re.Rule, re.Detail)
				}
			}
			if r.ID != selfCredsID && a.Level == events.RiskHigh {
				t.Errorf("%s: benign %s %v scores HIGH: %s", r.ID, ex.Tool, ex.Args, reasonsBrief(a))
			}
		}
	}
}

// The self-protection findings stay when the config turns built-in
// rules off.
func TestSelfProtectSurvivesRulesOff(t *testing.T) {
	cfg := events.DefaultConfig()
	cfg.Analyzers.Rules = false
	s := mustScorer(t, cfg)
	ev := shell.SelfExampleEvent(sh("vigil approve X --scope always"))
	a := s.ScoreAction(&ev, Env{})
	if a.Level != events.RiskHigh {
		t.Fatalf("rules off: %s %s", a.Level, reasonsBrief(a))
	}
}

// A HOME under /tmp is the user's home: deleting in it is a home delete.
func TestHomeUnderTmp(t *testing.T) {
	s := mustScorer(t, events.DefaultConfig())
	ev := shell.SelfExampleEvent(sh("rm -rf /tmp/t/home/victim"))
	a := s.ScoreAction(&ev, Env{Workspace: "/tmp/t/proj"})
	if a.Level != events.RiskHigh {
		t.Errorf("rm -rf <home>/victim with HOME=/tmp/t/home: %s %s", a.Level, reasonsBrief(a))
	}
	ev = shell.SelfExampleEvent(sh("rm -rf /tmp/t/proj/build"))
	if a := s.ScoreAction(&ev, Env{Workspace: "/tmp/t/proj"}); a.Level == events.RiskHigh {
		t.Errorf("rm -rf of the workspace's build: %s %s", a.Level, reasonsBrief(a))
	}
	// A home claimed at / or /etc moves nothing into the user's.
	for _, h := range []string{"/", "/etc"} {
		ev := shell.SelfExampleEvent(sh("echo x >> /etc/sudoers"))
		ev.Data["hook"].(map[string]any)["home"] = h
		if a := s.ScoreAction(&ev, Env{}); a.Level != events.RiskHigh {
			t.Errorf("home %s lowered a sudoers write: %s", h, reasonsBrief(a))
		}
	}
}

// selfCredsID is the credential rule's id: its benign examples may be
// HIGH under another rule.
const selfCredsID = "vigil-credential-access"

// sh is a self-protection example of a shell command.
func sh(cmd string) shell.SelfExample {
	return shell.SelfExample{Tool: "bash", Args: map[string]any{"command": cmd}}
}
