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
	// The log grows past a block of the proof cache (256 records) and is
	// sealed again: proofs of old and new records come from the newer
	// checkpoint and verify, the old ones again after the cache was made.
	more := make([]any, 0, 301)
	for i := range 300 {
		more = append(more, map[string]any{"v": 1, "id": fmt.Sprintf("m-b%d", i), "kind": "message", "conversation": "c-audit",
			"data": map[string]any{"role": "user", "content": fmt.Sprint(i)}})
	}
	more = append(more, map[string]any{"v": 1, "id": "seal-b", "kind": "audit.seal", "data": map[string]any{"by": "test"}})
	if code, b := a.call(t, natsutil.RoleAdmin, "POST", "/v1/events", more, &app); code != http.StatusOK || len(app.Results) != len(more) {
		t.Fatalf("append: %d %s", code, b)
	}
	sealed = app.Results[len(more)-1].Seq
	for cp.TreeSize < sealed {
		code, b := a.call(t, natsutil.RoleApprover, "GET", "/v1/audit/checkpoint", nil, &cp)
		if code != http.StatusOK {
			t.Fatalf("checkpoint: %d %s", code, b)
		}
		if time.Now().After(deadline.Add(20 * time.Second)) {
			t.Fatalf("no checkpoint covers seq %d: %s", sealed, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, s := range []uint64{1, seq, app.Results[0].Seq, app.Results[255].Seq, app.Results[299].Seq, seq} {
		if code, b := a.call(t, natsutil.RoleApprover, "GET", fmt.Sprintf("/v1/audit/proof/%d", s), nil, &pr); code != http.StatusOK {
			t.Fatalf("proof of %d: %d %s", s, code, b)
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
		if pr.Seq != s || pr.Checkpoint.TreeSize < sealed || pr.Checkpoint.RootHash != cp.R {
			t.Fatalf("proof of %d: seq %d in a tree of %d (%s), want the checkpoint of %d (%s)", s, pr.Seq, pr.Checkpoint.TreeSize, pr.Checkpoint.RootHash, cp.TreeSize, cp.R)
		}
		if err := audit.VerifyInclusion(s, pr.Checkpoint.TreeSize, leaf, path, root); err != nil {
			t.Fatalf("the proof of %d does not verify: %v", s, err)
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
