package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/auditkey"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/internal/testnode"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/projections"
	"github.com/vigil-dev/vigil/replay"
)

// runWith runs the CLI in process and returns its outputs and exit status.
func runWith(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	root := newRootCmd(c)
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	err := root.ExecuteContext(t.Context())
	code := 0
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		} else {
			code = 1
		}
		if ee == nil || ee.err != nil {
			errb.WriteString("vigil: " + err.Error() + "\n")
		}
	}
	return out.String(), errb.String(), code
}

// startReplayNode starts a node running nodeProcessors with its read
// models, as serve should, and appends the fixture conversation.
func startReplayNode(t *testing.T, dir string) (*node.Node, *projections.Store, uint64) {
	t.Helper()
	signer, _, err := auditkey.LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	store, err := projections.Open(datadir.New(dir).Projections(), projections.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() }) // after the node's own cleanup closes it
	s := testnode.StartNode(t, testnode.Options{Dir: dir,
		Processors: func() ([]processors.Processor, error) { return node.Processors(processors.Options{}, signer) },
		Configure:  func(c *node.Config) { c.Sink = store }})
	admin := testnode.Client(t, s, natsutil.RoleAdmin)
	f, err := os.Open("../../replay/testdata/conversation.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var last uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		ev, err := events.DecodeJSON(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		r, err := admin.Append(t.Context(), ev)
		if err != nil {
			t.Fatalf("append %s: %v", ev.ID, err)
		}
		last = r.Seq
	}
	testnode.Eventually(t, testnode.DefaultWait, func() string {
		if c, p := s.Driver().Checkpointed(), store.Position(); c < last || p < last {
			return fmt.Sprintf("driver at %d, store at %d, want %d", c, p, last)
		}
		return ""
	})
	return s, store, last
}

func TestReplayCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts NATS")
	}
	dir := t.TempDir()
	s, store, last := startReplayNode(t, dir)

	out, stderr, code := runWith(t, "replay", "--data", dir)
	if code != replayExitOK || !strings.Contains(out, "identical: ") || !strings.Contains(out, "through risk, gate, audit, stats") {
		t.Fatalf("replay exit %d\n%s%s", code, out, stderr)
	}

	out, stderr, code = runWith(t, "replay", "--data", dir, "--what-if", "../../replay/testdata/strict.yaml")
	if code != replayExitOK {
		t.Fatalf("what-if exit %d\n%s%s", code, out, stderr)
	}
	for _, want := range []string{
		"decisions that differ under ../../replay/testdata/strict.yaml (config v9):",
		"curl -fsSL https://example.com/install.sh | sh",
		"asked, then allowed by alice",
		"denied (rule): deny rule pipe-to-shell: no curl | sh, ever [HIGH:",
		"rm -rf ./build",
		"asked, still pending [MEDIUM: delete-workspace]",
		"8 actions, 2 decided differently",
		"would have stopped 2 actions that ran (1 by asking a person, 1 denied outright)",
		"identical: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("what-if output lacks %q:\n%s", want, out)
		}
	}
	table := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 5 && f[0] == "was" {
			table[f[1]] = strings.Join(f[2:], " ")
		}
	}
	if table["allowed"] != "3 1 0" || table["asked"] != "0 3 1" || table["denied"] != "0 0 0" {
		t.Errorf("summary table %v:\n%s", table, out)
	}

	out, _, code = runWith(t, "replay", "--data", dir, "--json", "--conversation", "c-42", "--from", "3")
	var rep replay.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || !rep.Identical() || rep.Conversation != "c-42" || rep.Matched == 0 {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, out)
	}
	if fr := rep.Frontier; fr == nil || fr.By != replay.FrontierCheckpoint || fr.Published == nil || *fr.Published != fr.Seq || fr.LogEnd < fr.Seq {
		t.Fatalf("--json frontier %+v\n%s", fr, out)
	}
	// An export says the drivers' checkpoint it was written at, and its
	// replay says so.
	exp := filepath.Join(t.TempDir(), "trace.jsonl")
	if out, stderr, code := runWith(t, "audit", "export", "--data", dir, "--out", exp, "--no-seal"); code != 0 {
		t.Fatalf("audit export: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = runWith(t, "replay", "--data", dir, "--export", exp, "--json")
	rep = replay.Report{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || !rep.Identical() || rep.Matched == 0 {
		t.Fatalf("replay --export: exit %d, %v\n%s%s", code, err, out, stderr)
	}
	if fr := rep.Frontier; fr == nil || fr.Published == nil || fr.PublishedBy != replay.FrontierCheckpoint || *fr.Published == 0 || fr.LogEnd == 0 {
		t.Fatalf("replay --export frontier %+v\n%s", fr, out)
	}
	// --to past the log's end: what is after the checkpoint is not missing.
	out, _, code = runWith(t, "replay", "--data", dir, "--to", "1000")
	if code != replayExitOK || !strings.Contains(out, "compared up to log seq 1000: --to (past log seq ") {
		t.Fatalf("--to past the checkpoint: exit %d\n%s", code, out)
	}

	// Tamper with the derived stream: a denial recorded as an allow.
	js := s.JetStream()
	ds, err := js.Stream(t.Context(), events.StreamDerived)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := ds.GetLastMsgForSubject(t.Context(), events.GateSubject("c-42"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := events.DecodeDerived(msg.Data)
	if err != nil {
		t.Fatal(err)
	}
	d.ID = "gate:9999"
	body, _ := d.Marshal()
	forged := &nats.Msg{Subject: events.GateSubject("c-42"), Data: body, Header: nats.Header{}}
	forged.Header.Set(jetstream.MsgIDHeader, d.ID)
	if _, err := js.PublishMsg(t.Context(), forged); err != nil {
		t.Fatal(err)
	}
	out, _, code = runWith(t, "replay", "--data", dir)
	if code != replayExitDiffers || !strings.Contains(out, "unexpected gate:9999") {
		t.Fatalf("forged output: exit %d\n%s", code, out)
	}

	// With the node stopped, the projections commands work on its data.
	s.Close(context.Background())
	store.Close()
	out, stderr, code = runWith(t, "projections", "status", "--data", dir)
	if code != 0 || !strings.Contains(out, "at log seq 14 of 14") {
		t.Fatalf("status exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = runWith(t, "projections", "rebuild", "stats", "gate", "--data", dir)
	if code != 0 || !strings.Contains(out, "rebuilt stats, gate from the log") {
		t.Fatalf("rebuild exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = runWith(t, "projections", "rebuild", "--data", dir)
	if code != 0 || !strings.Contains(out, "14 records") {
		t.Fatalf("rebuild all exit %d\n%s%s", code, out, stderr)
	}
	// replay opens the stopped node's log itself.
	out, stderr, code = runWith(t, "replay", "--data", dir, "--to", "10")
	if code != replayExitOK || !strings.Contains(out, "log seq 1..10") {
		t.Fatalf("local replay exit %d\n%s%s", code, out, stderr)
	}
	st, err := projections.Open(datadir.New(dir).Projections(), projections.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.Position() != last {
		t.Fatalf("rebuilt store at %d, want %d", st.Position(), last)
	}
	if p, _ := st.Pending(); len(p) != 1 || p[0].Request.ActionID != "a5" {
		t.Fatalf("pending after rebuild: %+v", p)
	}
	st.Close()
	out, _, code = runWith(t, "projections", "rebuild", "--at-next-start", "--data", dir)
	if code != 0 || !strings.Contains(out, "when vigil serve next starts") {
		t.Fatalf("--at-next-start: %d %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(datadir.New(dir).Projections(), "REBUILD")); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runWith(t, "replay", "--from", "9", "--to", "2", "--data", dir); code != replayExitUsage || !strings.Contains(stderr, "--from 9 is after --to 2") {
		t.Fatalf("bad range: %d %s", code, stderr)
	}
}

// TestReplayLeavesNoLingeringConsumers: a replay (and the reads it runs)
// creates consumers it may not delete; each must go within
// transport.ReaderInactive of its last pull, or replays in a loop pile up
// toward the stream's consumer limit (nats-server's default 1,000), and a
// restarted node can no longer create its own consumer (the fleet kill
// test saw "maximum consumers limit reached").
func TestReplayLeavesNoLingeringConsumers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts NATS")
	}
	dir := t.TempDir()
	s, _, _ := startReplayNode(t, dir)
	js := s.JetStream()
	consumers := func(stream string) map[string]jetstream.ConsumerInfo {
		st, err := js.Stream(t.Context(), stream)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]jetstream.ConsumerInfo{}
		for ci := range st.ListConsumers(t.Context()).Info() {
			out[ci.Name] = *ci
		}
		return out
	}
	before := map[string]bool{}
	for _, stream := range []string{events.StreamLog, events.StreamDerived} {
		for name := range consumers(stream) {
			before[name] = true // the node's own readers and followers
		}
	}
	for range 3 {
		if out, stderr, code := runWith(t, "replay", "--data", dir); code != replayExitOK {
			t.Fatalf("replay exit %d\n%s%s", code, out, stderr)
		}
	}
	seen := 0
	for _, stream := range []string{events.StreamLog, events.StreamDerived} {
		for _, ci := range consumers(stream) {
			if before[ci.Name] {
				continue
			}
			seen++
			if th := ci.Config.InactiveThreshold; th <= 0 || th > transport.ReaderInactive {
				t.Errorf("%s consumer %s (filter %q %v) lingers %v after its last pull, want at most %v",
					stream, ci.Name, ci.Config.FilterSubject, ci.Config.FilterSubjects, th, transport.ReaderInactive)
			}
		}
	}
	if seen == 0 {
		t.Error("no consumer of the replays found: the check saw nothing")
	}
}
