package node

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/ingest"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode/wait"
	"github.com/vigil-dev/vigil/processors/redact"
)

func redactorFor(rs events.RedactionSettings) (ingest.Redactor, error) {
	r, err := redact.New(redact.Config{Settings: rs})
	if err != nil {
		return nil, err
	}
	return r, nil
}

func startRedacting(t *testing.T, dir string) *Node {
	t.Helper()
	red, err := redactorFor(events.RedactionSettings{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(t.Context(), Config{DataDir: dir, NATSListen: "127.0.0.1:-1", Durability: natsutil.DurabilityInterval,
		Redactor: red, NewRedactor: redactorFor, NoProcessors: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// commandAsStored appends an action and returns its command as the log holds it.
func commandAsStored(t *testing.T, s *Node, id, cmd string) string {
	t.Helper()
	c, err := s.Client(t.Context(), natsutil.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := c.Append(t.Context(), action(id, "c-red", cmd))
	if err != nil {
		t.Fatal(err)
	}
	var got string
	c.Tail(t.Context(), client.TailOptions{From: r.Seq, Count: 1}, func(rec events.Record) error {
		got, _ = rec.Event.Args()["command"].(string)
		return nil
	})
	return got
}

// TestRedactionFollowsConfig: the redaction settings of the config event in
// force apply to what is stored next, and after a restart.
func TestRedactionFollowsConfig(t *testing.T) {
	dir := t.TempDir()
	s := startRedacting(t, dir)
	const token = "ACME-TOKEN-Zq81xk2Pw9vN"
	if got := commandAsStored(t, s, "before", "deploy build "+token); !strings.Contains(got, token) {
		t.Fatalf("before the config, the house token format is not a known secret; stored %q", got)
	}
	cfg := events.DefaultConfig()
	cfg.Version = 2
	cfg.Redaction.ExtraRules = []events.RedactionRule{{Name: "acme-token", Regex: `ACME-TOKEN-[A-Za-z0-9]{12}`, Keywords: []string{"acme-token-"}}}
	data, err := events.ToData(cfg)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := s.Client(t.Context(), natsutil.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Append(t.Context(), events.Event{V: 1, ID: "cfg-2", Kind: events.KindConfig, Time: time.Now().UTC(), Data: data}); err != nil {
		t.Fatal(err)
	}
	admin.Close()
	i := 0
	wait.Eventually(t, 10*time.Second, func() string {
		got := commandAsStored(t, s, "after-"+string(rune('a'+i%26))+string(rune('a'+i/26)), "deploy build "+token)
		i++
		if !strings.Contains(got, "[REDACTED:acme-token]") {
			return fmt.Sprintf("the config's extra rule never applied; stored %q", got)
		}
		return ""
	})
	s.Close(context.Background())

	// Restarts: the first reads the global records after what the start
	// before remembered (the config among them), the second none; then
	// with the memory damaged, and with one of another log, the whole
	// subject again. Each applies the config in force.
	seenPath := datadir.New(dir).RedactionSeen()
	for i, damage := range []func(){
		func() {},
		func() {},
		func() { os.WriteFile(seenPath, []byte("not msgpack"), 0o600) },
		func() {
			b, _ := msgpack.Marshal(&redactionSeen{V: redactionSeenVersion, Created: time.Unix(1, 0), Seq: 1})
			os.WriteFile(seenPath, b, 0o600)
		},
	} {
		damage()
		s = startRedacting(t, dir)
		if got := commandAsStored(t, s, fmt.Sprintf("after-restart-%d", i), "deploy build "+token); !strings.Contains(got, "[REDACTED:acme-token]") {
			t.Fatalf("restart %d: the config in force was not applied; stored %q", i, got)
		}
		s.Close(context.Background())
		b, err := os.ReadFile(seenPath)
		if err != nil {
			t.Fatal(err)
		}
		var seen redactionSeen
		if err := msgpack.Unmarshal(b, &seen); err != nil || !seen.Found || len(seen.Settings.ExtraRules) != 1 || seen.Seq < 3 {
			t.Fatalf("restart %d remembered %+v (%v), want the config's extra rule", i, seen, err)
		}
	}
}
