package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/auditkey"
	"github.com/vigil-dev/vigil/internal/node/integrity"
)

// streamStatus is one stream's replication, as `vigil status` shows it.
type streamStatus struct {
	Cluster string `json:"cluster,omitempty"`
	Leader  string `json:"leader,omitempty"`
	// Replicas are the followers: each one's lag in operations, and
	// whether it is current.
	Replicas []replicaStatus `json:"replicas,omitempty"`
	LastSeq  uint64          `json:"last_seq"`
}

type replicaStatus struct {
	Name    string `json:"name"`
	Current bool   `json:"current"`
	Offline bool   `json:"offline,omitempty"`
	Lag     uint64 `json:"lag"`
	// Down is set for a peer the leader has not heard from for
	// peerDownAfter (or that JetStream calls offline); DownSince is when
	// it was last heard from (RFC 3339).
	Down      bool   `json:"down,omitempty"`
	DownSince string `json:"down_since,omitempty"`
}

// foldStatus is one node's driver: its durable consumer on VIGIL_LOG
// ("vigil-<node>"), its checkpoint and how far behind the log it is.
// Live is true while the driver reads the log (a pull request waiting at
// the consumer, or a delivery within peerDownAfter); a node that is not,
// and that the streams' leaders do not hear from, is Down since DownSince.
type foldStatus struct {
	Node       string `json:"node"`
	Checkpoint uint64 `json:"checkpoint"`
	Lag        uint64 `json:"lag"`
	Leader     string `json:"consumer_leader,omitempty"`
	Live       bool   `json:"live"`
	Down       bool   `json:"down,omitempty"`
	DownSince  string `json:"down_since,omitempty"`
}

// peerDownAfter is how long a stream leader may not hear from a replica
// before status calls its node down: Raft heartbeats every second.
const peerDownAfter = 3 * time.Second

func newStreamStatus(info *jetstream.StreamInfo) streamStatus {
	s := streamStatus{LastSeq: info.State.LastSeq}
	if ci := info.Cluster; ci != nil {
		s.Cluster, s.Leader = ci.Name, ci.Leader
		for _, p := range ci.Replicas {
			r := replicaStatus{Name: p.Name, Current: p.Current, Offline: p.Offline, Lag: p.Lag}
			if p.Offline || p.Active > peerDownAfter {
				r.Down = true
				if p.Active > 0 {
					r.DownSince = time.Now().Add(-p.Active).UTC().Format(time.RFC3339)
				}
			}
			s.Replicas = append(s.Replicas, r)
		}
	}
	return s
}

// fleetStatus fills the streams' replication and every node's fold.
// What the credentials may not read is left out.
func fleetStatus(ctx context.Context, js jetstream.JetStream, st *serverStatus, logInfo *jetstream.StreamInfo) {
	ls := newStreamStatus(logInfo)
	st.Log = &ls
	if s, err := js.Stream(ctx, events.StreamDerived); err == nil {
		ds := newStreamStatus(s.CachedInfo())
		st.Derived = &ds
	}
	if !st.readsConsumers() {
		st.FoldsError = fmt.Sprintf("the %s role may not read the drivers' consumers", st.role)
		st.foldsDenied = true
		fleetKey(ctx, js, st)
		return
	}
	s, err := js.Stream(ctx, events.StreamLog)
	if err != nil {
		return
	}
	// The answering node's own consumer first, on its own: whether the
	// node serves rests on it, and one request answers where listing them
	// all may not in time.
	var own *foldStatus
	if st.Node != "" {
		c, err := s.Consumer(ctx, "vigil-"+st.Node)
		switch {
		case err == nil:
			f := newFoldStatus(st, st.Node, c.CachedInfo())
			own = &f
		case errors.Is(err, jetstream.ErrConsumerNotFound):
			st.ownAbsent = true
		}
	}
	names := s.ConsumerNames(ctx)
	for name := range names.Name() {
		node, ok := strings.CutPrefix(name, "vigil-")
		if !ok {
			continue
		}
		if own != nil && node == own.Node {
			continue
		}
		c, err := s.Consumer(ctx, name)
		if err != nil {
			continue
		}
		st.Folds = append(st.Folds, newFoldStatus(st, node, c.CachedInfo()))
	}
	if own != nil {
		st.Folds = append(st.Folds, *own)
	}
	if err := names.Err(); err == nil {
		st.foldsKnown = true
	} else {
		st.FoldsError = fmt.Sprintf("the drivers' consumers could not be listed: %v", err)
		// A request the role may not make goes unanswered; the
		// connection's last error tells it from a slow answer.
		st.foldsDenied = errors.Is(js.Conn().LastError(), nats.ErrPermissionViolation)
	}
	slices.SortFunc(st.Folds, func(a, b foldStatus) int { return strings.Compare(a.Node, b.Node) })
	fleetKey(ctx, js, st)
}

