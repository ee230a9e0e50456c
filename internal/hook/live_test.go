package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/internal/testnode"
)

// startLiveNode starts a node as `vigil serve` does (testnode.Options.AsServe),
// on loopback, in a temporary data directory, shut down when the test
// ends; it returns the node and its data directory.
func startLiveNode(t *testing.T) (*node.Node, string) {
	t.Helper()
	n := testnode.StartNode(t, testnode.Options{AsServe: true})
	return n, n.Info().DataDir
}

// recordingGater is the real client, remembering what each gate returned
// and whether the hook's budget had run out by then.
type recordingGater struct {
	*client.Client
	results []client.GateResult
	errs    []error
	expired []bool
}

func (g *recordingGater) GateAndWait(ctx context.Context, ev events.Event, o *client.GateOptions) (client.GateResult, error) {
	res, err := g.Client.GateAndWait(ctx, ev, o)
	g.results = append(g.results, res)
	g.errs = append(g.errs, err)
	g.expired = append(g.expired, ctx.Err() != nil)
	return res, err
}

// liveOptions connect the hook as `vigil hook` does: over TCP with the
// data directory's agent credentials.
func liveOptions(dir string, g *recordingGater, budget time.Duration, now time.Time) Options {
	return Options{Budget: budget, Now: func() time.Time { return now }, NewID: testIDs(),
		Connect: func(ctx context.Context) (Gater, func(), error) {
			cl, err := client.Connect(ctx, client.Options{DataDir: dir, Role: natsutil.RoleAgent, Name: "hook-test"})
			if err != nil {
				return nil, nil, err
			}
			g.Client = cl
			return g, cl.Close, nil
		}}
}

func claudePayload(t *testing.T, useID, command string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", ClaudeCode, "pre_bash.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "rm -rf / --no-preserve-root", command, 1)
	return []byte(strings.Replace(s, "toolu_01ABCDEF23456789abcdefGH", useID, 1))
}

// TestRepeatedToolUseIDAnswersAtOnce: the same tool call sent twice (two
// matching hook entries, or a client retry, a second later) gets the same
// answer, at once: the ingest service stores the action once and answers
// the retry with the same log position and decision. The budget is
// generous; had the retry waited for it, the answer would be "ask" and
// the gate's context would have expired.
func TestRepeatedToolUseIDAnswersAtOnce(t *testing.T) {
	_, dir := startLiveNode(t)
	payload := claudePayload(t, "toolu_01REPEATED0000000000000", "git status")
	var answers []string
	g := &recordingGater{}
	for i := range 2 {
		now := time.Now().Add(time.Duration(i) * time.Second) // the retry's event time differs
		var out bytes.Buffer
		code := Run(context.Background(), ClaudeCode, bytes.NewReader(payload), &out, liveOptions(dir, g, 2*time.Minute, now))
		if code != 0 {
			t.Fatalf("call %d: exit %d, %s", i+1, code, out.String())
		}
		answers = append(answers, out.String())
	}
	if len(g.results) != 2 {
		t.Fatalf("gated %d times, want 2", len(g.results))
	}
	for i := range 2 {
		if g.errs[i] != nil || g.expired[i] {
			t.Fatalf("call %d: err %v, budget expired %v", i+1, g.errs[i], g.expired[i])
		}
	}
	if !strings.Contains(answers[0], `"permissionDecision":"allow"`) || answers[1] != answers[0] {
		t.Fatalf("answers differ or are not allow:\n%s%s", answers[0], answers[1])
	}
	a, b := g.results[0], g.results[1]
	if a.Seq == 0 || a.Seq != b.Seq || a.Outcome != b.Outcome || a.By != b.By || a.Level != b.Level || a.DecisionSeq != b.DecisionSeq {
		t.Fatalf("the retry got another decision:\n%+v\n%+v", a, b)
	}
}

// TestPendingAskNamesLevelAndRules: when the budget runs out, the reason
// the person reads carries the level and rules of the gate's request.
func TestPendingAskNamesLevelAndRules(t *testing.T) {
	_, dir := startLiveNode(t)
	payload := claudePayload(t, "toolu_01PENDINGASK000000000000", "rm -rf / --no-preserve-root")
	g := &recordingGater{}
	var out bytes.Buffer
	Run(context.Background(), ClaudeCode, bytes.NewReader(payload), &out, liveOptions(dir, g, time.Second, time.Now()))
	ans := out.String()
	if !strings.Contains(ans, `"permissionDecision":"ask"`) || !regexp.MustCompile(`HIGH-risk action \([a-z-]+/[a-z-]+`).MatchString(ans) ||
		strings.Contains(ans, "UNKNOWN") || strings.Contains(ans, "no rule fired") {
		t.Fatalf("ask answer: %s", ans)
	}
}

