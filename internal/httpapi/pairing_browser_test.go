package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/pairing"
)

// TestBrowserPairing pairs a real headless chromium with a code: it opens
// /pair, the admin approves the code it shows (as `vigil pairing approve
// web CODE` does), and the page turns into the approval page, logged in
// as an approver named after the device, without a token ever typed.
func TestBrowserPairing(t *testing.T) {
	ctx := newBrowser(t)
	a := startAPI(t)
	ad := a.admin(t)
	var code string
	run(t, ctx, 30*time.Second, "open /pair and get a code",
		chromedp.Navigate(a.url+"/pair"),
		chromedp.WaitVisible("#pair-help", chromedp.ByID),
		chromedp.Text("#pair-code", &code, chromedp.ByID),
	)
	if _, err := pairing.NormalizeCode(code); err != nil {
		t.Fatalf("the page shows %q: %v", code, err)
	}
	var command string
	run(t, ctx, 5*time.Second, "read the command", chromedp.Text("#pair-command", &command, chromedp.ByID))
	if command != "vigil pairing approve web "+code {
		t.Fatalf("the page says to run %q", command)
	}
	// A wrong code changes nothing for the browser.
	ad.attempt(t, events.KindPairingApproved, "ZZZZ-ZZZZ", "intruder")
	ad.attempt(t, events.KindPairingApproved, code, "chromium-phone")
	var who string
	run(t, ctx, 30*time.Second, "the page becomes the approval page",
		chromedp.WaitVisible("#queue", chromedp.ByID),
		chromedp.WaitVisible(`#live[data-state="on"]`, chromedp.ByQuery),
		chromedp.Text("#who", &who, chromedp.ByID),
	)
	if !strings.Contains(who, "chromium-phone") || !strings.Contains(who, "approver") {
		t.Fatalf("logged in as %q, want chromium-phone (approver)", who)
	}
	// The session is an approver's: the queue opens, the admin's pairing list does not.
	var statuses []int
	run(t, ctx, 10*time.Second, "use the session",
		chromedp.Evaluate(`Promise.all([fetch("/v1/pending"), fetch("/v1/pairing")]).then(rs => rs.map(r => r.status))`, &statuses,
			func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }),
	)
	if len(statuses) != 2 || statuses[0] != 200 || statuses[1] != 403 {
		t.Fatalf("GET /v1/pending, /v1/pairing with the paired session: %v, want [200 403]", statuses)
	}
}
