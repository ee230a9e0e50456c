package httpapi_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vigil-dev/vigil/events"
)

// watchCards counts, in the page, the cards made twice for one action
// (the same id and log seq on a new element: a card a queue read removed
// and brought back, or brought back after its decision) and every card
// shown, by id@seq.
const watchCards = `window.__remade = 0; window.__shown = {}; (() => {
	const nodes = new Map();
	const seen = (n) => {
		if (!(n instanceof HTMLElement) || !n.matches("li.card")) return;
		const k = n.dataset.id + "@" + n.dataset.seq;
		if (nodes.has(k) && nodes.get(k) !== n) window.__remade++;
		nodes.set(k, n);
		window.__shown[k] = n.dataset.from || "queue";
	};
	document.querySelectorAll("li.card").forEach(seen);
	new MutationObserver((ms) => { for (const m of ms) m.addedNodes.forEach(seen); })
		.observe(document.getElementById("pending"), {childList: true});
})();`

// TestBrowserCardsFromTheStream: cards are drawn straight from the
// stream's pending events while the queue is read again and again
// (actions arrive while others are being decided, three at a time), and
// no read sent before an event undoes it: no card is removed and made
// again, no decided card comes back, each action gets exactly the one
// verdict the person gave on its card (a click on deny, then at once a
// click on allow of the same card, records the deny only), and each
// waiting gate gets that verdict.
func TestBrowserCardsFromTheStream(t *testing.T) {
	ctx := newBrowser(t)
	a := startAPI(t)
	agent := agentClient(t, a)
	pageLogin(t, ctx, a, "rae")
	run(t, ctx, 10*time.Second, "watch the cards", chromedp.Evaluate(watchCards, nil))
	const n, ahead = 24, 3
	evs := make([]events.Event, n)
	gates := make([]<-chan gateOutcome, n)
	start := func(i int) {
		evs[i] = bashAction(fmt.Sprintf("c-race-%d", i%4), fmt.Sprintf("rm -rf /srv/race-%d", i))
		gates[i] = gateInBackground(t, agent, evs[i])
	}
	for i := range min(ahead, n) {
		start(i)
	}
	for i := range n {
		if i+ahead < n {
			start(i + ahead)
		}
		sel := cardSel(evs[i].ID)
		switch i % 3 {
		case 0: // deny, then allow at once on the same card
			run(t, ctx, 60*time.Second, fmt.Sprintf("deny then allow card %d", i),
				chromedp.WaitVisible(sel+" .command-text", chromedp.ByQuery),
				chromedp.Evaluate(fmt.Sprintf(`(() => { const c = document.querySelector(%q);
					c.querySelector('button[data-verdict="deny"]').click();
					c.querySelector('button[data-verdict="once"]').click(); })()`, sel), nil),
				chromedp.WaitNotPresent(sel, chromedp.ByQuery))
		case 1: // select by click, decide by key
			run(t, ctx, 60*time.Second, fmt.Sprintf("select and deny card %d by key", i),
				chromedp.WaitVisible(sel+" .command-text", chromedp.ByQuery),
				chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).querySelector(".foot").click()`, sel), nil),
				chromedp.WaitVisible(sel+".selected", chromedp.ByQuery),
				chromedp.KeyEvent("d"),
				chromedp.WaitNotPresent(sel, chromedp.ByQuery))
		default: // a pointer click, again if the card moved under it
			decideCard(t, ctx, sel, "deny")
		}
	}
	for i := range n {
		res := waitGate(t, gates[i])
		if res.Outcome != events.OutcomeDeny || res.By != events.ByHuman {
			t.Errorf("action %d (%s): %+v, want deny by a person", i, evs[i].ID, res)
		}
		if v := verdictsFor(t, a, evs[i].ID); v != 1 {
			t.Errorf("action %d: %d verdicts in the log, want 1", i, v)
		}
	}
	var remade, cards, fromStream int
	run(t, ctx, 30*time.Second, "the page after",
		chromedp.Evaluate(`Object.values(window.__shown).filter((v) => v === "stream").length`, &fromStream),
		chromedp.Poll(`document.querySelectorAll("li.card").length === 0 && document.getElementById("count").textContent === "0"`, nil),
		chromedp.Evaluate(`window.__remade`, &remade),
		chromedp.Evaluate(`document.querySelectorAll("li.card").length`, &cards))
	t.Logf("%d of %d cards drawn from the stream's pending event", fromStream, n)
	if fromStream == 0 {
		t.Error("no card was drawn from the stream: the test did not exercise it")
	}
	if remade != 0 {
		t.Errorf("%d cards were removed and made again (or came back after their decision)", remade)
	}
}

// decideCard clicks verdict on the card sel and waits for the card to
// go; on a timeout it says what the card and the page showed.
func decideCard(t *testing.T, ctx context.Context, sel, verdict string) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var err error
	for err == nil {
		var gone bool
		err = chromedp.Run(tctx,
			chromedp.Click(sel+fmt.Sprintf(` button[data-verdict=%q]`, verdict), chromedp.ByQuery),
			// Gone, or told the click was not taken (or it missed the card).
			chromedp.Poll(fmt.Sprintf(`(() => { const c = document.querySelector(%q);
				return !c || c.querySelector(".msg").textContent !== "" ? true : (window.__waits = (window.__waits || 0) + 1) > 100; })()`, sel), nil,
				chromedp.WithPollingInterval(10*time.Millisecond)),
			chromedp.Evaluate(fmt.Sprintf(`(() => { window.__waits = 0; const c = document.querySelector(%q);
				if (c && c.querySelector(".msg").textContent.startsWith("the cards moved")) { c.querySelector(".msg").textContent = ""; return false; }
				return !c || c.querySelector(".msg").textContent !== ""; })()`, sel), &gone))
		if err == nil && gone {
			err = chromedp.Run(tctx, chromedp.WaitNotPresent(sel, chromedp.ByQuery))
			if err == nil {
				return
			}
		}
	}
	var state string
	run(t, ctx, 10*time.Second, "read the page", chromedp.Evaluate(fmt.Sprintf(`(() => {
		const c = document.querySelector(%q);
		return JSON.stringify({card: c ? c.innerText : null, range: document.getElementById("range").textContent,
			count: document.getElementById("count").textContent, hint: document.getElementById("hint").textContent,
			remade: window.__remade,
			cards: [...document.querySelectorAll("li.card")].map((n) => n.dataset.id + "@" + n.dataset.seq + " " + n.querySelector(".command-text").textContent + " msg=" + n.querySelector(".msg").textContent)}); })()`, sel), &state))
	t.Fatalf("%s %s: %v; the page: %s", verdict, sel, err, state)
}

// TestBrowserClickOnAMovedCard: a pointer click that lands on a card's
// Allow button the moment a new action's card pushed it down (the person
// aimed at what was there before) is not taken as a verdict: the card
// says so, nothing is recorded, and the action still waits.
func TestBrowserClickOnAMovedCard(t *testing.T) {
	ctx := newBrowser(t)
	a := startAPI(t)
	agent := agentClient(t, a)
	pageLogin(t, ctx, a, "moe")
	first := bashAction("c-moved", "rm -rf /srv/first")
	chFirst := gateInBackground(t, agent, first)
	sel := cardSel(first.ID)
	run(t, ctx, 30*time.Second, "the first card", chromedp.WaitVisible(sel+"[data-detail] .command-text", chromedp.ByQuery))
	// As the next card is inserted above it, click the first card's Allow
	// with the pointer (a click event with detail 1).
	run(t, ctx, 10*time.Second, "arm the click", chromedp.Evaluate(fmt.Sprintf(`new MutationObserver((ms, obs) => {
		for (const m of ms) for (const n of m.addedNodes) {
			if (n instanceof HTMLElement && n.matches("li.card") && n.dataset.id !== %q) {
				obs.disconnect();
				document.querySelector(%q).querySelector('button[data-verdict="once"]')
					.dispatchEvent(new MouseEvent("click", {bubbles: true, cancelable: true, detail: 1}));
				window.__clicked = true;
			}
		}
	}).observe(document.getElementById("pending"), {childList: true})`, first.ID, sel), nil))
	second := bashAction("c-moved", "rm -rf /srv/second")
	chSecond := gateInBackground(t, agent, second)
	var msg string
	run(t, ctx, 30*time.Second, "the click on the moved card",
		chromedp.Poll(`window.__clicked === true`, nil),
		chromedp.Text(sel+" .msg", &msg, chromedp.ByQuery))
	if msg != "the cards moved as you clicked: nothing was sent; click again" {
		t.Fatalf("the card says %q after a click as it moved", msg)
	}
	if n := verdictsFor(t, a, first.ID); n != 0 {
		t.Fatalf("%d verdicts recorded on the moved card", n)
	}
	denyCard(t, ctx, sel)
	denyCard(t, ctx, cardSel(second.ID))
	for _, ch := range []<-chan gateOutcome{chFirst, chSecond} {
		if res := waitGate(t, ch); res.Outcome != events.OutcomeDeny || res.By != events.ByHuman {
			t.Fatalf("gate %+v, want deny by a person", res)
		}
	}
}