// BenchmarkHookInProcess is one `vigil hook claude-code` call without the
// process start: connect with the agent credentials, gate a benign Bash
// call against a node, answer, close. BenchmarkHookProcess (cmd/vigil)
// adds the process start.
func BenchmarkHookInProcess(b *testing.B) {
	dir := b.TempDir()
	n, err := node.Start(context.Background(), node.Config{
		DataDir: dir, NATSListen: "127.0.0.1:-1", Durability: natsutil.DurabilityInterval,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close(context.Background())
	g := &recordingGater{}
	i := 0
	for b.Loop() {
		i++
		s := strings.Replace(`{"session_id":"bench","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status"},"tool_use_id":"ID"}`, "ID", fmt.Sprintf("toolu_inproc%08d", i), 1)
		var out bytes.Buffer
		o := liveOptions(dir, g, time.Minute, time.Now())
		o.NewID = func() string { return fmt.Sprintf("01JDBENCH%017d", i) }
		Run(context.Background(), ClaudeCode, strings.NewReader(s), &out, o)
		if !strings.Contains(out.String(), `"allow"`) {
			b.Fatalf("answer %s", out.String())
		}
		g.results, g.errs, g.expired = nil, nil, nil
	}
}

// TestLargeOutputIsRecordedTruncated: a PostToolUse with ~5 MB of stdout
// (over the server's 4 MiB message limit) is recorded, not dropped: its
// start and end with a marker (size, digest, what was kept), and what is
// kept is redacted by the ingest service like everything else.
func TestLargeOutputIsRecordedTruncated(t *testing.T) {
	n, dir := startLiveNode(t)
	const secret = "AKIAZ7VRSQ5TJK3MPXQW"
	stdout := "AWS_ACCESS_KEY_ID=" + secret + "\n" + lines("build step ", 5<<20/50) + "AWS_ACCESS_KEY_ID=" + secret + "\nexit 0\n"
	if len(stdout) < 5<<20 {
		t.Fatalf("stdout is %d bytes", len(stdout))
	}
	payload, err := json.Marshal(map[string]any{
		"session_id": "big-output", "cwd": "/tmp", "hook_event_name": "PostToolUse", "tool_name": "Bash",
		"tool_input":    map[string]any{"command": "make all"},
		"tool_response": map[string]any{"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false},
		"tool_use_id":   "toolu_01BIGOUTPUT00000000000000",
	})
	if err != nil {
		t.Fatal(err)
	}
	var out, stderr bytes.Buffer
	o := liveOptions(dir, &recordingGater{}, time.Minute, time.Now())
	o.Stderr = &stderr
	if code := Run(context.Background(), ClaudeCode, bytes.NewReader(payload), &out, o); code != 0 || strings.TrimSpace(out.String()) != "{}" {
		t.Fatalf("exit %d, answer %s", code, out.String())
	}
	if strings.Contains(stderr.String(), "record tool output") {
		t.Fatalf("the output was not recorded: %s", stderr.String())
	}
	admin, err := n.Client(t.Context(), natsutil.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var rec *events.Record
	admin.Tail(t.Context(), client.TailOptions{Conversation: "big-output"}, func(r events.Record) error {
		if r.Event.Kind == events.KindObservation {
			rec = &r
		}
		return nil
	})
	if rec == nil {
		t.Fatal("no observation stored")
	}
	if bytes.Contains(rec.Raw, []byte(secret)) {
		t.Fatal("the kept output holds the raw secret: it was not redacted")
	}
	content, _ := rec.Event.Data["content"].(map[string]any)
	kept, _ := content["stdout"].(string)
	if !strings.HasPrefix(kept, "AWS_ACCESS_KEY_ID=[REDACTED:") || !strings.Contains(kept, "\n"+TruncatedMarker+fmt.Sprint(len(stdout))+" bytes, sha256:") ||
		!strings.HasSuffix(kept, "=[REDACTED:aws-access-token]\nexit 0\n") {
		t.Fatalf("stored stdout: %q … %q", kept[:min(200, len(kept))], kept[max(0, len(kept)-200):])
	}
	tr, _ := rec.Event.Data["truncated"].(map[string]any)
	if tr == nil || fmt.Sprint(tr["kept_bytes"]) == "0" || !strings.HasPrefix(fmt.Sprint(tr["sha256"]), "sha256:") {
		t.Fatalf("data.truncated = %v", rec.Event.Data["truncated"])
	}
	if len(rec.Raw) > DefaultMaxOutput+16<<10 {
		t.Fatalf("stored %d bytes for a %d-byte limit", len(rec.Raw), DefaultMaxOutput)
	}
}
