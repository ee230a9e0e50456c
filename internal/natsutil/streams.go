package natsutil

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
)

// StreamOptions tune the stream definitions.
type StreamOptions struct {
	// Replicas is 1 on a single host, 3 in a fleet.
	Replicas int
	// DedupWindow is how long an event id is recognised, so a producer
	// retrying with the same id is stored once: the ingest service's id
	// index (internal/ingest/idindex.go) keeps it. Zero means
	// DefaultDedupWindow. VIGIL_DERIVED's window is DerivedDedupWindow, or
	// DedupWindow when that is shorter (tests use short windows on both).
	DedupWindow time.Duration
	// LogStreamWindow is VIGIL_LOG's own JetStream duplicate window: it
	// covers the moments between a publish and the id index learning it.
	// Zero means DefaultLogStreamWindow, or DedupWindow when that is
	// shorter.
	LogStreamWindow time.Duration
}

// DerivedDedupWindow is VIGIL_DERIVED's duplicate window: one minute, as
// VIGIL_LOG's. Nodes of a fleet publish the same outputs within moments of
// each other, and JetStream stores each once; a driver that has been away
// longer, or whose publish went unanswered for half the window, reads
// what the stream holds instead (internal/driver/dedup.go), so no output
// is stored twice whatever the window. The window costs a start: before
// it listens, nats-server loads every message stored within it to rebuild
// its table of ids (a restart just after a node folded a million records
// would load its 680,000 outputs with a window of 10 minutes, and the
// outputs of the last minute with this one).
const DerivedDedupWindow = time.Minute

// DefaultDedupWindow is how long a stored event id is recognised: one
// hour. Producers retry within seconds; an hour covers a server restart, a
// long client back-off and a resumed `vigil append`. The ingest service's
// id index keeps the ids on disk, so the window costs no memory.
const DefaultDedupWindow = time.Hour

// DefaultLogStreamWindow is VIGIL_LOG's own JetStream duplicate window:
// one minute (half JetStream's default). JetStream holds every id of its
// window in memory (about 120 bytes each) and rebuilds that table at each
// start by reading every message of the window (a node restarted just
// after taking a million events in two minutes loaded all of them before
// it listened); the id index answers for the rest of DedupWindow. It must
// stay well above the time the index takes to learn a stored id
// (milliseconds): with one minute, a request waits for the index only
// when the index is 45 s behind (internal/ingest/idindex.go).
const DefaultLogStreamWindow = time.Minute

// StreamConfigs returns the stream definitions of DESIGN.md.
func StreamConfigs(o StreamOptions) []jetstream.StreamConfig {
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if o.DedupWindow == 0 {
		o.DedupWindow = DefaultDedupWindow
	}
	if o.LogStreamWindow == 0 {
		o.LogStreamWindow = min(DefaultLogStreamWindow, o.DedupWindow)
	}
	return []jetstream.StreamConfig{
		{
			Name:        events.StreamLog,
			Description: "Vigil canonical log: redacted, totally ordered; the system of record",
			Subjects:    []string{events.LogPrefix + ">"},
			Retention:   jetstream.LimitsPolicy,
			Storage:     jetstream.FileStorage,
			Replicas:    o.Replicas,
			Duplicates:  o.LogStreamWindow,
			Discard:     jetstream.DiscardNew,
			DenyDelete:  true,
			DenyPurge:   true,
			// A request's events are stored in order: as one atomic batch,
			// all or nothing, on a replicated stream (Publisher.PublishBatch);
			// as one chain on a single replica (Publisher.PublishChain).
			AllowAtomicPublish: true,
		},
		{
			Name:        events.StreamDerived,
			Description: "Vigil processor outputs; re-derivable from VIGIL_LOG",
			Subjects: []string{events.RiskPrefix + ">", events.GatePrefix + ">", events.StatsPrefix + ">",
				events.SubjectCheckpoint, events.SubjectAlert},
			Retention:  jetstream.LimitsPolicy,
			Storage:    jetstream.FileStorage,
			Replicas:   o.Replicas,
			Duplicates: min(DerivedDedupWindow, o.DedupWindow),
			// A fold's outputs are stored in order (Publisher.PublishAll).
			AllowAtomicPublish: true,
		},
		{
			Name:        events.StreamDLQ,
			Description: "Vigil refused bodies: the reason and a digest, never the body",
			Subjects:    []string{events.SubjectDLQ},
			Retention:   jetstream.LimitsPolicy,
			Storage:     jetstream.FileStorage,
			Replicas:    o.Replicas,
			MaxAge:      30 * 24 * time.Hour,
		},
	}
}

// EnsureStreams creates or updates every stream; it is idempotent. An
// existing stream is updated to the current definition, so a store made by
// an older Vigil gains what it lacks (e.g. AllowAtomicPublish).
func EnsureStreams(ctx context.Context, js jetstream.JetStream, o StreamOptions) error {
	for _, sc := range StreamConfigs(o) {
		if _, err := js.CreateOrUpdateStream(ctx, sc); err != nil {
			return fmt.Errorf("natsutil: stream %s: %w", sc.Name, err)
		}
	}
	return nil
}
