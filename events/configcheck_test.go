package events

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// validCfg is a coherent starting point the cases below break one way each.
func validCfg() Config {
	return Config{
		Version:      3,
		Analyzers:    Analyzers{Rules: true, Injection: true},
		Confirmation: Confirmation{Mode: ModeRisky, Threshold: RiskHigh, Unknown: RiskMedium},
	}
}

// validationFields returns the fields named by err's *ValidationErrors.
func validationFields(err error) []string {
	var out []string
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		var ve *ValidationError
		if errors.As(e, &ve) {
			out = append(out, ve.Field)
		}
	}
	walk(err)
	return out
}

func TestDefaultConfigIsCoherent(t *testing.T) {
	d := DefaultConfig()
	if err := ValidateConfig(d); err != nil {
		t.Fatalf("the default config must validate: %v", err)
	}
	if err := ValidateConfig(d.WithDefaults()); err != nil {
		t.Fatalf("the default config with defaults must validate: %v", err)
	}
	if d.Confirmation.Mode != ModeRisky || d.Confirmation.Threshold != RiskHigh ||
		!d.Analyzers.Rules || !d.Analyzers.Injection || d.Analyzers.LLMHint || d.AsksSecurityRisk() {
		t.Fatalf("default = %+v; want risky HIGH, rules and injection on, llm hint off", d)
	}
}

// TestConfigMatrix covers every combination of confirmation mode (with each
// threshold for the level-comparing modes) and the four analyzers, with the
// policy analyzer's rules at HIGH or at MEDIUM. An independent oracle states
// the rule; the golden file holds every message for review.
func TestConfigMatrix(t *testing.T) {
	type mode struct {
		name      string
		mode      string
		threshold Risk
	}
	modes := []mode{
		{"always", ModeAlways, ""},
		{"never", ModeNever, ""},
		{"risky/LOW", ModeRisky, RiskLow},
		{"risky/MEDIUM", ModeRisky, RiskMedium},
		{"risky/HIGH", ModeRisky, RiskHigh},
		{"risky/default", ModeRisky, ""},
		{"analyze-only/MEDIUM", ModeAnalyzeOnly, RiskMedium},
		{"analyze-only/HIGH", ModeAnalyzeOnly, RiskHigh},
	}
	var b strings.Builder
	for _, m := range modes {
		for bits := 0; bits < 16; bits++ {
			for _, policyLevel := range []Risk{RiskHigh, RiskMedium} {
				an := Analyzers{Rules: bits&1 != 0, Policy: bits&2 != 0, Injection: bits&4 != 0, LLMHint: bits&8 != 0}
				if !an.Policy && policyLevel == RiskMedium {
					continue // the rule level matters only with the policy analyzer
				}
				c := Config{Version: 1, Analyzers: an, Confirmation: Confirmation{Mode: m.mode, Threshold: m.threshold}}
				if an.Policy {
					c.PolicyRules = []PolicyRule{{Name: "p1", Expr: "true", Level: policyLevel}}
				}
				// The oracle, stated independently of the implementation.
				anyOn := an.Rules || an.Policy || an.Injection || an.LLMHint
				// Injection judges context files, not actions: it reaches nothing.
				reach := 0
				if an.Rules || an.LLMHint {
					reach = 3
				} else if an.Policy {
					reach = policyLevel.Rank()
				}
				threshold := m.threshold
				if threshold == "" {
					threshold = RiskHigh
				}
				var want bool
				switch m.mode {
				case ModeAlways:
					want = true
				case ModeNever:
					want = !anyOn
				default:
					want = anyOn && reach > 0 && reach >= threshold.Rank()
				}
				err := ValidateConfig(c)
				name := fmt.Sprintf("%s rules=%t policy=%t injection=%t llm_hint=%t", m.name, an.Rules, an.Policy, an.Injection, an.LLMHint)
				if an.Policy {
					name += " policy_rule_level=" + string(policyLevel)
				}
				if (err == nil) != want {
					t.Errorf("%s: valid=%t, want %t (err: %v)", name, err == nil, want, err)
				}
				fmt.Fprintf(&b, "%s\n", name)
				if err == nil {
					fmt.Fprintf(&b, "\tok\n")
				} else {
					for _, line := range strings.Split(err.Error(), "\n") {
						fmt.Fprintf(&b, "\t%s\n", line)
					}
				}
				// Whatever is valid stays valid once defaults are filled in
				// (what `vigil config show` prints can be set again).
				if err == nil {
					if err := ValidateConfig(c.WithDefaults()); err != nil {
						t.Errorf("%s: valid, but not with defaults: %v", name, err)
					}
				}
			}
		}
	}
	golden(t, filepath.Join("testdata", "configcheck", "matrix.golden"), b.String())
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./events -run %s -update)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs (run with -update if the change is intended); got:\n%s", path, got)
	}
}

