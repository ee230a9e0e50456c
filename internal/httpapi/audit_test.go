package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/internal/auditkey"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/processors/audit"
)

// TestAuditCheckpointAndProof: once a seal made a checkpoint, the API
// serves it (its signature checks with the node's key) and the proof of a
// record, which leads to the checkpoint's root; a seq no checkpoint covers
// is 404, a bad one 400.
func TestAuditCheckpointAndProof(t *testing.T) {
	a := startAPI(t)
	var app struct {
		Results []struct{ Seq uint64 }
	}
	batch := []any{
		map[string]any{"v": 1, "id": "m-a1", "kind": "message", "conversation": "c-audit", "data": map[string]any{"role": "user", "content": "hi"}},
		map[string]any{"v": 1, "id": "m-a2", "kind": "message", "conversation": "c-audit", "data": map[string]any{"role": "user", "content": "there"}},
		map[string]any{"v": 1, "id": "seal-a", "kind": "audit.seal", "data": map[string]any{"by": "test"}},
	}
	if code, b := a.call(t, natsutil.RoleAdmin, "POST", "/v1/events", batch, &app); code != http.StatusOK || len(app.Results) != 3 {
		t.Fatalf("append: %d %s", code, b)
	}
	sealed := app.Results[2].Seq
	var cp struct {
		TreeSize uint64 `json:"tree_size"`
		N        string `json:"note"`
		R        string `json:"root_hash"`
	}
	deadline := time.Now().Add(20 * time.Second)
	for cp.TreeSize < sealed {
		code, b := a.call(t, natsutil.RoleApprover, "GET", "/v1/audit/checkpoint", nil, &cp)
		if code != http.StatusOK && code != http.StatusNotFound {
			t.Fatalf("checkpoint: %d %s", code, b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint covers seq %d: %s", sealed, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, vkey, err := auditkey.LoadOrCreate(a.Info().DataDir)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := audit.NewVerifiers(vkey)
	if err != nil {
		t.Fatal(err)
	}
	opened, err := audit.OpenCheckpoint(cp.N, vs)
	if err != nil || opened.Size != cp.TreeSize || opened.Root.String() != cp.R {
		t.Fatalf("the checkpoint's note does not check with the node's key: %v %+v", err, opened)
	}

	var pr struct {
		Seq        uint64
		LeafHash   string `json:"leaf_hash"`
		Proof      []string
		Checkpoint struct {
			TreeSize uint64 `json:"tree_size"`
			RootHash string `json:"root_hash"`
		}
		Event map[string]any
	}
	seq := app.Results[1].Seq
	if code, b := a.call(t, natsutil.RoleApprover, "GET", fmt.Sprintf("/v1/audit/proof/%d", seq), nil, &pr); code != http.StatusOK {
		t.Fatalf("proof: %d %s", code, b)
	}
	leaf, err := audit.ParseHash(pr.LeafHash)
	if err != nil {
		t.Fatal(err)
	}
	root, err := audit.ParseHash(pr.Checkpoint.RootHash)
	if err != nil {
		t.Fatal(err)
	}
	path := make([]audit.Hash, len(pr.Proof))
	for i, p := range pr.Proof {
		if path[i], err = audit.ParseHash(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := audit.VerifyInclusion(seq, pr.Checkpoint.TreeSize, leaf, path, root); err != nil {
		t.Fatalf("the proof does not verify: %v", err)
	}
	if pr.Event["id"] != "m-a2" {
		t.Fatalf("the proof's event: %v", pr.Event)
	}
	// A wrong leaf does not verify with that path.
	if len(path) > 0 {
		if err := audit.VerifyInclusion(seq, pr.Checkpoint.TreeSize, path[0], path, root); err == nil {
			t.Fatal("a wrong leaf verified")
		}
	}
	if code, b := a.call(t, natsutil.RoleApprover, "GET", fmt.Sprintf("/v1/audit/proof/%d", pr.Checkpoint.TreeSize+1000), nil, nil); code != http.StatusNotFound {
		t.Fatalf("a seq no checkpoint covers: %d %s", code, b)
	}
	var e struct{ Field string }
	if code, b := a.call(t, natsutil.RoleApprover, "GET", "/v1/audit/proof/x", nil, &e); code != http.StatusBadRequest || e.Field != "seq" {
		t.Fatalf("a bad seq: %d %s", code, b)
	}
	if code, _ := a.call(t, natsutil.RoleAgent, "GET", "/v1/audit/checkpoint", nil, nil); code != http.StatusForbidden {
		t.Fatalf("an agent reads the checkpoint: %d", code)
	}
}
