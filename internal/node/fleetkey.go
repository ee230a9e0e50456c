package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/auditkey"
	"github.com/vigil-dev/vigil/internal/datadir"
)

// ErrAuditKeyMismatch means a fleet node holds another audit key than
// the one the fleet signs its checkpoints with: it refuses to start, since
// its checkpoints would not verify with the fleet's verifier key (and
// would be deduplicated against the others' by id, so which signature a
// checkpoint carries would depend on which node stored it first).
var ErrAuditKeyMismatch = errors.New("this node's audit key is not the fleet's")

// The fleet's own records: a replicated key-value bucket. FleetAuditKey
// holds the verifier key of the fleet's audit key, recorded by the first
// node that starts with one (fleetKeyRecord as JSON).
const (
	FleetBucket   = "VIGIL_FLEET"
	FleetAuditKey = "audit-key"
)

// errFleetKeyUnseen: recording the fleet's key failed because a record
// exists, but reading it finds none yet; checkAuditKey asks again.
var errFleetKeyUnseen = errors.New("node: the fleet's audit key is recorded but not readable yet")

// fleetKeyRecord is the value of FleetAuditKey.
type fleetKeyRecord struct {
	VerifierKey string `json:"verifier_key"`
	Node        string `json:"node"`
	Recorded    string `json:"recorded"`
}

// checkAuditKey compares the node's audit key (Config.AuditKey) with the
// fleet's: the key recorded in VIGIL_FLEET by the first node that started
// with one. With no record yet, the key that signed the newest checkpoint
// in VIGIL_DERIVED (a fleet older than the record) must be this node's,
// and the node records its key, atomically: of nodes starting together
// with different keys, all but one refuse. Config.AcceptAuditKey records
// the node's key as the fleet's instead, for a deliberate change of key.
func (s *Node) checkAuditKey(ctx context.Context) error {
	// A cluster just formed, or electing, answers some requests with no
	// responders or not at all for a while.
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := s.checkAuditKeyOnce(ctx)
		var apiErr *jetstream.APIError
		transient := errors.Is(err, errFleetKeyUnseen) || errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout) ||
			errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &apiErr) && apiErr.Code == 503)
		if !transient || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (s *Node) checkAuditKeyOnce(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	own := auditkey.KeyID(s.cfg.AuditKey)
	keyFile := datadir.New(s.cfg.DataDir).Signer()
	fix := auditKeyFix(s.cfg.DataDir)
	kv, err := s.fleetBucket(ctx)
	if err != nil {
		return err
	}
	rec := fleetKeyRecord{VerifierKey: s.cfg.AuditKey, Node: s.cfg.NodeName, Recorded: time.Now().UTC().Format(time.RFC3339)}
	b, _ := json.Marshal(rec)
	if s.cfg.AcceptAuditKey {
		if _, err := kv.Put(ctx, FleetAuditKey, b); err != nil {
			return fmt.Errorf("node: record the fleet's audit key: %w", err)
		}
		s.cfg.Logger.Warn("this node's audit key is now the fleet's (--accept-audit-key): give every other node the same key", "key", own)
		return nil
	}
	fleet, found, err := readFleetKey(ctx, kv)
	if err != nil {
		return err
	}
	if !found {
		signers, cpID, size, err := s.newestCheckpointSigners(ctx)
		if err != nil {
			return err
		}
		if len(signers) > 0 && !slices.Contains(signers, own) {
			return fmt.Errorf("%w: this node signs with %s (%s), but the newest checkpoint (%s, tree size %d) was signed with %s. %s",
				ErrAuditKeyMismatch, own, keyFile, cpID, size, strings.Join(signers, ", "), fix)
		}
		if _, err := kv.Create(ctx, FleetAuditKey, b); err == nil {
			s.cfg.Logger.Info("recorded this node's audit key as the fleet's", "key", own)
			return nil
		} else if !errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("node: record the fleet's audit key: %w", err)
		}
		// Another node recorded its key first; the bucket's leader may not
		// show it yet (the nodes of a new fleet start together).
		if fleet, found, err = readFleetKey(ctx, kv); err != nil {
			return err
		}
		if !found {
			return errFleetKeyUnseen
		}
	}
	if id := auditkey.KeyID(fleet.VerifierKey); id != own {
		return fmt.Errorf("%w: this node signs with %s (%s), but the fleet signs with %s (recorded by node %s at %s). %s",
			ErrAuditKeyMismatch, own, keyFile, id, fleet.Node, fleet.Recorded, fix)
	}
	return nil
}

// auditKeyFix says what to do about a node's audit key that is not the
// fleet's (the node's data directory dataDir).
func auditKeyFix(dataDir string) string {
	return fmt.Sprintf("Copy audit/signer.key from another node's data directory to %s (mode 0600) and start again; "+
		"to make this node's key the fleet's on purpose, stop every node, give each this key, and start one with --accept-audit-key",
		datadir.New(dataDir).Signer())
}

// readFleetKey reads FleetAuditKey; found is false when there is none.
func readFleetKey(ctx context.Context, kv jetstream.KeyValue) (fleetKeyRecord, bool, error) {
	var rec fleetKeyRecord
	e, err := kv.Get(ctx, FleetAuditKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return rec, false, nil
	}
	if err != nil {
		return rec, false, fmt.Errorf("node: read the fleet's audit key: %w", err)
	}
	if err := json.Unmarshal(e.Value(), &rec); err != nil || rec.VerifierKey == "" {
		return rec, false, fmt.Errorf("node: the fleet's audit key record (%s %s) does not decode: %v", FleetBucket, FleetAuditKey, err)
	}
	return rec, true, nil
}

// newestCheckpointSigners returns the key ids that signed the newest
// audit checkpoint in VIGIL_DERIVED, its id and tree size; none when
// there is no checkpoint (or none that parses: audit verify reports it).
func (s *Node) newestCheckpointSigners(ctx context.Context) (signers []string, id string, size uint64, err error) {
	st, err := s.js.Stream(ctx, events.StreamDerived)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, "", 0, nil // a new fleet: nothing signed yet
	}
	if err != nil {
		return nil, "", 0, fmt.Errorf("node: stream %s: %w", events.StreamDerived, err)
	}
	m, err := st.GetLastMsgForSubject(ctx, events.SubjectCheckpoint)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, "", 0, nil
	}
	if err != nil {
		return nil, "", 0, fmt.Errorf("node: read the newest audit checkpoint: %w", err)
	}
	d, err := events.DecodeDerived(m.Data)
	if err != nil {
		return nil, "", 0, nil
	}
	cp, err := events.DerivedDataAs[events.AuditCheckpoint](&d)
	if err != nil {
		return nil, "", 0, nil
	}
	signers, err = auditkey.NoteSigners(cp.Note)
	if err != nil {
		return nil, "", 0, nil
	}
	return signers, d.ID, cp.TreeSize, nil
}

// fleetBucket opens VIGIL_FLEET, creating it (with the streams'
// replicas) on the fleet's first start; a new cluster may still be
// electing, so it retries as ensureStreams does.
func (s *Node) fleetBucket(ctx context.Context) (jetstream.KeyValue, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		kv, err := s.js.KeyValue(ctx, FleetBucket)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			kv, err = s.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
				Bucket: FleetBucket, Description: "Vigil fleet records (the fleet's audit key)",
				History: 5, Replicas: max(s.cfg.Replicas, 1), Storage: jetstream.FileStorage,
			})
			if errors.Is(err, jetstream.ErrBucketExists) {
				continue
			}
		}
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			if err != nil {
				return nil, fmt.Errorf("node: open %s: %w", FleetBucket, err)
			}
			return kv, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
