package natsutil

import (
	"strconv"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/vigil-dev/vigil/events"
)

// A chain stores its messages in order with one round trip; where the
// stream breaks it (ids stored before, a second stream, another writer's
// message in between), what is left is stored in order after it, every id
// once, each ack naming its message's position.
func TestPublishAllChained(t *testing.T) {
	tests := []struct {
		name string
		// before runs on the fresh node and returns the ids it stored.
		before func(t *testing.T, n *testNode, p *Publisher, msgs []*nats.Msg) []string
		// edit changes the messages before the chained PublishAll.
		edit func(msgs []*nats.Msg)
		log  func(msgs []*nats.Msg, before []string) []string
	}{
		{
			name: "fresh",
			log:  func(msgs []*nats.Msg, _ []string) []string { return ids(msgs) },
		},
		{
			name: "a prefix stored by an attempt whose acks were lost",
			before: func(t *testing.T, n *testNode, p *Publisher, msgs []*nats.Msg) []string {
				one := &Publisher{JS: n.js}
				if _, err := one.inOrder(ctxT(t), msgs[:7]); err != nil {
					t.Fatal(err)
				}
				return ids(msgs[:7])
			},
			log: func(msgs []*nats.Msg, _ []string) []string { return ids(msgs) },
		},
		{
			name: "ids stored in the middle",
			before: func(t *testing.T, n *testNode, p *Publisher, msgs []*nats.Msg) []string {
				one := &Publisher{JS: n.js}
				if _, err := one.inOrder(ctxT(t), msgs[5:8]); err != nil {
					t.Fatal(err)
				}
				return ids(msgs[5:8])
			},
			log: func(msgs []*nats.Msg, before []string) []string {
				out := append([]string(nil), before...)
				for _, id := range ids(msgs) {
					if !contains(before, id) {
						out = append(out, id)
					}
				}
				return out
			},
		},
		{
			name: "one message for another stream",
			edit: func(msgs []*nats.Msg) { msgs[4].Subject = events.SubjectAlert },
			log: func(msgs []*nats.Msg, _ []string) []string {
				var out []string
				for i, id := range ids(msgs) {
					if i != 4 {
						out = append(out, id)
					}
				}
				return out
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := startTestNode(t, nodeOpts{})
			p := &Publisher{JS: n.js, Chain: true}
			msgs := logMsgs("c", 20, 50)
			var before []string
			if tc.before != nil {
				before = tc.before(t, n, p, msgs)
			}
			if tc.edit != nil {
				tc.edit(msgs)
			}
			acks, err := p.PublishAll(ctxT(t), msgs)
			if err != nil {
				t.Fatal(err)
			}
			sameIDs(t, "log", stored(t, n.js, events.StreamLog), tc.log(msgs, before))
			for i, a := range acks {
				if want := events.StreamLog; msgs[i].Subject == events.SubjectAlert {
					want = events.StreamDerived
					if a.Stream != want {
						t.Fatalf("ack %d: stream %s, want %s", i, a.Stream, want)
					}
					continue
				}
				checkAcks(t, n.js, events.StreamLog, msgs[i:i+1], acks[i:i+1])
			}
			for _, m := range msgs {
				if m.Header.Get(hdrExpectedLastMsgID) != "" {
					t.Fatalf("%s: the caller's message was given %s", m.Header.Get("Nats-Msg-Id"), hdrExpectedLastMsgID)
				}
			}
		})
	}
}

// Two chained publishers writing into one stream at once break each
// other's chains at every turn: each still has its messages stored in its
// order, every id once.
func TestPublishAllChainedInterleaved(t *testing.T) {
	n := startTestNode(t, nodeOpts{})
	ctx := ctxT(t)
	const rounds = 30
	errs := make(chan error, 2)
	for w := range 2 {
		go func() {
			p := &Publisher{JS: n.js, Chain: true}
			for r := range rounds {
				if _, err := p.PublishAll(ctx, logMsgs("w"+strconv.Itoa(w)+"r"+strconv.Itoa(r), 10, 40)); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	got := stored(t, n.js, events.StreamLog)
	if len(got) != 2*rounds*10 {
		t.Fatalf("%d stored, want %d", len(got), 2*rounds*10)
	}
	for w := range 2 {
		var mine, want []string
		for r := range rounds {
			want = append(want, ids(logMsgs("w"+strconv.Itoa(w)+"r"+strconv.Itoa(r), 10, 40))...)
		}
		for _, id := range got {
			if id[:2] == "w"+strconv.Itoa(w) {
				mine = append(mine, id)
			}
		}
		sameIDs(t, "writer "+strconv.Itoa(w), mine, want)
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// With SyncEveryWrite a chunk of MinAtomicBatch messages or more goes as
// one atomic batch (one fsync), a smaller one as a chain; without it
// every chunk is a chain. The stored headers say which was sent.
func TestPublishAllChainOrBatchBySync(t *testing.T) {
	for _, tc := range []struct {
		sync bool
		n    int
		want string
	}{
		{true, DefaultMinAtomicBatch, hdrBatchID},
		{true, DefaultMinAtomicBatch - 1, hdrExpectedLastMsgID},
		{false, DefaultMinAtomicBatch, hdrExpectedLastMsgID},
	} {
		t.Run(strconv.FormatBool(tc.sync)+"/"+strconv.Itoa(tc.n), func(t *testing.T) {
			n := startTestNode(t, nodeOpts{durability: DurabilityFsync})
			p := &Publisher{JS: n.js, Chain: true, SyncEveryWrite: tc.sync}
			msgs := logMsgs("s", tc.n, 64)
			acks, err := p.PublishAll(ctxT(t), msgs)
			if err != nil {
				t.Fatal(err)
			}
			st, err := n.js.Stream(ctxT(t), events.StreamLog)
			if err != nil {
				t.Fatal(err)
			}
			m, err := st.GetMsg(ctxT(t), acks[len(acks)-1].Sequence)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range []string{hdrBatchID, hdrExpectedLastMsgID} {
				if got := m.Header.Get(h) != ""; got != (h == tc.want) {
					t.Errorf("last of %d messages (sync every write %v) stored with headers %v, want %s only", tc.n, tc.sync, m.Header, tc.want)
				}
			}
		})
	}
}
