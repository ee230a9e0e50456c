package pairing

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vigil-dev/vigil/processors"
)

// snapshotVersion is the version of the pairing fold's snapshot.
const snapshotVersion = 1

type snapshotState struct {
	V        int          `msgpack:"v"`
	Requests []Request    `msgpack:"requests"`
	Clients  []clientMark `msgpack:"clients"`
	Finished []string     `msgpack:"finished"`
	Lock     Lockout      `msgpack:"lock"`
	Clock    time.Time    `msgpack:"clock"`
	Seq      uint64       `msgpack:"seq"`
}

type clientMark struct {
	Client string    `msgpack:"client"`
	At     time.Time `msgpack:"at"`
}

// Snapshot encodes the fold's state deterministically (see
// processors.Snapshotter).
func (f *Fold) Snapshot() ([]byte, error) {
	st := snapshotState{V: snapshotVersion, Requests: f.rawRequests(), Finished: slices.Clone(f.finished),
		Lock: f.Lock(), Clock: f.clock, Seq: f.seq}
	for c, t := range f.lastByClient {
		st.Clients = append(st.Clients, clientMark{Client: c, At: t})
	}
	slices.SortFunc(st.Clients, func(a, b clientMark) int { return strings.Compare(a.Client, b.Client) })
	return processors.EncodeState(&st)
}

// rawRequests lists the requests with their hashes, in a stable order.
func (f *Fold) rawRequests() []Request {
	out := make([]Request, 0, len(f.requests))
	for _, r := range f.requests {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b Request) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Restore replaces the state with a snapshot's.
func (f *Fold) Restore(b []byte) error {
	var st snapshotState
	if err := processors.DecodeState(b, &st); err != nil {
		return err
	}
	if st.V != snapshotVersion {
		return fmt.Errorf("%w: pairing snapshot version %d, want %d", processors.ErrSnapshot, st.V, snapshotVersion)
	}
	n := New()
	for i := range st.Requests {
		r := st.Requests[i]
		n.requests[r.ID] = &r
		if r.State == StatePending && r.CodeHash != "" {
			n.byCode[r.CodeHash] = r.ID
		}
	}
	for _, id := range st.Finished {
		if _, ok := n.requests[id]; !ok {
			return fmt.Errorf("%w: pairing snapshot lists finished request %q it does not hold", processors.ErrSnapshot, id)
		}
	}
	for _, c := range st.Clients {
		n.lastByClient[c.Client] = c.At
	}
	n.finished, n.lock, n.clock, n.seq = st.Finished, st.Lock, st.Clock, st.Seq
	*f = *n
	return nil
}

var _ processors.Snapshotter = (*Fold)(nil)
