package bench

import (
	"bytes"
	"strings"
	"testing"
)

func TestBenchMetrics(t *testing.T) {
	out := []byte(`goos: linux
BenchmarkReplay-2   	 1000000	      9290 ns/op	    107657 events/s	     15312 cpu-ns/event
BenchmarkRedactAdversarial/pem-run-2         	     100	   1000 ns/op	  33.10 MB/s	  31.5 MB/cpu-s	 1.20 work/B
BenchmarkRedactAdversarial/quotes            	     100	   1000 ns/op	  12.00 MB/cpu-s
BenchmarkNotAResult-2  some text
PASS
`)
	m := BenchMetrics(out)
	if got := m["BenchmarkReplay"]["events/s"]; got != 107657 {
		t.Errorf("replay events/s = %v", got)
	}
	if got := m["BenchmarkRedactAdversarial/pem-run"]["MB/cpu-s"]; got != 31.5 {
		t.Errorf("pem-run MB/cpu-s = %v (the -N suffix is cut, sub-benchmark names kept)", got)
	}
	if _, ok := m["BenchmarkNotAResult"]; ok {
		t.Error("a line without an iteration count was read as a result")
	}
}

func TestFigures(t *testing.T) {
	tests := []struct {
		name  string
		fig   Figure
		value string
		met   bool
	}{
		{"pipeline met", PipelineFigure([]byte(`{"ratio":0.61,"vigil_events_per_s":61000,"bare_events_per_s":100000}`), "interval", "c"), "0.61 (61000 vs 100000 ev/s)", true},
		{"pipeline not met", PipelineFigure([]byte(`{"ratio":0.12,"vigil_events_per_s":12000,"bare_events_per_s":100000}`), "interval", "c"), "0.12 (12000 vs 100000 ev/s)", false},
		{"pipeline fsync", PipelineFigure([]byte(`{"ratio":1.2,"vigil_events_per_s":6000,"bare_events_per_s":5000}`), "fsync", "c"), "1.20 (6000 vs 5000 ev/s)", true},
		{"pipeline broken", PipelineFigure([]byte(`vigil: boom`), "fsync", "c"), "", false},
		{"gate interval", GateFigure([]byte(`{"p50_ms":0.49,"p99_ms":5.6}`), "interval", "c"), "0.49 / 5.60 ms", false},
		{"gate fsync", GateFigure([]byte(`{"p50_ms":0.8,"p99_ms":6,"bare_publish_p50_ms":0.41,"bare_publish_p99_ms":2.3}`), "fsync", "c"), "2.0 / 2.6 (0.80 / 6.0 ms vs 0.41 / 2.3 ms)", true},
		{"pipeline cpu", PipelineFigure([]byte(`{"ratio":0.2,"vigil_events_per_s":2000,"bare_events_per_s":10000,"vigil_cpu_us_per_event":150,"bare_cpu_us_per_event":30}`), "interval", "c"), "0.20 (2000 vs 10000 ev/s)", false},
		{"gate saturated", GateFigure([]byte(`{"p50_ms":2000,"p99_ms":9000,"target_rate":1000,"achieved_rate":400,"cpu_us_per_action":700,"cores_used":0.35}`), "interval", "c"), "2000.00 / 9000.00 ms", false},
		{"gate errors", GateFigure([]byte(`{"p50_ms":0.3,"p99_ms":1,"errors":3}`), "interval", "c"), "0.30 / 1.00 ms", false},
		{"restart", RestartFigure([]byte(`{"events":1000000,"runs":[{"decision_seconds":1.1,"rss_mb":120},{"decision_seconds":0.9,"rss_mb":260}]}`), "c"), "1.10 s, 260 MB", false},
		{"replay", ReplayFigure([]byte("BenchmarkReplay-2 1000000 4000 ns/op 250000 events/s 7500 cpu-ns/event\n"), "c"), "250,000 ev/s (7.5 µs CPU an event)", true},
		{"hook", HookFigure([]byte("BenchmarkHookProcess-2 21 1 ns/op 1.2 hello-ms 4.0 hook-ms 3.33 hook/hello\n"), "c"), "3.3 (4.0 vs 1.2 ms)", true},
		{"hook missing", HookFigure([]byte("FAIL\n"), "c"), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.fig.Value != tt.value || tt.fig.Met != tt.met {
				t.Errorf("value %q met %v, want %q %v (note %q)", tt.fig.Value, tt.fig.Met, tt.value, tt.met, tt.fig.Note)
			}
			if want := map[string]string{"pipeline cpu": "CPU an event 150 vs 30 µs (0.20)", "gate saturated": "saturated: 400/s reached, 700 µs CPU an action, 0.35 cores used"}[tt.name]; want != "" && tt.fig.Note != want {
				t.Errorf("note %q, want %q", tt.fig.Note, want)
			}
			if tt.value == "" && tt.fig.Note == "" {
				t.Error("a missing figure has no note saying why")
			}
		})
	}
}

func TestRedactFiguresWorstCase(t *testing.T) {
	out := []byte("BenchmarkRedact-2 10 1 ns/op 40 MB/cpu-s\nBenchmarkRedactAdversarial/a-2 10 1 ns/op 30 MB/cpu-s\nBenchmarkRedactAdversarial/b-2 10 1 ns/op 15 MB/cpu-s\n")
	slow := RedactFigures([]byte("BenchmarkRedactAdversarial/c-2 10 1 ns/op 0.5 MB/cpu-s\n"), "c")
	if slow[1].Met {
		t.Errorf("0.5 MB/s adversarial counted as met: %+v", slow[1])
	}
	fs := RedactFigures(out, "c")
	if fs[0].Value != "40.0 MB/s" || !fs[0].Met {
		t.Errorf("typical: %+v", fs[0])
	}
	if fs[1].Value != "15.0 MB/s" || !fs[1].Met || fs[1].Note != "worst: b" {
		t.Errorf("adversarial: %+v", fs[1])
	}
}

func TestAllReportTable(t *testing.T) {
	r := &AllReport{Commit: "abc1234", Date: "2026-12-01", CPUs: 2, GoVersion: "go1.26", LoadBefore: "0.1 0.2 0.3", LoadAfter: "1 1 1",
		Figures: []Figure{{Name: "one", Command: "vigil x", Target: "≥ 1", Value: "2", Met: true}, {Name: "two", Command: "go y", Target: "≤ 3", Note: "needs go"}, {Name: "three", Target: "≤ 1", Value: "9"}}}
	r.Count()
	if r.Unmeasured != 1 || r.NotMet != 1 {
		t.Fatalf("unmeasured %d, not met %d", r.Unmeasured, r.NotMet)
	}
	var buf bytes.Buffer
	if err := r.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"abc1234", "load 0.1 0.2 0.3 before", "not measured  (needs go)", "NO", "vigil x"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
}
