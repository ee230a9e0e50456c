package events

import "testing"

// benchDerived are derived events as the live pipeline emits them: a risk
// assessment of a shell command with two reasons, and the gate's decision
// on it.
func benchDerived() map[string]Derived {
	reasons := []Reason{
		{Analyzer: "shell", Rule: "destructive-delete-recursive", Detail: "rm -r on a path outside the project (/home/dev/.cache)", Level: RiskHigh},
		{Analyzer: "files", Rule: "ran-written-file", Detail: "runs ./build.sh, written by the agent at seq 118", Level: RiskMedium, Span: []int{12, 22}},
	}
	const conv, seq, tm = "conv-01JD8Q2W4X5Y6Z7A8B9C0D1E2F", 4242, "2026-12-03T08:00:00.123456789Z"
	return map[string]Derived{
		"risk": {V: 1, ID: "risk:4242", Kind: KindRiskAssessed, Conversation: conv, Seq: seq, Time: tm,
			Data: RiskAssessed{ActionID: "01JD8Q3M5N6P7Q8R9S0T1V2W3X", LogSeq: seq, ConfigVersion: 7, Level: RiskHigh, Reasons: reasons}},
		"gate": {V: 1, ID: "gate:4242", Kind: KindGateDecided, Conversation: conv, Seq: seq, Time: tm,
			Data: GateDecided{ActionID: "01JD8Q3M5N6P7Q8R9S0T1V2W3X", LogSeq: seq, Outcome: OutcomeDeny, By: ByRule, Level: RiskHigh,
				Reasons: reasons, DecisionSeq: seq, Shape: "rm -r <path>", ConfigVersion: 7,
				Digest: "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}},
	}
}

// BenchmarkDerivedMarshal: a processor output encoded by the driver, its
// Data typed as the processor built it ("risk", "gate") or the generic map
// a decoder returns ("risk-generic", as replay re-encodes).
func BenchmarkDerivedMarshal(b *testing.B) {
	ds := benchDerived()
	g := ds["risk"]
	body, err := g.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	if g, err = DecodeDerived(body); err != nil {
		b.Fatal(err)
	}
	ds["risk-generic"] = g
	for _, name := range []string{"risk", "gate", "risk-generic"} {
		d := ds[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.Marshal(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeDerived: the same outputs decoded, as the expiry timer,
// the notifier and replay read them.
func BenchmarkDecodeDerived(b *testing.B) {
	ds := benchDerived()
	for _, name := range []string{"risk", "gate"} {
		d := ds[name]
		body, err := d.Marshal()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := DecodeDerived(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
