package natsutil

import (
	"os"
	"sync"
	"testing"

	"github.com/vigil-dev/vigil/internal/datadir"
)

// TestEnsureTokens: one token per role, 0600, distinct, kept across
// calls; a file that holds no token is an error, not replaced.
func TestEnsureTokens(t *testing.T) {
	dir := t.TempDir()
	first, err := EnsureTokens(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range TokenRoles {
		tok := first[r]
		if !ValidToken(tok) || seen[tok] {
			t.Fatalf("%s token %q: invalid or repeated", r, tok)
		}
		seen[tok] = true
		fi, err := os.Stat(datadir.CredsAt(dir).Token(r))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s token file: %v %v", r, fi.Mode(), err)
		}
		if got, err := ReadToken(dir, r); err != nil || got != tok {
			t.Fatalf("ReadToken(%s) = %q, %v", r, got, err)
		}
	}
	if _, ok := first[RoleService]; ok {
		t.Fatal("the service role has an HTTP token")
	}
	again, err := EnsureTokens(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range TokenRoles {
		if again[r] != first[r] {
			t.Fatalf("%s token changed across calls", r)
		}
	}
	if err := os.WriteFile(datadir.CredsAt(dir).Token(RoleAgent), []byte("hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureTokens(dir); err == nil {
		t.Fatal("a token file holding no token was accepted")
	}
}

// TestEnsureTokensConcurrent: nodes of a fleet starting together on one
// creds directory end up with the same tokens.
func TestEnsureTokensConcurrent(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	got := make([]map[Role]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = EnsureTokens(dir)
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		for _, r := range TokenRoles {
			if got[i][r] != got[0][r] {
				t.Fatalf("caller %d has another %s token than caller 0", i, r)
			}
		}
	}
}
