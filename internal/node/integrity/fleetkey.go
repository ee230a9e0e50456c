package integrity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/auditkey"
)

// Fleet audit key: every node of a fleet signs its checkpoints with one
// key, or the checkpoints would not verify with the fleet's verifier key
// (and would be deduplicated against each other by id, so which signature
// a checkpoint carries would depend on which node stored it first). The
// fleet's record of that key is a replicated key-value bucket: FleetAuditKey
// holds the verifier key recorded by the first node that started with one
// (FleetKey as JSON).

// ErrAuditKeyMismatch means a fleet node holds another audit key than
// the one the fleet signs its checkpoints with: it refuses to start.
var ErrAuditKeyMismatch = errors.New("this node's audit key is not the fleet's")

// errFleetKeyUnseen: recording the fleet's key failed because a record
// exists, but reading it finds none yet; CheckAuditKey asks again.
var errFleetKeyUnseen = errors.New("integrity: the fleet's audit key is recorded but not readable yet")

// The fleet's records bucket and its audit key's key.
const (
	FleetBucket   = "VIGIL_FLEET"
	FleetAuditKey = "audit-key"
)

// FleetKey is the value of FleetAuditKey.
type FleetKey struct {
	VerifierKey string `json:"verifier_key"`
	Node        string `json:"node"`
	Recorded    string `json:"recorded"`
}

// AuditKeyCheck is what CheckAuditKey compares: this node's verifier key
// and name, where its key file is, and what to tell the operator on a
// mismatch (Fix).
type AuditKeyCheck struct {
	VerifierKey string
	NodeName    string
	KeyFile     string
	Fix         string
	// Accept records this node's key as the fleet's (a deliberate change
	// of key) instead of comparing.
	Accept bool
	Logger *slog.Logger
}

// CheckAuditKey compares the node's audit key with the fleet's: the key
// recorded in kv (FleetBucket) by the first node that started with one.
// With no record yet, the key that signed the newest checkpoint in
// VIGIL_DERIVED (a fleet older than the record) must be this node's, and
// the node records its key, atomically: of nodes starting together with
// different keys, all but one refuse (ErrAuditKeyMismatch). A cluster just
// formed, or electing, answers some requests with no responders or not at
// all for a while: those are asked again for up to 30 s.
func CheckAuditKey(ctx context.Context, js jetstream.JetStream, kv jetstream.KeyValue, c AuditKeyCheck) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := checkAuditKeyOnce(ctx, js, kv, c)
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

func checkAuditKeyOnce(ctx context.Context, js jetstream.JetStream, kv jetstream.KeyValue, c AuditKeyCheck) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	own := auditkey.KeyID(c.VerifierKey)
	rec := FleetKey{VerifierKey: c.VerifierKey, Node: c.NodeName, Recorded: time.Now().UTC().Format(time.RFC3339)}
	b, _ := json.Marshal(rec)
	if c.Accept {
		if _, err := kv.Put(ctx, FleetAuditKey, b); err != nil {
			return fmt.Errorf("integrity: record the fleet's audit key: %w", err)
		}
		log.Warn("this node's audit key is now the fleet's (--accept-audit-key): give every other node the same key", "key", own)
		return nil
	}
	fleet, found, err := ReadFleetKey(ctx, kv)
	if err != nil {
		return err
	}
	if !found {
		signers, cpID, size, err := NewestCheckpointSigners(ctx, js)
		if err != nil {
			return err
		}
		if len(signers) > 0 && !slices.Contains(signers, own) {
			return fmt.Errorf("%w: this node signs with %s (%s), but the newest checkpoint (%s, tree size %d) was signed with %s. %s",
				ErrAuditKeyMismatch, own, c.KeyFile, cpID, size, strings.Join(signers, ", "), c.Fix)
		}
		if _, err := kv.Create(ctx, FleetAuditKey, b); err == nil {
			log.Info("recorded this node's audit key as the fleet's", "key", own)
			return nil
		} else if !errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("integrity: record the fleet's audit key: %w", err)
		}
		// Another node recorded its key first; the bucket's leader may not
		// show it yet (the nodes of a new fleet start together).
		if fleet, found, err = ReadFleetKey(ctx, kv); err != nil {
			return err
		}
		if !found {
			return errFleetKeyUnseen
		}
	}
	return c.Compare(fleet, "")
}

