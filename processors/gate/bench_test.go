package gate

import (
	"fmt"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
)

// BenchmarkStep measures folding one action (decode, score with the real
// scorer, decide, build the output) under a config with the rules and
// policy analyzers and a deny rule.
func BenchmarkStep(b *testing.B) {
	p, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	cfg := events.Config{Version: 1, Analyzers: events.Analyzers{Rules: true, Policy: true},
		Confirmation: events.Confirmation{Mode: events.ModeRisky, Threshold: events.RiskHigh},
		PolicyRules:  []events.PolicyRule{{Name: "internal", Expr: `hosts.exists(h, h.endsWith(".internal"))`, Level: events.RiskHigh}},
		DenyRules:    []events.PolicyRule{{Name: "prod", Expr: `command.contains("prod-db")`}}}
	data, _ := events.ToData(cfg)
	cev := events.Event{V: 1, ID: "cfg", Kind: events.KindConfig, Time: time.Now(), Data: data}
	raw, _ := cev.MarshalMsgpack()
	processors.Feed(p, 1, "vigil.log._", raw)
	cmds := []string{"ls -la", "git status", "go test ./...", "cat README.md | head -50", "npm run build", "psql prod-db -c 'select 1'"}
	raws := make([][]byte, len(cmds))
	for i, c := range cmds {
		ev := events.Event{V: 1, ID: fmt.Sprintf("a%d", i), Kind: events.KindAction, Conversation: "c1", Time: time.Now(),
			Data: map[string]any{"tool": "bash", "args": map[string]any{"command": c}}}
		raws[i], _ = ev.MarshalMsgpack()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, outs := processors.Feed(p, uint64(i+2), "vigil.log.c1", raws[i%len(raws)])
		for _, o := range outs {
			if _, err := o.Event.Marshal(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
