package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
)

// startBenchNode starts a node as `vigil serve` does, and returns its
// API's URL, its data directory and the approver token.
func startBenchNode(b *testing.B) (url, dir, tok string) {
	b.Helper()
	dir = b.TempDir()
	n, err := node.Start(b.Context(), node.Config{
		DataDir: dir, NATSListen: "127.0.0.1:-1", HTTPListen: "127.0.0.1:0",
		Durability: natsutil.DurabilityInterval,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		n.Close(ctx)
	})
	tok, err = natsutil.ReadToken(datadir.New(dir).Creds().Dir(), natsutil.RoleApprover)
	if err != nil {
		b.Fatal(err)
	}
	return n.Info().HTTPURL, dir, tok
}

// reportLatencies reports the median and the 99th percentile.
func reportLatencies(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkBrowserSeesAction is BenchmarkPageSeesAction seen from the
// page in Chromium: from the append to the action's card in the page's
// document (the card's data-shown, the browser's clock, which is this
// host's). Milliseconds are its resolution.
func BenchmarkBrowserSeesAction(b *testing.B) {
	ctx := newBrowser(b)
	url, dir, tok := startBenchNode(b)
	agent, err := client.Connect(b.Context(), client.Options{DataDir: dir, Role: natsutil.RoleAgent, Timeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(agent.Close)
	run(b, ctx, 30*time.Second, "log in",
		chromedp.Navigate(url+"/"),
		chromedp.WaitVisible("#login-token", chromedp.ByID),
		chromedp.SendKeys("#login-token", tok, chromedp.ByID),
		chromedp.Click("#login-submit", chromedp.ByID),
		chromedp.WaitVisible(`#live[data-state="on"]`, chromedp.ByQuery))
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		ev := bashAction("c-bench", fmt.Sprintf("rm -rf / # %d", i))
		start := time.Now()
		if _, err := agent.Append(b.Context(), ev); err != nil {
			b.Fatal(err)
		}
		var shown int64
		run(b, ctx, 30*time.Second, "see the card",
			chromedp.WaitReady(cardSel(ev.ID), chromedp.ByQuery),
			chromedp.Evaluate(fmt.Sprintf(`Number(document.querySelector(%q).dataset.shown)`, cardSel(ev.ID)), &shown))
		lat = append(lat, time.UnixMilli(shown).Sub(start.Truncate(time.Millisecond)))
		// Deny it, untimed, so the queue holds one action as usual.
		b.StopTimer()
		body := fmt.Sprintf(`{"action_id":%q,"verdict":"deny"}`, ev.ID)
		req, _ := http.NewRequestWithContext(b.Context(), "POST", url+"/v1/approvals", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("deny: %d", resp.StatusCode)
		}
		run(b, ctx, 30*time.Second, "card gone", chromedp.WaitNotPresent(cardSel(ev.ID), chromedp.ByQuery))
		b.StartTimer()
	}
	b.StopTimer()
	reportLatencies(b, lat)
}

// BenchmarkPageSeesAction measures what a person waits for on the
// approval page: from an agent's append of a HIGH-risk action to the
// page's live stream (GET /v1/stream, with a browser session's cookie)
// delivering it as "pending". One op is one action; p50 and p99 are
// reported too. The node is the real one `vigil serve` runs, on loopback.
func BenchmarkPageSeesAction(b *testing.B) {
	url, dir, tok := startBenchNode(b)
	agent, err := client.Connect(b.Context(), client.Options{DataDir: dir, Role: natsutil.RoleAgent, Timeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(agent.Close)

	// Log in as the page does, then open its stream.
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	body, _ := json.Marshal(map[string]string{"token": tok, "name": "bench"})
	req, _ := http.NewRequestWithContext(b.Context(), "POST", url+"/ui/session", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", url)
	resp, err := hc.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("login: %v %v", err, resp)
	}
	resp.Body.Close()
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	req, _ = http.NewRequestWithContext(ctx, "GET", url+"/v1/stream", nil)
	resp, err = hc.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("stream: %v %v", err, resp)
	}
	defer resp.Body.Close()
	seen := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var name string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && name == "pending":
				var p struct{ ID string }
				if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &p) == nil {
					seen <- p.ID
				}
			}
		}
		close(seen)
	}()

	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		ev := bashAction("c-bench", fmt.Sprintf("rm -rf / # %d", i))
		start := time.Now()
		if _, err := agent.Append(b.Context(), ev); err != nil {
			b.Fatal(err)
		}
		for id := ""; id != ev.ID; {
			var ok bool
			if id, ok = <-seen; !ok {
				b.Fatal("the stream ended")
			}
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportLatencies(b, lat)
}