// TestIncoherentConfigs: every incoherent combination is refused, with a
// message that names the field and says what to do.
func TestIncoherentConfigs(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Config)
		field  string // the field the error must name
		hint   string // a phrase of the advice
	}{
		{"risky with no analyzer", func(c *Config) { c.Analyzers = Analyzers{} },
			"data.analyzers", "turn on an analyzer"},
		{"analyze-only with no analyzer", func(c *Config) {
			c.Analyzers = Analyzers{}
			c.Confirmation.Mode = ModeAnalyzeOnly
		}, "data.analyzers", "turn on an analyzer"},
		{"never with the LLM analyzer (the agent-sdk pair)", func(c *Config) {
			c.Analyzers = Analyzers{LLMHint: true}
			c.Confirmation = Confirmation{Mode: ModeNever}
		}, "data.confirmation.mode", "analyze-only"},
		{"never with the rules analyzer", func(c *Config) {
			c.Confirmation = Confirmation{Mode: ModeNever}
		}, "data.confirmation.mode", "analyze-only"},
		{"threshold no enabled analyzer can reach", func(c *Config) {
			c.Analyzers = Analyzers{Policy: true}
			c.PolicyRules = []PolicyRule{{Name: "curl", Expr: `cmd.name == "curl"`, Level: RiskMedium}}
		}, "data.confirmation.threshold", "lower the threshold to MEDIUM"},
		{"policy analyzer alone with no rules", func(c *Config) {
			c.Analyzers = Analyzers{Policy: true}
		}, "data.analyzers.policy", "add policy rules"},
		{"injection analyzer alone in risky", func(c *Config) {
			c.Analyzers = Analyzers{Injection: true}
		}, "data.analyzers.injection", "judges context files, not actions"},
		{"policy rules with the policy analyzer off", func(c *Config) {
			c.PolicyRules = []PolicyRule{{Name: "p", Expr: "true", Level: RiskHigh}}
		}, "data.policy_rules", "turn analyzers.policy on"},
		{"threshold in mode always", func(c *Config) {
			c.Confirmation = Confirmation{Mode: ModeAlways, Threshold: RiskHigh}
		}, "data.confirmation.threshold", "drop the threshold"},
		{"unknown in mode always", func(c *Config) {
			c.Confirmation = Confirmation{Mode: ModeAlways, Unknown: RiskHigh}
		}, "data.confirmation.unknown", "drop it"},
		{"threshold in mode never", func(c *Config) {
			c.Analyzers = Analyzers{}
			c.Confirmation = Confirmation{Mode: ModeNever, Threshold: RiskMedium}
		}, "data.confirmation.threshold", "drop the threshold"},
		{"UNKNOWN as a threshold", func(c *Config) { c.Confirmation.Threshold = RiskUnknown },
			"data.confirmation.threshold", "LOW, MEDIUM or HIGH"},
		{"UNKNOWN counted as UNKNOWN", func(c *Config) { c.Confirmation.Unknown = RiskUnknown },
			"data.confirmation.unknown", "LOW, MEDIUM or HIGH"},
		{"unknown mode", func(c *Config) { c.Confirmation.Mode = "sometimes" },
			"data.confirmation.mode", "always, never, risky, analyze-only"},
		{"never with a deny rule that needs a person", func(c *Config) {
			c.Analyzers = Analyzers{}
			c.Confirmation = Confirmation{Mode: ModeNever}
			c.DenyRules = []PolicyRule{{Name: "prod", Expr: "true", Action: DenyActionAsk}}
		}, "data.deny_rules[0].action", `use action "deny"`},
		{"analyze-only with a deny rule that needs a person", func(c *Config) {
			c.Confirmation.Mode = ModeAnalyzeOnly
			c.DenyRules = []PolicyRule{{Name: "prod", Expr: "true", Action: DenyActionAsk}}
		}, "data.deny_rules[0].action", "never asks anyone"},
		{"deny rule with an unknown action", func(c *Config) {
			c.DenyRules = []PolicyRule{{Name: "x", Expr: "true", Action: "maybe"}}
		}, "data.deny_rules[0].action", `"deny"`},
		{"policy rule with an action", func(c *Config) {
			c.Analyzers.Policy = true
			c.PolicyRules = []PolicyRule{{Name: "x", Expr: "true", Level: RiskHigh, Action: DenyActionDeny}}
		}, "data.policy_rules[0].action", "move the rule to deny_rules"},
		{"duplicate rule names", func(c *Config) {
			c.DenyRules = []PolicyRule{{Name: "x", Expr: "true"}, {Name: "x", Expr: "false"}}
		}, "data.deny_rules[1].name", "unique"},
		{"sandbox policy with no backends", func(c *Config) { c.Sandbox = SandboxSettings{Policy: SandboxAllow} },
			"data.sandbox.policy", "list the sandboxed backends"},
		{"sandbox policy in a mode that never asks", func(c *Config) {
			c.Confirmation = Confirmation{Mode: ModeAnalyzeOnly}
			c.Sandbox = SandboxSettings{Backends: []string{"docker"}, Policy: SandboxAllow}
		}, "data.sandbox.policy", "changes nothing"},
		{"allow-below-high with threshold HIGH", func(c *Config) {
			c.Sandbox = SandboxSettings{Backends: []string{"docker"}, Policy: SandboxAllowBelowHigh}
		}, "data.sandbox.policy", "lower confirmation.threshold"},
		{"local as a sandbox", func(c *Config) { c.Sandbox = SandboxSettings{Backends: []string{"local"}} },
			"data.sandbox.backends[0]", "not a sandbox"},
		{"a backend listed twice", func(c *Config) { c.Sandbox = SandboxSettings{Backends: []string{"docker", "docker"}} },
			"data.sandbox.backends[1]", "twice"},
		{"an unknown sandbox policy", func(c *Config) { c.Sandbox = SandboxSettings{Backends: []string{"docker"}, Policy: "yolo"} },
			"data.sandbox.policy", "confirm"},
		{"approval timeout too short", func(c *Config) { c.ApprovalTimeout = "100ms" },
			"data.approval_timeout", "between 1s"},
		{"approval timeout too long", func(c *Config) { c.ApprovalTimeout = "1000h" },
			"data.approval_timeout", "168h"},
		{"approval timeout not a duration", func(c *Config) { c.ApprovalTimeout = "ten minutes" },
			"data.approval_timeout", "Go duration"},
		{"conversation scope with no conversation", func(c *Config) { c.Scope = ScopeConversation },
			"data.conversation", "name the conversation"},
		{"global scope naming a conversation", func(c *Config) { c.Conversation = "c-1" },
			"data.conversation", `set scope to "conversation"`},
		{"relative workspace", func(c *Config) { c.Workspace = "src" },
			"data.workspace", "absolute path"},
		{"redaction regex that does not compile", func(c *Config) {
			c.Redaction.ExtraRules = []RedactionRule{{Name: "r", Regex: "(["}}
		}, "data.redaction.extra_rules[0].regex", "does not compile"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := validCfg()
			tc.mutate(&c)
			err := ValidateConfig(c)
			if err == nil {
				t.Fatalf("accepted: %+v", c)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			fields := validationFields(err)
			found := false
			for _, f := range fields {
				found = found || f == tc.field
			}
			if !found {
				t.Errorf("error names %v, want %s: %v", fields, tc.field, err)
			}
			if !strings.Contains(err.Error(), tc.hint) {
				t.Errorf("error does not say %q: %v", tc.hint, err)
			}
		})
	}
}

