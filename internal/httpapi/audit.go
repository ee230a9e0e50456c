package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/auditlog"
	"github.com/vigil-dev/vigil/processors/audit"
)

// The audit routes serve what `vigil audit prove` prints, through the same
// package (internal/auditlog): the newest signed checkpoint, and the
// inclusion proof of one log record in the tree of the newest checkpoint
// that covers it. A Prover answers them: it reads the log once into a
// small cache of the tree's upper nodes (2 hashes per 256 records) and
// then two blocks of 256 records per proof, instead of the whole log up
// to the checkpoint per request. The server checks the proof against the checkpoint's
// root before answering, but a client should trust neither: it checks the
// note's signature with the node's audit key (`vigil audit key`) and the
// proof against the root itself (RFC 6962), or exports the log with
// `vigil audit export` and runs `vigil audit verify --export` on it.

// proofWait bounds building a proof: the first one (and the first after
// a stream was replaced) reads VIGIL_LOG up to the checkpoint.
const proofWait = 50 * time.Second

// checkpointView is the answer to GET /v1/audit/checkpoint.
type checkpointView struct {
	Origin   string `json:"origin"`
	TreeSize uint64 `json:"tree_size"`
	RootHash string `json:"root_hash"`
	// Note is the signed note (checkpoint text, blank line, signatures).
	Note string `json:"note"`
}

func viewOf(cp audit.Checkpoint) checkpointView {
	return checkpointView{Origin: cp.Origin, TreeSize: cp.Size, RootHash: cp.Root.String(), Note: cp.Note}
}

// proofView is the answer to GET /v1/audit/proof/{seq}.
type proofView struct {
	Seq      uint64 `json:"seq"`
	LeafHash string `json:"leaf_hash"`
	// Proof is the audit path, leaf upwards (base64 hashes).
	Proof      []string       `json:"proof"`
	Checkpoint checkpointView `json:"checkpoint"`
	// Event is the record as stored (redacted), when it decodes.
	Event json.RawMessage `json:"event,omitempty"`
}

func (s *Server) auditCheckpoint(w http.ResponseWriter, r *http.Request, who principal) *apiError {
	if s.cfg.JetStream == nil {
		return unavailable("this node reads no streams; use vigil audit prove")
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	cp, err := s.prover.Latest(ctx, 0)
	if err != nil {
		return auditError(err)
	}
	writeJSON(w, http.StatusOK, viewOf(cp))
	return nil
}

func (s *Server) auditProof(w http.ResponseWriter, r *http.Request, who principal) *apiError {
	seq, err := strconv.ParseUint(r.PathValue("seq"), 10, 64)
	if err != nil || seq == 0 {
		return badRequest("seq", "%q: give a log sequence (1, 2, …)", r.PathValue("seq"))
	}
	if s.cfg.JetStream == nil {
		return unavailable("this node reads no streams; use vigil audit prove")
	}
	ctx, cancel := context.WithTimeout(r.Context(), proofWait)
	defer cancel()
	pr, err := s.prover.Prove(ctx, seq)
	if err != nil {
		return auditError(err)
	}
	out := proofView{Seq: pr.Seq, LeafHash: pr.Leaf.String(), Proof: make([]string, len(pr.Path)), Checkpoint: viewOf(pr.Checkpoint)}
	for i, h := range pr.Path {
		out.Proof[i] = h.String()
	}
	if ev, err := events.DecodeMsgpack(pr.Raw); err == nil {
		if b, err := ev.MarshalJSON(); err == nil {
			out.Event = b
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func auditError(err error) *apiError {
	switch {
	case errors.Is(err, auditlog.ErrNoCheckpoint):
		return &apiError{Status: http.StatusNotFound, Message: err.Error(), reason: "not_found"}
	case errors.Is(err, auditlog.ErrMissing), errors.Is(err, auditlog.ErrMismatch):
		return &apiError{Status: http.StatusConflict, Message: err.Error(), reason: "audit_mismatch"}
	case errors.Is(err, context.DeadlineExceeded):
		return unavailable("the audit trail took too long to read (%v); use vigil audit prove", err)
	}
	return unavailable("audit: %v", err)
}
