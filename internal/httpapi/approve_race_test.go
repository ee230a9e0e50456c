package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// verdictsFor counts the approval.decision events of VIGIL_LOG that name
// action id.
func verdictsFor(t *testing.T, a *api, id string) int {
	t.Helper()
	n := 0
	err := natsutil.ReadStream(t.Context(), a.JetStream(), natsutil.ReadOptions{Stream: events.StreamLog}, func(r natsutil.RawRecord) error {
		ev, err := events.DecodeMsgpack(r.Data)
		if err == nil && ev.Kind == events.KindApprovalDecision && ev.StringField("action_id") == id {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// postVerdict sends a verdict as the approver from any goroutine and
// returns the status and the error answer's field.
func postVerdict(a *api, body map[string]any) (int, string) {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", a.url+"/v1/approvals", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+a.tokens[natsutil.RoleApprover])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var e struct{ Field string }
	json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e.Field
}

// TestApproveDecidesTheSeqSeen: a verdict naming the log seq a person saw
// is refused (409, field seq, nothing recorded) when another seq waits
// under the id; of a deny and an allow sent at once for the same action,
// one is recorded and the other refused (409, field action_id), and the
// gate's outcome is the recorded one's; a later verdict records nothing.
func TestApproveDecidesTheSeqSeen(t *testing.T) {
	a := startAPI(t)
	res := a.gateAsync(t, action("race-1", "c-race", "rm -rf ~/victim-dir"), "60s")
	p := a.waitPending(t, "race-1")
	if code, field := postVerdict(a, map[string]any{"action_id": "race-1", "seq": p.Seq + 1000, "verdict": "once", "approver": "eve"}); code != http.StatusConflict || field != "seq" {
		t.Fatalf("a verdict on a seq no action waits at: %d (field %q), want 409 on seq", code, field)
	}
	if n := verdictsFor(t, a, "race-1"); n != 0 {
		t.Fatalf("the stale verdict was recorded (%d verdicts)", n)
	}
	type answer struct {
		verdict string
		code    int
		field   string
	}
	answers := make(chan answer, 2)
	var wg sync.WaitGroup
	for _, v := range []string{"deny", "once"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, field := postVerdict(a, map[string]any{"action_id": "race-1", "seq": p.Seq, "verdict": v, "approver": "ann"})
			answers <- answer{v, code, field}
		}()
	}
	wg.Wait()
	close(answers)
	var won string
	for ans := range answers {
		switch {
		case ans.code == http.StatusOK || ans.code == http.StatusAccepted:
			if won != "" {
				t.Fatalf("both verdicts recorded (%s and %s)", won, ans.verdict)
			}
			won = ans.verdict
		case ans.code == http.StatusConflict && ans.field == "action_id":
		default:
			t.Fatalf("verdict %s: %d (field %q)", ans.verdict, ans.code, ans.field)
		}
	}
	if won == "" {
		t.Fatal("neither verdict was recorded")
	}
	g := <-res
	want := "allow"
	if won == "deny" {
		want = "deny"
	}
	if !g.Decided || g.Outcome != want || g.By != "human" {
		t.Fatalf("the %s verdict won, the gate answered %+v", won, g)
	}
	if code, _ := postVerdict(a, map[string]any{"action_id": "race-1", "seq": p.Seq, "verdict": "once", "approver": "ann"}); code != http.StatusNotFound && code != http.StatusConflict {
		t.Fatalf("a verdict after the decision: %d, want 404 or 409", code)
	}
	if n := verdictsFor(t, a, "race-1"); n != 1 {
		t.Fatalf("the log holds %d verdicts on race-1, want 1", n)
	}
}
