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

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/internal/server"
)

// BenchmarkPageSeesAction measures what a person waits for on the
// approval page: from an agent's append of a HIGH-risk action to the
// page's live stream (GET /v1/stream, with a browser session's cookie)
// delivering it as "pending". One op is one action; p50 and p99 are
// reported too. The node is the real one `vigil serve` runs, on loopback.
func BenchmarkPageSeesAction(b *testing.B) {
	dir := b.TempDir()
	n, err := node.Start(b.Context(), node.Config{Config: server.Config{
		DataDir: dir, NATSListen: "127.0.0.1:-1", HTTPListen: "127.0.0.1:0",
		Durability: natsutil.DurabilityInterval,
	}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		n.Close(ctx)
	})
	url := n.Info().HTTPURL
	tok, err := natsutil.ReadToken(natsutil.CredsDir(dir), natsutil.RoleApprover)
	if err != nil {
		b.Fatal(err)
	}
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
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
