package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/auditkey"
	"github.com/vigil-dev/vigil/internal/server"
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
}

// foldStatus is one node's driver: its durable consumer on VIGIL_LOG
// ("vigil-<node>"), its checkpoint and how far behind the log it is.
type foldStatus struct {
	Node       string `json:"node"`
	Checkpoint uint64 `json:"checkpoint"`
	Lag        uint64 `json:"lag"`
	Leader     string `json:"consumer_leader,omitempty"`
}

func newStreamStatus(info *jetstream.StreamInfo) streamStatus {
	s := streamStatus{LastSeq: info.State.LastSeq}
	if ci := info.Cluster; ci != nil {
		s.Cluster, s.Leader = ci.Name, ci.Leader
		for _, p := range ci.Replicas {
			s.Replicas = append(s.Replicas, replicaStatus{Name: p.Name, Current: p.Current, Offline: p.Offline, Lag: p.Lag})
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
	s, err := js.Stream(ctx, events.StreamLog)
	if err != nil {
		return
	}
	names := s.ConsumerNames(ctx)
	for name := range names.Name() {
		node, ok := strings.CutPrefix(name, "vigil-")
		if !ok {
			continue
		}
		c, err := s.Consumer(ctx, name)
		if err != nil {
			continue
		}
		ci := c.CachedInfo()
		// The driver creates its consumer right after the last record it
		// folded: one that has acknowledged nothing yet is at its start.
		f := foldStatus{Node: node, Checkpoint: ci.AckFloor.Stream}
		if start := ci.Config.OptStartSeq; start > 0 && start-1 > f.Checkpoint {
			f.Checkpoint = start - 1
		}
		if ls.LastSeq > f.Checkpoint {
			f.Lag = ls.LastSeq - f.Checkpoint
		}
		if ci.Cluster != nil {
			f.Leader = ci.Cluster.Leader
		}
		st.Folds = append(st.Folds, f)
	}
	slices.SortFunc(st.Folds, func(a, b foldStatus) int { return strings.Compare(a.Node, b.Node) })
	if kv, err := js.KeyValue(ctx, server.FleetBucket); err == nil {
		if e, err := kv.Get(ctx, server.FleetAuditKey); err == nil {
			var rec struct {
				VerifierKey string `json:"verifier_key"`
				Node        string `json:"node"`
			}
			if json.Unmarshal(e.Value(), &rec) == nil {
				st.AuditKey, st.AuditKeyNode = auditkey.KeyID(rec.VerifierKey), rec.Node
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
			case r.Offline:
				state = "offline"
			case !r.Current:
				state = fmt.Sprintf("behind by %d", r.Lag)
			}
			fmt.Fprintf(w, ", %s %s", r.Name, state)
		}
		fmt.Fprintln(w)
	}
	for _, f := range st.Folds {
		fmt.Fprintf(w, "node %s: folded to log seq %d (%d behind)\n", f.Node, f.Checkpoint, f.Lag)
	}
	if st.AuditKey != "" {
		fmt.Fprintf(w, "audit key: %s (recorded by node %s; every node must sign with it)\n", st.AuditKey, st.AuditKeyNode)
	}
}
