package node

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/soak"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/stats"
)

// The crash test runs the node in a child process (this test binary, told
// by environment variables to serve) so it can be killed with SIGKILL: a
// real unclean stop, not a simulated one.
const (
	envServeDir        = "VIGIL_TEST_SERVE_DIR"
	envServePort       = "VIGIL_TEST_SERVE_PORT"
	envServeDurability = "VIGIL_TEST_SERVE_DURABILITY"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(envServeDir); dir != "" {
		os.Exit(serveChild(dir, os.Getenv(envServePort), os.Getenv(envServeDurability)))
	}
	os.Exit(m.Run())
}

func serveChild(dir, port, durability string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	s, err := Start(ctx, Config{
		DataDir:    dir,
		NATSListen: "127.0.0.1:" + port,
		Durability: natsutil.Durability(durability),
		NoExpiry:   true,
		Processors: func() ([]processors.Processor, error) { return []processors.Processor{stats.New()}, nil },
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	<-ctx.Done()
	s.Close(context.Background())
	return 0
}

// freePort returns a port that was free a moment ago, for a test that
// must name a port before a separate program binds it (fleet_kill_test.go,
// whose nodes are vigil serve processes, restarted on the same ports).
// Start servers on port -1 and read the bound port back wherever possible,
// as startChild and startFleetWith do.
//
// The port is chosen below the kernel's ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range), where neither a listener on
// port 0 nor an outgoing connection of another test is ever given it: a
// port from the ephemeral range, free a moment ago, can be taken by any
// of those before the child binds it (or while a killed node is down).
// Without such a range (another OS, a range starting low) it falls back
// to a port the kernel picks.
func freePort(t *testing.T) string {
	t.Helper()
	if low := ephemeralLow(); low > freePortFloor+1000 {
		for range 200 {
			port := freePortFloor + rand.IntN(low-freePortFloor)
			if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
				l.Close()
				return strconv.Itoa(port)
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// freePortFloor is the lowest port freePort picks (above the well-known
// and most registered services' ports).
const freePortFloor = 20000

// ephemeralLow is the first port of the kernel's ephemeral range, 0 when
// unknown.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 0
	}
	low, err := strconv.Atoi(f[0])
	if err != nil {
		return 0
	}
	return low
}

// child is a node serving in a child process (serveChild).
type child struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited and been reaped
	url  string        // its NATS URL, from its serve.json
	port string
}

// kill stops the child with SIGKILL (an unclean stop) and waits for it.
func (c *child) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.done
}

// startChild starts a node in a child process on dir and waits until it
// serves. port "-1" lets the node pick a free port (no race); a restart
// passes the port of the node it replaces, so clients find it at the same
// URL. A port just released can be taken by another process before the
// new node binds it: the child then exits at once, and startChild tries
// again for a while rather than fail on a race with the rest of the
// machine.
func startChild(t *testing.T, dir, port, durability string) *child {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for attempt := 1; ; attempt++ {
		c, err := tryStartChild(t, dir, port, durability, deadline)
		if err == nil {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("child server on port %s (attempt %d): %v", port, attempt, err)
		}
		t.Logf("child server on port %s (attempt %d): %v; trying again", port, attempt, err)
		time.Sleep(200 * time.Millisecond)
	}
}

// tryStartChild starts one child and waits for its serve.json (written
// once it serves), or for its exit (it could not start: a port in use).
func tryStartChild(t *testing.T, dir, port, durability string, deadline time.Time) (*child, error) {
	t.Helper()
	infoPath := filepath.Join(dir, client.ServeInfoFile)
	os.Remove(infoPath) // a killed child leaves its own behind
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envServeDir+"="+dir, envServePort+"="+port, envServeDurability+"="+durability)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-c.done
	})
	for {
		if si, err := client.ReadServeInfo(dir); err == nil && si.PID == cmd.Process.Pid {
			c.url = si.NATSURL
			_, c.port, err = net.SplitHostPort(strings.TrimPrefix(si.NATSURL, "nats://"))
			if err != nil {
				t.Fatalf("child's serve.json: NATS URL %q: %v", si.NATSURL, err)
			}
			return c, nil
		}
		select {
		case <-c.done:
			return nil, fmt.Errorf("exited before serving: %v", cmd.ProcessState)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("child server did not write serve.json")
		}
	}
}

// TestKillMidLoadKeepsEveryAcknowledgedEventOnce appends 10,000 events with
// producers that retry until acknowledged, SIGKILLs the server halfway,
// restarts it on the same data directory, and checks that every
// acknowledged event is in the log exactly once (and, since producers retry
// until acknowledged, that all 10,000 are).
func TestKillMidLoadKeepsEveryAcknowledgedEventOnce(t *testing.T) {
	soak.Require(t, "kills vigil serve processes mid-load, ~1 min")
	for _, durability := range []string{"interval", "fsync"} {
		t.Run(durability, func(t *testing.T) {
			killMidLoad(t, durability)
		})
	}
}

func killMidLoad(t *testing.T, durability string) {
	const (
		total     = 10000
		producers = 4
		batch     = 25
	)
	dir := t.TempDir()
	node := startChild(t, dir, "-1", durability)
	url := node.url
	creds := datadir.New(dir).Creds().Seed(natsutil.RoleAgent)

	var acked atomic.Int64
	ackedIDs := make([]map[string]uint64, producers)
	killAt := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	errs := make(chan error, producers)
	for p := range producers {
		ackedIDs[p] = map[string]uint64{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := client.Connect(t.Context(), client.Options{URL: url, CredsFile: creds, Timeout: 2 * time.Second})
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			per := total / producers
			for start := 0; start < per; start += batch {
				evs := make([]events.Event, 0, batch)
				for i := start; i < start+batch && i < per; i++ {
					evs = append(evs, events.Event{V: 1, ID: fmt.Sprintf("p%d-e%05d", p, i), Kind: events.KindMessage,
						Conversation: fmt.Sprintf("conv-%d", p), Time: time.Unix(1_800_000_000, 0),
						Data: map[string]any{"role": "assistant", "content": fmt.Sprintf("event %d of producer %d", i, p)}})
				}
				deadline := time.Now().Add(60 * time.Second)
				for {
					rs, err := c.AppendBatch(t.Context(), evs)
					if err == nil {
						for _, r := range rs {
							ackedIDs[p][r.ID] = r.Seq
						}
						if acked.Add(int64(len(rs))) >= total/2 {
							once.Do(func() { close(killAt) })
						}
						break
					}
					if time.Now().After(deadline) {
						errs <- fmt.Errorf("producer %d: gave up: %w", p, err)
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		}()
	}
	<-killAt
	node.kill(t)
	t.Logf("killed the server after %d acknowledged events", acked.Load())
	startChild(t, dir, node.port, durability)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	c, err := client.Connect(t.Context(), client.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	seen := map[string]int{}
	var n int
	if err := c.Tail(t.Context(), client.TailOptions{}, func(r events.Record) error {
		seen[r.Event.ID]++
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("event %s stored %d times", id, k)
		}
	}
	for p := range producers {
		for id := range ackedIDs[p] {
			if seen[id] != 1 {
				t.Errorf("acknowledged event %s is not in the log", id)
			}
		}
	}
	if n != total {
		t.Errorf("log holds %d events, want %d", n, total)
	}
}
