package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
)

// serving is `vigil serve` running in this process, as main runs it.
type serving struct {
	cancel context.CancelFunc
	done   chan int
	stderr *bytes.Buffer
}

// startServe runs `vigil serve --data dir args...` and waits until it
// serves (serve.json written).
func startServe(t *testing.T, dir string, args ...string) *serving {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	sv := &serving{cancel: cancel, done: make(chan int, 1), stderr: &bytes.Buffer{}}
	all := append([]string{"serve", "--data", dir, "--nats-listen", "127.0.0.1:0", "--seal-interval", "0"}, args...)
	go func() {
		var out bytes.Buffer
		sv.done <- run(ctx, all, strings.NewReader(""), &out, sv.stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-sv.done:
		case <-time.After(60 * time.Second):
			t.Error("serve did not stop")
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, client.ServeInfoFile)); err == nil {
			return sv
		}
		select {
		case code := <-sv.done:
			sv.done <- code
			t.Fatalf("serve exited %d before serving", code)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("serve did not write serve.json")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wait returns serve's exit status (stderr is then safe to read).
func (sv *serving) wait(t *testing.T) int {
	t.Helper()
	select {
	case code := <-sv.done:
		sv.done <- code
		return code
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not exit")
	}
	return -1
}

// TestServeShutdownBudgetStartsAtShutdown: a stop after the node ran for
// longer than --shutdown-timeout is still clean (exit 0). With the budget
// created at start, as before, it had expired by then and serve exited 1
// ("context deadline exceeded") on every SIGTERM after 30 s.
func TestServeShutdownBudgetStartsAtShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("runs serve for a few seconds")
	}
	const budget = 2 * time.Second
	sv := startServe(t, t.TempDir(), "--shutdown-timeout", budget.String())
	time.Sleep(budget + 500*time.Millisecond) // outlive the budget: that is the point
	sv.cancel()                               // what SIGTERM does in main
	if code := sv.wait(t); code != 0 {
		t.Fatalf("clean stop exited %d: %s", code, sv.stderr)
	}
}

// TestServeExitsNonZeroWhenTheLogIsDeleted: the admin deletes VIGIL_LOG
// under a running serve; serve exits non-zero saying so, and the next
// serve refuses the (missing) log with the way out in its message.
func TestServeExitsNonZeroWhenTheLogIsDeleted(t *testing.T) {
	dir := t.TempDir()
	sv := startServe(t, dir)
	admin, err := client.Connect(t.Context(), client.Options{DataDir: dir, Role: natsutil.RoleAdmin, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = admin.JetStream().DeleteStream(t.Context(), events.StreamLog)
	admin.Close()
	if err != nil {
		t.Fatal(err)
	}
	if code := sv.wait(t); code == 0 {
		t.Fatalf("serve exited 0 after VIGIL_LOG was deleted: %s", sv.stderr)
	}
	if !strings.Contains(sv.stderr.String(), "VIGIL_LOG was deleted while the node ran") {
		t.Fatalf("serve's error does not say what happened: %s", sv.stderr)
	}

	var stderr bytes.Buffer
	code := run(t.Context(), []string{"serve", "--data", dir, "--nats-listen", "127.0.0.1:0", "--seal-interval", "0"}, strings.NewReader(""), &bytes.Buffer{}, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "--accept-new-log") || !strings.Contains(stderr.String(), "VIGIL_LOG does not exist") {
		t.Fatalf("restart exited %d: %s; want a refusal naming --accept-new-log", code, stderr.String())
	}
}

func TestServeConfigErrorNamesFlags(t *testing.T) {
	cfg := node.Config{Replicas: 7, Cluster: natsutil.ClusterConfig{Name: "c"}, NATSURL: "nats://a:4222", Durability: natsutil.DurabilityFsync, TLSMode: "maybe"}
	err := serveConfigError(cfg.Validate())
	if !errors.Is(err, node.ErrInvalidConfig) {
		t.Fatalf("%v does not wrap node.ErrInvalidConfig", err)
	}
	var ce *node.ConfigError
	if !errors.As(err, &ce) || ce.Field != "DataDir" {
		t.Fatalf("errors.As: %+v", ce)
	}
	for _, want := range []string{
		"--data: is required",
		"--replicas 7: use 1 on a single host",
		"--cluster: it starts an embedded cluster node and --nats attaches to an existing one",
		`--tls maybe: use "auto", "on" or "off"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if other := errors.New("x"); serveConfigError(other).Error() != "x" {
		t.Fatal("another error reworded")
	}
}