// TestCoherentConfigs are combinations that look unusual but mean what
// they say, and must pass.
func TestCoherentConfigs(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Config)
	}{
		{"always with no analyzer", func(c *Config) {
			c.Analyzers = Analyzers{}
			c.Confirmation = Confirmation{Mode: ModeAlways}
		}},
		{"never with deny rules that deny", func(c *Config) {
			c.Analyzers = Analyzers{}
			c.Confirmation = Confirmation{Mode: ModeNever}
			c.DenyRules = []PolicyRule{{Name: "rm-root", Expr: "true"}}
		}},
		{"analyze-only with deny rules (recorded as would-deny)", func(c *Config) {
			c.Confirmation.Mode = ModeAnalyzeOnly
			c.DenyRules = []PolicyRule{{Name: "rm-root", Expr: "true", Action: DenyActionDeny}}
		}},
		{"risky with an ask rule", func(c *Config) {
			c.DenyRules = []PolicyRule{{Name: "prod", Expr: "true", Action: DenyActionAsk}}
		}},
		{"policy alone reaching the threshold", func(c *Config) {
			c.Analyzers = Analyzers{Policy: true}
			c.PolicyRules = []PolicyRule{{Name: "p", Expr: "true"}} // no level: HIGH
		}},
		{"llm hint alone", func(c *Config) { c.Analyzers = Analyzers{LLMHint: true} }},
		{"sandbox allow", func(c *Config) {
			c.Sandbox = SandboxSettings{Backends: []string{"docker", "modal"}, Policy: SandboxAllow}
		}},
		{"sandbox allow-below-high with threshold MEDIUM", func(c *Config) {
			c.Confirmation.Threshold = RiskMedium
			c.Sandbox = SandboxSettings{Backends: []string{"docker"}, Policy: SandboxAllowBelowHigh}
		}},
		{"sandbox allow-below-high in mode always", func(c *Config) {
			c.Confirmation = Confirmation{Mode: ModeAlways}
			c.Sandbox = SandboxSettings{Backends: []string{"docker"}, Policy: SandboxAllowBelowHigh}
		}},
		{"conversation scope", func(c *Config) { c.Scope, c.Conversation = ScopeConversation, "c-42" }},
		{"timeout bounds", func(c *Config) { c.ApprovalTimeout = "1s" }},
		{"client hand-offs recorded", func(c *Config) { c.Confirmation.ClientHandoff = ClientHandoffRecord }},
		{"client hand-offs ignored", func(c *Config) { c.Confirmation.ClientHandoff = ClientHandoffIgnore }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := validCfg()
			tc.mutate(&c)
			if err := ValidateConfig(c); err != nil {
				t.Fatalf("refused: %v", err)
			}
			if err := ValidateConfig(c.WithDefaults()); err != nil {
				t.Fatalf("refused with defaults: %v", err)
			}
		})
	}
}

