package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/node/integrity"
)

// checkAuditKey runs the fleet's audit-key guard (integrity.CheckAuditKey)
// for this node: Config.AuditKey against the key recorded in VIGIL_FLEET;
// Config.AcceptAuditKey records the node's key as the fleet's instead.
func (s *Node) checkAuditKey(ctx context.Context) error {
	kv, err := s.fleetBucket(ctx)
	if err != nil {
		return err
	}
	return integrity.CheckAuditKey(ctx, s.js, kv, auditKeyCheckFor(s.cfg))
}

// auditKeyCheckFor is what the audit key of a node configured as cfg is
// compared as.
func auditKeyCheckFor(cfg Config) integrity.AuditKeyCheck {
	return integrity.AuditKeyCheck{
		VerifierKey: cfg.AuditKey, NodeName: cfg.NodeName,
		KeyFile: datadir.New(cfg.DataDir).Signer(), Fix: auditKeyFix(cfg.DataDir),
		Accept: cfg.AcceptAuditKey, Logger: cfg.Logger,
	}
}

// auditKeyFix says what to do about a node's audit key that is not the
// fleet's (the node's data directory dataDir).
func auditKeyFix(dataDir string) string {
	return fmt.Sprintf("Copy audit/signer.key from another node's data directory to %s (mode 0600) and start again; "+
		"to make this node's key the fleet's on purpose, stop every node, give each this key, and start one with --accept-audit-key",
		datadir.New(dataDir).Signer())
}

// fleetBucket opens VIGIL_FLEET, creating it (with the streams'
// replicas) on the fleet's first start; a new cluster may still be
// electing, so it retries as ensureStreams does.
func (s *Node) fleetBucket(ctx context.Context) (jetstream.KeyValue, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		kv, err := s.js.KeyValue(ctx, integrity.FleetBucket)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			kv, err = s.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
				Bucket: integrity.FleetBucket, Description: "Vigil fleet records (the fleet's audit key)",
				History: 5, Replicas: max(s.cfg.Replicas, 1), Storage: jetstream.FileStorage,
			})
			if errors.Is(err, jetstream.ErrBucketExists) {
				continue
			}
		}
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			if err != nil {
				return nil, fmt.Errorf("node: open %s: %w", integrity.FleetBucket, err)
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