// fleetKey fills the fleet's audit key.
func fleetKey(ctx context.Context, js jetstream.JetStream, st *serverStatus) {
	// From the bucket's leader: a replica still catching up (a node just
	// started) answers a key-value get with "not found".
	var lastErr error = ctx.Err()
	for ctx.Err() == nil {
		rec, found, err := integrity.LeaderFleetKey(ctx, js.Conn())
		lastErr = err
		if err == nil {
			if found {
				st.AuditKey, st.AuditKeyNode = auditkey.KeyID(rec.VerifierKey), rec.Node
			}
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	st.AuditKeyError = fmt.Sprintf("the fleet's audit key record did not answer in time: %v", lastErr)
}

// newFoldStatus is node's fold as its driver's consumer ci shows it; a
// fold that is not live and whose replicas are not current is marked
// down, on st's streams too.
func newFoldStatus(st *serverStatus, node string, ci *jetstream.ConsumerInfo) foldStatus {
	// The driver creates its consumer right after the last record it
	// folded: one that has acknowledged nothing yet is at its start.
	f := foldStatus{Node: node, Checkpoint: ci.AckFloor.Stream}
	if start := ci.Config.OptStartSeq; start > 0 && start-1 > f.Checkpoint {
		f.Checkpoint = start - 1
	}
	if st.Log != nil && st.Log.LastSeq > f.Checkpoint {
		f.Lag = st.Log.LastSeq - f.Checkpoint
	}
	if ci.Cluster != nil {
		f.Leader = ci.Cluster.Leader
	}
	last := ci.Delivered.Last
	f.Live = ci.NumWaiting > 0 || (last != nil && time.Since(*last) < peerDownAfter)
	if !f.Live {
		// Not reading the log, and not keeping up as a replica either:
		// down, since its last delivery (the streams' leaders keep
		// calling a killed peer "current" or "behind", not offline).
		if r, ok := laggingReplica(node, st.Log, st.Derived); ok {
			f.Down, f.DownSince = true, r.DownSince
			if last != nil {
				f.DownSince = last.UTC().Format(time.RFC3339)
			}
			markDown(node, f.DownSince, st.Log, st.Derived)
		}
	}
	return f
}

// laggingReplica finds node among the streams' replicas that are down or
// not current.
func laggingReplica(node string, ss ...*streamStatus) (replicaStatus, bool) {
	for _, s := range ss {
		if s == nil {
			continue
		}
		for _, r := range s.Replicas {
			if r.Name == node && (r.Down || !r.Current) {
				return r, true
			}
		}
	}
	return replicaStatus{}, false
}

// markDown calls node's replicas down since since.
func markDown(node, since string, ss ...*streamStatus) {
	for _, s := range ss {
		if s == nil {
			continue
		}
		for i := range s.Replicas {
			if r := &s.Replicas[i]; r.Name == node {
				r.Down = true
				if r.DownSince == "" {
					r.DownSince = since
				}
			}
		}
	}
}

// printFleet writes the streams' leaders and replicas and each node's fold.
func printFleet(w io.Writer, st serverStatus) {
	for _, s := range []struct {
		name string
		s    *streamStatus
	}{{events.StreamLog, st.Log}, {events.StreamDerived, st.Derived}} {
		if s.s == nil || s.s.Leader == "" {
			continue
		}
		fmt.Fprintf(w, "%s: cluster %s, leader %s", s.name, s.s.Cluster, s.s.Leader)
		for _, r := range s.s.Replicas {
			state := "current"
			switch {
			case r.Down && r.DownSince != "":
				state = "down since " + r.DownSince
			case r.Down:
				state = "down"
			case !r.Current:
				state = fmt.Sprintf("behind by %d", r.Lag)
			}
			fmt.Fprintf(w, ", %s %s", r.Name, state)
		}
		fmt.Fprintln(w)
	}
	for _, f := range st.Folds {
		state := "serving"
		switch {
		case f.Down && f.DownSince != "":
			state = "down since " + f.DownSince
		case f.Down:
			state = "down"
		case !f.Live:
			state = "not reading the log"
		}
		fmt.Fprintf(w, "node %s: %s, folded to log seq %d (%d behind)\n", f.Node, state, f.Checkpoint, f.Lag)
	}
	if st.FoldsError != "" {
		fmt.Fprintf(w, "nodes: unknown (%s)\n", st.FoldsError)
	}
	switch {
	case st.AuditKey != "":
		fmt.Fprintf(w, "audit key: %s (recorded by node %s; every node must sign with it)\n", st.AuditKey, st.AuditKeyNode)
	case st.AuditKeyError != "":
		fmt.Fprintf(w, "audit key: unknown (%s)\n", st.AuditKeyError)
	}
}
