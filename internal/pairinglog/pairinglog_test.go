package pairinglog_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/internal/pairinglog"
	"github.com/vigil-dev/vigil/processors/pairing"
)

// fakeClock is now plus an offset the test moves.
type fakeClock struct{ off atomic.Int64 }

func (c *fakeClock) Now() time.Time          { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *fakeClock) Advance(d time.Duration) { c.off.Add(int64(d)) }

// start runs a node without its own timers, and returns an admin client.
func start(t *testing.T) (*node.Node, *client.Client) {
	t.Helper()
	dir := t.TempDir()
	n, err := node.Start(t.Context(), node.Config{NoExpiry: true,
		DataDir: dir, NATSListen: "127.0.0.1:-1", Durability: natsutil.DurabilityInterval})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		n.Close(ctx)
	})
	cl, err := client.Connect(t.Context(), client.Options{DataDir: dir, Role: natsutil.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return n, cl
}

func appendEv(t *testing.T, cl *client.Client, ev events.Event) uint64 {
	t.Helper()
	res, err := cl.Append(t.Context(), ev)
	if err != nil {
		t.Fatal(err)
	}
	return res.Seq
}

var key = make([]byte, pairing.KeyLen)

// TestTimerExpiresAndUnlocks: the timer appends a code's expiry once its
// hour has passed (not before), and the end of a lockout an hour after it
// began; two timers (a fleet) append each outcome once.
func TestTimerExpiresAndUnlocks(t *testing.T) {
	n, cl := start(t)
	clock := &fakeClock{}
	var timers []*pairinglog.Timer
	for range 2 {
		tm, err := pairinglog.NewTimer(pairinglog.TimerConfig{Conn: n.Conn(), Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		timers = append(timers, tm)
	}
	tick := func() time.Time {
		t.Helper()
		nexts := make([]time.Time, len(timers))
		var wg sync.WaitGroup
		for i, tm := range timers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				nx, err := tm.Tick(t.Context())
				if err != nil {
					t.Error(err)
				}
				nexts[i] = nx
			}()
		}
		wg.Wait()
		return nexts[0]
	}
	reader := pairinglog.NewReader(cl.JetStream())
	state := func(id string) pairing.Request {
		t.Helper()
		var q pairing.Request
		if err := reader.View(t.Context(), func(f *pairing.Fold) { q, _ = f.Get(id) }); err != nil {
			t.Fatal(err)
		}
		return q
	}

	appendEv(t, cl, pairinglog.RequestEvent(key, "web-1", "ABCDEFGH", "secret", "10.0.0.1", "test"))
	if next := tick(); next.IsZero() || next.Before(clock.Now().Add(59*time.Minute)) {
		t.Fatalf("next due %v, want about an hour from now", next)
	}
	clock.Advance(59 * time.Minute)
	tick()
	if q := state("web-1"); q.State != pairing.StatePending {
		t.Fatalf("after 59 minutes: %+v", q)
	}
	clock.Advance(2 * time.Minute)
	tick()
	if q := state("web-1"); q.State != pairing.StateExpired {
		t.Fatalf("after 61 minutes: %+v", q)
	}

	// Five failures lock out; the timer ends the lockout an hour later.
	clock.off.Store(0)
	for range pairing.MaxFailures {
		appendEv(t, cl, pairinglog.AttemptEvent(events.KindPairingApproved, key, pairing.PlatformWeb, "ZZZZZZZZ", "", "", "test", ""))
	}
	locked := func() bool {
		var l pairing.Lockout
		reader.View(t.Context(), func(f *pairing.Fold) { l = f.Lock() })
		return l.Locked
	}
	if !locked() {
		t.Fatal("not locked after five failures")
	}
	tick()
	if !locked() {
		t.Fatal("unlocked at once")
	}
	clock.Advance(59 * time.Minute)
	tick()
	if !locked() {
		t.Fatal("unlocked after 59 minutes")
	}
	clock.Advance(2 * time.Minute)
	tick()
	if locked() {
		t.Fatal("still locked after the hour")
	}
	tick()

	// Each outcome once, whatever the number of timers and ticks.
	counts := map[events.Kind]int{}
	err := natsutil.ReadStream(t.Context(), cl.JetStream(), natsutil.ReadOptions{Stream: events.StreamLog,
		Subjects: []string{events.LogSubject(pairing.Conversation)}}, func(r natsutil.RawRecord) error {
		ev, err := events.DecodeMsgpack(r.Data)
		if err != nil {
			return err
		}
		counts[ev.Kind]++
		if ev.Kind == events.KindPairingExpired && ev.Origin != events.OriginAdmin {
			t.Errorf("the timer's event has origin %q", ev.Origin)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if counts[events.KindPairingExpired] != 2 {
		t.Errorf("pairing.expired appended %d times, want 2 (one expiry, one unlock): %v", counts[events.KindPairingExpired], counts)
	}
}

// TestReaderFollows: a following Reader sees what is appended and tells
// the outcome of a seq, as POST /pair waits for it.
func TestReaderFollows(t *testing.T) {
	_, cl := start(t)
	r := pairinglog.NewReader(cl.JetStream())
	var seen atomic.Int32
	r.OnOutcome = func(pairing.Outcome) { seen.Add(1) }
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Follow(ctx) }()
	seq := appendEv(t, cl, pairinglog.RequestEvent(key, "web-1", "ABCDEFGH", "secret", "10.0.0.1", "test"))
	wctx, wcancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer wcancel()
	o, err := r.WaitOutcome(wctx, seq)
	if err != nil || o.Result != pairing.ResultAccepted || o.Request != "web-1" {
		t.Fatalf("outcome %+v, %v", o, err)
	}
	seq = appendEv(t, cl, pairinglog.RequestEvent(key, "web-2", "JKLMNPQR", "secret", "10.0.0.1", "test"))
	if o, err := r.WaitOutcome(wctx, seq); err != nil || o.Result != pairing.ResultRefused || o.Reason != pairing.ReasonRateLimited {
		t.Fatalf("outcome %+v, %v", o, err)
	}
	if seen.Load() != 2 {
		t.Errorf("OnOutcome called %d times", seen.Load())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "creds")
	if _, err := pairinglog.LoadKey(dir); err == nil {
		t.Fatal("a key loaded from nothing")
	}
	k1, err := pairinglog.LoadOrCreateKey(dir)
	if err != nil || len(k1) != pairing.KeyLen {
		t.Fatalf("%x, %v", k1, err)
	}
	k2, err := pairinglog.LoadOrCreateKey(dir)
	if err != nil || string(k1) != string(k2) {
		t.Fatal("the key changed on the second load")
	}
	fi, err := os.Stat(datadir.CredsAt(dir).PairingKey())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v, %v", fi.Mode(), err)
	}
	os.WriteFile(datadir.CredsAt(dir).PairingKey(), []byte("not hex\n"), 0o600)
	if _, err := pairinglog.LoadKey(dir); err == nil {
		t.Fatal("a damaged key loaded")
	}
}

func TestCodes(t *testing.T) {
	seen := map[string]bool{}
	counts := map[rune]int{}
	for range 2000 {
		c, err := pairinglog.NewCode()
		if err != nil {
			t.Fatal(err)
		}
		if n, err := pairing.NormalizeCode(c); err != nil || n != c {
			t.Fatalf("code %q does not normalize to itself: %v", c, err)
		}
		seen[c] = true
		for _, r := range c {
			counts[r]++
		}
	}
	if len(seen) < 1999 {
		t.Errorf("%d distinct codes of 2000", len(seen))
	}
	// 16,000 characters over 32: each about 500; a character never or
	// far too often drawn means the draw is not uniform.
	for _, r := range pairing.Alphabet {
		if counts[r] < 350 || counts[r] > 650 {
			t.Errorf("%c drawn %d times of 16000", r, counts[r])
		}
	}
}

// TestKeyCreatedOnceByRacingNodes: nodes sharing one credentials directory
// start together; every one must read the same whole key, never a file
// another is still writing.
func TestKeyCreatedOnceByRacingNodes(t *testing.T) {
	for round := range 50 {
		dir := filepath.Join(t.TempDir(), "creds")
		const n = 8
		keys := make([][]byte, n)
		errs := make([]error, n)
		var start, done sync.WaitGroup
		start.Add(1)
		for i := range n {
			done.Add(1)
			go func() {
				defer done.Done()
				start.Wait()
				keys[i], errs[i] = pairinglog.LoadOrCreateKey(dir)
			}()
		}
		start.Done()
		done.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("round %d, node %d: %v", round, i, errs[i])
			}
			if string(keys[i]) != string(keys[0]) {
				t.Fatalf("round %d: node %d holds another key", round, i)
			}
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Fatalf("round %d: %d entries left in the credentials directory, want the key alone", round, len(entries))
		}
	}
}
