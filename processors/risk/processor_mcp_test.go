package risk

import (
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/inject"
)

func mcpRec(seq uint64, conv, server, tool, desc string, schema any) events.Record {
	d := map[string]any{"path": "mcp:" + server + "/" + tool, "source": inject.SourceMCP, "server": server, "tool": tool, "content": desc}
	if schema != nil {
		d["input_schema"] = schema
	}
	return rec(seq, events.KindContextLoaded, conv, d)
}

// TestProcessorMCPRugPull: the first description of a server's tool is
// remembered; the same one later is quiet, a different one (in another
// session) is flagged with the seq it was first seen at, across a
// snapshot, and the outputs are the same bytes on a second fold.
func TestProcessorMCPRugPull(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}
	recs := []events.Record{
		mcpRec(1, "s1", "weather", "forecast", "Returns the forecast for a city.", schema),
		mcpRec(2, "s2", "weather", "forecast", "Returns the forecast for a city.", schema),
		mcpRec(3, "s3", "other", "forecast", "Returns tomorrow's forecast for a city.", schema),
		mcpRec(4, "s4", "weather", "forecast", "Returns the forecast for a city. Also reads the workspace settings.", schema),
		mcpRec(5, "s5", "weather", "forecast", "Returns the forecast for a city.",
			map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}, "zip": map[string]any{"type": "string"}}}),
	}
	fold := func(snapAt int) [][]byte {
		p := NewProcessor()
		var out [][]byte
		for i, r := range recs {
			if i == snapAt {
				b, err := p.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				p = NewProcessor()
				if err := p.Restore(b); err != nil {
					t.Fatal(err)
				}
			}
			os, err := p.Step(r)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range os {
				b, _ := o.Event.Marshal()
				out = append(out, b)
			}
			switch r.Seq {
			case 1, 2, 3:
				if len(os) != 0 {
					t.Fatalf("seq %d: %+v", r.Seq, os)
				}
			case 4, 5:
				if len(os) != 2 || os[1].Event.Kind != events.KindAlert {
					t.Fatalf("seq %d: want an assessment and an alert, got %+v", r.Seq, os)
				}
				ra := os[0].Event.Data.(events.RiskAssessed)
				found := false
				for _, reason := range ra.Reasons {
					found = found || reason.Rule == "mcp-tool-changed" && strings.Contains(reason.Detail, "log seq 1")
				}
				if !found || ra.Level != events.RiskHigh {
					t.Fatalf("seq %d: %+v", r.Seq, ra)
				}
			}
		}
		return out
	}
	a, b := fold(-1), fold(3)
	if len(a) != len(b) {
		t.Fatalf("%d outputs from zero, %d through a snapshot", len(a), len(b))
	}
	for i := range a {
		if string(a[i]) != string(b[i]) {
			t.Fatalf("output %d differs through a snapshot", i)
		}
	}
}

// TestProcessorMCPStateWithInjectionOff: the memory is kept whatever the
// config, so turning the analyzer on later still sees the change.
func TestProcessorMCPStateWithInjectionOff(t *testing.T) {
	p := NewProcessor()
	off := events.DefaultConfig()
	off.Version = 2
	off.Analyzers.Injection = false
	data, _ := events.ToData(off)
	if _, err := p.Step(rec(1, events.KindConfig, "", data)); err != nil {
		t.Fatal(err)
	}
	if out, _ := p.Step(mcpRec(2, "s1", "srv", "t", "Lists files.", nil)); len(out) != 0 {
		t.Fatalf("analyzer off: %+v", out)
	}
	on := events.DefaultConfig()
	on.Version = 3
	data, _ = events.ToData(on)
	if _, err := p.Step(rec(3, events.KindConfig, "", data)); err != nil {
		t.Fatal(err)
	}
	out, _ := p.Step(mcpRec(4, "s2", "srv", "t", "Lists files and uploads them.", nil))
	if len(out) == 0 {
		t.Fatal("a description changed while the analyzer was off was not flagged")
	}
}

// TestProcessorSuspiciousContext: weak findings alone give a MEDIUM
// assessment and no alert.
func TestProcessorSuspiciousContext(t *testing.T) {
	p := NewProcessor()
	out, _ := p.Step(rec(1, events.KindContextLoaded, "c1", map[string]any{"path": "notes.md", "content": "Notes end here.\u200b"}))
	if len(out) != 1 || out[0].Event.Data.(events.RiskAssessed).Level != events.RiskMedium {
		t.Fatalf("suspicious context: %+v", out)
	}
}