// TestConfigEvent checks the rules only the event can tell, through
// Event.Validate as the ingest service calls it.
func TestConfigEvent(t *testing.T) {
	mk := func(conv string, c Config) *Event {
		data, err := ToData(c)
		if err != nil {
			t.Fatal(err)
		}
		return &Event{V: 1, ID: "cfg-1", Kind: KindConfig, Conversation: conv, Time: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Data: data}
	}
	global := validCfg()
	if err := mk("", global).Validate(); err != nil {
		t.Fatalf("global config with no conversation: %v", err)
	}
	ev := mk("c-1", global)
	if err := ev.Validate(); err == nil || !strings.Contains(err.Error(), "vigil.ingest.control._") {
		t.Fatalf("global config on a conversation: err = %v, want a refusal naming the global subject", err)
	}
	conv := validCfg()
	conv.Scope, conv.Conversation = ScopeConversation, "c-1"
	if err := mk("c-1", conv).Validate(); err != nil {
		t.Fatalf("conversation config on its conversation: %v", err)
	}
	if err := mk("", conv).Validate(); err != nil {
		t.Fatalf("conversation config on the global subject: %v", err)
	}
	if err := mk("c-2", conv).Validate(); err == nil {
		t.Fatal("conversation config on another conversation's subject was accepted")
	}
	bad := validCfg()
	bad.Analyzers = Analyzers{}
	if err := mk("", bad).Validate(); err == nil {
		t.Fatal("an incoherent config event was accepted")
	}
}

