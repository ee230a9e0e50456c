package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// A Figure is one headline figure of `vigil bench all`: what was
// measured, how, the target it is held to, and what was measured.
type Figure struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	Target  string `json:"target"`
	// Value is the measured figure as printed ("0.42", "1.8 / 4.2 ms");
	// empty when it was not measured.
	Value string `json:"value"`
	// Met says whether the target is met; false when not measured.
	Met bool `json:"met"`
	// Note says why a figure is missing, what it was measured against, or
	// what explains it (the CPU an event, a saturated run).
	Note string `json:"note,omitempty"`
}

// AllReport is what `vigil bench all --json` prints.
type AllReport struct {
	Commit      string    `json:"commit,omitempty"`
	Date        string    `json:"date"`
	CPUs        int       `json:"cpus"`
	GoVersion   string    `json:"go_version"`
	LoadBefore  string    `json:"load_before"`
	LoadAfter   string    `json:"load_after"`
	Figures     []Figure  `json:"figures"`
	Unmeasured  int       `json:"unmeasured"`
	NotMet      int       `json:"not_met"`
	SecondsUsed float64   `json:"seconds"`
	Raw         []RawJSON `json:"raw,omitempty"`
}

// RawJSON is one bench's own JSON output, kept for the record.
type RawJSON struct {
	Command string          `json:"command"`
	Output  json.RawMessage `json:"output"`
}

// Count fills Unmeasured and NotMet from the figures.
func (r *AllReport) Count() {
	r.Unmeasured, r.NotMet = 0, 0
	for _, f := range r.Figures {
		switch {
		case f.Value == "":
			r.Unmeasured++
		case !f.Met:
			r.NotMet++
		}
	}
}