// Compare returns ErrAuditKeyMismatch, naming both keys, the recording
// node and the fix, when fleet is not this node's key; where, when not
// empty, says when it was found (it follows the sentinel in parentheses).
func (c AuditKeyCheck) Compare(fleet FleetKey, where string) error {
	own := auditkey.KeyID(c.VerifierKey)
	id := auditkey.KeyID(fleet.VerifierKey)
	if id == own {
		return nil
	}
	if where != "" {
		where = " (" + where + ")"
	}
	return fmt.Errorf("%w%s: this node signs with %s (%s), but the fleet signs with %s (recorded by node %s at %s). %s",
		ErrAuditKeyMismatch, where, own, c.KeyFile, id, fleet.Node, fleet.Recorded, c.Fix)
}

// ReadFleetKey reads FleetAuditKey from kv; found is false when there is
// none.
func ReadFleetKey(ctx context.Context, kv jetstream.KeyValue) (FleetKey, bool, error) {
	var rec FleetKey
	e, err := kv.Get(ctx, FleetAuditKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return rec, false, nil
	}
	if err != nil {
		return rec, false, fmt.Errorf("integrity: read the fleet's audit key: %w", err)
	}
	if err := json.Unmarshal(e.Value(), &rec); err != nil || rec.VerifierKey == "" {
		return rec, false, fmt.Errorf("integrity: the fleet's audit key record (%s %s) does not decode: %v", FleetBucket, FleetAuditKey, err)
	}
	return rec, true, nil
}

// NewestCheckpointSigners returns the key ids that signed the newest
// audit checkpoint in VIGIL_DERIVED, its id and tree size; none when
// there is no checkpoint (or none that parses: audit verify reports it).
func NewestCheckpointSigners(ctx context.Context, js jetstream.JetStream) (signers []string, id string, size uint64, err error) {
	st, err := js.Stream(ctx, events.StreamDerived)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, "", 0, nil // a new fleet: nothing signed yet
	}
	if err != nil {
		return nil, "", 0, fmt.Errorf("integrity: stream %s: %w", events.StreamDerived, err)
	}
	m, err := st.GetLastMsgForSubject(ctx, events.SubjectCheckpoint)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, "", 0, nil
	}
	if err != nil {
		return nil, "", 0, fmt.Errorf("integrity: read the newest audit checkpoint: %w", err)
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

// LeaderFleetKey reads FleetAuditKey from the leader of the bucket's
// stream (the JetStream API's message get, not a direct get, which a
// replica still catching up may answer with "not found"). found is false
// only when the leader says there is no such record or no bucket; an
// error means ask again (no answer yet, an election).
func LeaderFleetKey(ctx context.Context, nc *nats.Conn) (rec FleetKey, found bool, err error) {
	req, _ := json.Marshal(map[string]string{"last_by_subj": "$KV." + FleetBucket + "." + FleetAuditKey})
	actx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	m, err := nc.RequestWithContext(actx, "$JS.API.STREAM.MSG.GET.KV_"+FleetBucket, req)
	if err != nil {
		return rec, false, err
	}
	var resp struct {
		Error *struct {
			Code    int `json:"code"`
			ErrCode int `json:"err_code"`
		} `json:"error"`
		Message *struct {
			Data []byte `json:"data"`
		} `json:"message"`
	}
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return rec, false, err
	}
	switch {
	case resp.Error != nil && (resp.Error.ErrCode == jsErrNoMessageFound || resp.Error.ErrCode == jsErrStreamNotFound):
		return rec, false, nil
	case resp.Error != nil:
		return rec, false, fmt.Errorf("integrity: the fleet's audit key: JetStream error %d/%d", resp.Error.Code, resp.Error.ErrCode)
	case resp.Message == nil:
		return rec, false, errors.New("integrity: the fleet's audit key: an empty answer")
	}
	if err := json.Unmarshal(resp.Message.Data, &rec); err != nil || rec.VerifierKey == "" {
		return rec, false, fmt.Errorf("integrity: the fleet's audit key record does not decode: %v", err)
	}
	return rec, true, nil
}

// JetStream API error codes LeaderFleetKey tells apart.
const (
	jsErrNoMessageFound = int(natsserver.JSNoMessageFoundErr)
	jsErrStreamNotFound = int(natsserver.JSStreamNotFoundErr)
)