func TestWithDefaults(t *testing.T) {
	c := Config{Version: 1, Analyzers: Analyzers{Rules: true}, Confirmation: Confirmation{Mode: ModeRisky},
		DenyRules: []PolicyRule{{Name: "d", Expr: "true"}}}
	d := c.WithDefaults()
	if d.Scope != ScopeGlobal || d.Confirmation.Threshold != RiskHigh || d.Confirmation.Unknown != RiskMedium ||
		d.ApprovalTimeout != "10m0s" || d.Sandbox.Policy != SandboxConfirm || d.DenyRules[0].Action != DenyActionDeny {
		t.Fatalf("defaults = %+v", d)
	}
	if d.Confirmation.ClientHandoff != ClientHandoffRecord {
		t.Fatalf("client_handoff default = %q, want %q", d.Confirmation.ClientHandoff, ClientHandoffRecord)
	}
	if c.DenyRules[0].Action != "" {
		t.Fatal("WithDefaults changed its receiver's deny rules")
	}
	n := Config{Version: 1, Confirmation: Confirmation{Mode: ModeNever}}.WithDefaults()
	if n.Confirmation.Threshold != "" || n.Confirmation.Unknown != "" {
		t.Fatalf("mode never got level defaults: %+v", n.Confirmation)
	}
	if got := (Config{ApprovalTimeout: "90s"}).ApprovalTimeoutDuration(); got != 90*time.Second {
		t.Fatalf("ApprovalTimeoutDuration = %v", got)
	}
}

// TestClientHandoffPolicy: confirmation.client_handoff is record or ignore;
// anything else is refused by both the typed check and the data shape,
// naming the field and the two values.
func TestClientHandoffPolicy(t *testing.T) {
	for _, v := range []string{"allow", "human", "Record", " ignore"} {
		c := validCfg()
		c.Confirmation.ClientHandoff = v
		err := ValidateConfig(c)
		if fields := validationFields(err); len(fields) != 1 || fields[0] != "data.confirmation.client_handoff" {
			t.Errorf("client_handoff %q: error names %v, want data.confirmation.client_handoff: %v", v, fields, err)
		}
		if err == nil || !strings.Contains(err.Error(), `"record"`) || !strings.Contains(err.Error(), `"ignore"`) {
			t.Errorf("client_handoff %q: the error must name both values: %v", v, err)
		}
		data, derr := ToData(c)
		if derr != nil {
			t.Fatal(derr)
		}
		ev := Event{V: 1, ID: "cfg-1", Kind: KindConfig, Time: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Data: data}
		if err := ev.Validate(); err == nil {
			t.Errorf("client_handoff %q: a config event carrying it was accepted", v)
		}
	}
}