// WriteTable prints the report as a table a person reads.
func (r *AllReport) WriteTable(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "vigil bench all at %s, %s, %d CPUs, %s; load %s before, %s after (%.0f s)\n",
		orDash(r.Commit), r.Date, r.CPUs, r.GoVersion, r.LoadBefore, r.LoadAfter, r.SecondsUsed)
	nw, tw, vw := len("figure"), len("target"), len("measured")
	for _, f := range r.Figures {
		nw, tw, vw = max(nw, len(f.Name)), max(tw, len(f.Target)), max(vw, len(f.Value))
	}
	fmt.Fprintf(bw, "  %-*s  %-*s  %-*s  met\n", nw, "figure", tw, "target", vw, "measured")
	for _, f := range r.Figures {
		met := "yes"
		switch {
		case f.Value == "":
			met = "not measured"
		case !f.Met:
			met = "NO"
		}
		fmt.Fprintf(bw, "  %-*s  %-*s  %-*s  %s", nw, f.Name, tw, f.Target, vw, orDash(f.Value), met)
		if f.Note != "" {
			fmt.Fprintf(bw, "  (%s)", f.Note)
		}
		fmt.Fprintln(bw)
	}
	fmt.Fprintln(bw, "commands:")
	for _, f := range r.Figures {
		fmt.Fprintf(bw, "  %-*s  %s\n", nw, f.Name, f.Command)
	}
	return bw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Targets of the headline figures (shared/DESIGN.md and the issues that
// set them). Each is checked by the figure functions below.
const (
	TargetPipelineInterval = 0.5 // × bare JetStream, same run (goal 0.7)
	TargetPipelineFsync    = 1.0 // × bare JetStream, same run
	TargetGateIntervalP50  = 1.0 // ms
	TargetGateIntervalP99  = 3.0 // ms
	TargetGateFsyncP50     = 2.0 // × the bare fsynced publish's p50
	TargetGateFsyncP99     = 3.0 // × the bare fsynced publish's p99
	TargetReplay           = 200000.0
	TargetRestartSeconds   = 5.0
	TargetRestartRSSMB     = 250.0
	TargetHook             = 4.0 // × a hello-world binary's start
	TargetRedactMBs        = 20.0
	// TargetRedactAdversarialMBs: text shaped to be slow is redacted in
	// linear time, a 1 MB event well inside the ingest request's 10 s.
	TargetRedactAdversarialMBs = 1.0
)

// PipelineFigure reads `vigil bench pipeline --json` (a PipelineResult).
func PipelineFigure(out []byte, durability, command string) Figure {
	f := Figure{Name: "pipeline " + durability + ", × bare JetStream", Command: command}
	target := TargetPipelineFsync
	f.Target = "≥ 1.0"
	if durability == "interval" {
		target = TargetPipelineInterval
		f.Target = "≥ 0.5 (goal 0.7)"
	}
	var r PipelineResult
	if err := json.Unmarshal(out, &r); err != nil || r.BareEventsPerS == 0 {
		f.Note = "no result: " + errText(err, out)
		return f
	}
	f.Value = fmt.Sprintf("%.2f (%.0f vs %.0f ev/s)", r.Ratio, r.VigilEventsPerS, r.BareEventsPerS)
	f.Met = r.Ratio >= target
	if r.VigilCPUMicros > 0 {
		// Load moves the rates; the CPU an event far less.
		f.Note = fmt.Sprintf("CPU an event %.0f vs %.0f µs (%.2f)", r.VigilCPUMicros, r.BareCPUMicros, r.BareCPUMicros/r.VigilCPUMicros)
	}
	return f
}

// gateJSON is the part of `vigil bench gate --json` the figures read.
type gateJSON struct {
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	BareP50Ms float64 `json:"bare_publish_p50_ms"`
	BareP99Ms float64 `json:"bare_publish_p99_ms"`
	Errors    int     `json:"errors"`
	CPUMicros float64 `json:"cpu_us_per_action"`
	CoresUsed float64 `json:"cores_used"`
	Achieved  float64 `json:"achieved_rate"`
	Target    float64 `json:"target_rate"`
}

// GateFigure reads `vigil bench gate --json`.
func GateFigure(out []byte, durability, command string) Figure {
	f := Figure{Name: "gate " + durability + " p50 / p99 at 1,000/s", Command: command}
	var r gateJSON
	err := json.Unmarshal(out, &r)
	if err != nil || r.P50Ms == 0 {
		f.Note = "no result: " + errText(err, out)
		if durability == "interval" {
			f.Target = fmt.Sprintf("≤ %g / ≤ %g ms", TargetGateIntervalP50, TargetGateIntervalP99)
		}
		return f
	}
	if durability == "interval" {
		f.Target = fmt.Sprintf("≤ %g / ≤ %g ms", TargetGateIntervalP50, TargetGateIntervalP99)
		f.Value = fmt.Sprintf("%.2f / %.2f ms", r.P50Ms, r.P99Ms)
		f.Met = r.P50Ms <= TargetGateIntervalP50 && r.P99Ms <= TargetGateIntervalP99
	} else {
		f.Name = "gate fsync p50 / p99, × bare fsynced publish"
		f.Target = fmt.Sprintf("≤ %g / ≤ %g", TargetGateFsyncP50, TargetGateFsyncP99)
		if r.BareP50Ms == 0 || r.BareP99Ms == 0 {
			f.Note = "the bench measured no bare publish"
			return f
		}
		r50, r99 := r.P50Ms/r.BareP50Ms, r.P99Ms/r.BareP99Ms
		f.Value = fmt.Sprintf("%.1f / %.1f (%.2f / %.1f ms vs %.2f / %.1f ms)", r50, r99, r.P50Ms, r.P99Ms, r.BareP50Ms, r.BareP99Ms)
		f.Met = r50 <= TargetGateFsyncP50 && r99 <= TargetGateFsyncP99
	}
	if r.Errors > 0 {
		f.Met = false
		f.Note = fmt.Sprintf("%d errors", r.Errors)
	}
	if r.CPUMicros > 0 && r.Target > 0 && r.Achieved < 0.95*r.Target {
		// Requests arrived faster than they were served: the percentiles
		// are the backlog's.
		f.Note = strings.TrimPrefix(f.Note+fmt.Sprintf("; saturated: %.0f/s reached, %.0f µs CPU an action, %.2f cores used", r.Achieved, r.CPUMicros, r.CoresUsed), "; ")
	}
	return f
}

// RestartFigure reads `vigil bench restart --json` (a RestartResult).
func RestartFigure(out []byte, command string) Figure {
	f := Figure{Command: command, Target: fmt.Sprintf("≤ %g s, ≤ %g MB", TargetRestartSeconds, TargetRestartRSSMB)}
	var r RestartResult
	if err := json.Unmarshal(out, &r); err != nil || len(r.Runs) == 0 {
		f.Name = "restart: first decision, RSS"
		f.Note = "no result: " + errText(err, out)
		return f
	}
	f.Name = fmt.Sprintf("restart at %s events: first decision, RSS", thousands(r.Events))
	worstS, worstMB := 0.0, 0.0
	for _, run := range r.Runs {
		worstS, worstMB = max(worstS, run.DecisionSeconds), max(worstMB, run.RSSMB)
	}
	f.Value = fmt.Sprintf("%.2f s, %.0f MB", worstS, worstMB)
	f.Met = worstS <= TargetRestartSeconds && worstMB <= TargetRestartRSSMB
	if len(r.Runs) > 1 {
		f.Note = fmt.Sprintf("worst of %d starts", len(r.Runs))
	}
	return f
}

// BenchMetrics parses `go test -bench` output: for each benchmark (its name
// without the -N suffix), its metrics by unit. A benchmark that ran more
// than once keeps its last line.
func BenchMetrics(out []byte) map[string]map[string]float64 {
	res := map[string]map[string]float64{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		if _, err := strconv.ParseInt(fields[1], 10, 64); err != nil {
			continue // not a result line
		}
		name := fields[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		m := map[string]float64{}
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				break
			}
			m[fields[i+1]] = v
		}
		res[name] = m
	}
	return res
}

// ReplayFigure reads BenchmarkReplay's output.
func ReplayFigure(out []byte, command string) Figure {
	f := Figure{Name: "replay through every processor", Command: command, Target: "≥ 200,000 ev/s"}
	m := BenchMetrics(out)["BenchmarkReplay"]
	rate, ok := m["events/s"]
	if !ok {
		f.Note = "no result: " + errText(nil, out)
		return f
	}
	f.Value = fmt.Sprintf("%s ev/s (%.1f µs CPU an event)", thousands(int(math.Round(rate))), m["cpu-ns/event"]/1000)
	f.Met = rate >= TargetReplay
	return f
}

// HookFigure reads BenchmarkHookProcess's output.
func HookFigure(out []byte, command string) Figure {
	f := Figure{Name: "Claude Code hook, × hello-world start", Command: command, Target: "≤ 4"}
	m := BenchMetrics(out)["BenchmarkHookProcess"]
	ratio, ok := m["hook/hello"]
	if !ok {
		f.Note = "no result: " + errText(nil, out)
		return f
	}
	f.Value = fmt.Sprintf("%.1f (%.1f vs %.1f ms)", ratio, m["hook-ms"], m["hello-ms"])
	f.Met = ratio <= TargetHook
	return f
}

// RedactFigures reads BenchmarkRedact's (typical text) and
// BenchmarkRedactAdversarial's output: MB per CPU-second, the worst
// adversarial case.
func RedactFigures(out []byte, command string) []Figure {
	all := BenchMetrics(out)
	typical := Figure{Name: "redaction, typical text", Command: command, Target: "≥ 20 MB/s a core"}
	if v, ok := all["BenchmarkRedact"]["MB/cpu-s"]; ok {
		typical.Value = fmt.Sprintf("%.1f MB/s", v)
		typical.Met = v >= TargetRedactMBs
	} else {
		typical.Note = "no result: " + errText(nil, out)
	}
	adv := Figure{Name: "redaction, adversarial text (worst case)", Command: command, Target: "≥ 1 MB/s a core"}
	worst, worstName := math.Inf(1), ""
	for name, m := range all {
		if v, ok := m["MB/cpu-s"]; ok && strings.HasPrefix(name, "BenchmarkRedactAdversarial/") && v < worst {
			worst, worstName = v, strings.TrimPrefix(name, "BenchmarkRedactAdversarial/")
		}
	}
	if worstName != "" {
		adv.Value = fmt.Sprintf("%.1f MB/s", worst)
		adv.Met = worst >= TargetRedactAdversarialMBs
		adv.Note = "worst: " + worstName
	} else {
		adv.Note = "no result: " + errText(nil, out)
	}
	return []Figure{typical, adv}
}

// errText is a short reason for a missing result: the error, or the
// output's last line.
func errText(err error, out []byte) string {
	if err != nil {
		return err.Error()
	}
	s := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return "no output"
	}
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// thousands prints n with comma separators.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
