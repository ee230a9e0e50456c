package httpapi

import (
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/internal/natsutil"
)

// TestSessionStore: sessions expire on the store's clock, are kept by
// digest only, have distinct CSRF tokens, and only people's roles get one.
func TestSessionStore(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := newSessionStore()
	st.now = func() time.Time { return now }
	id, sess, err := st.create(natsutil.RoleApprover, "alice", [sha256.Size]byte{})
	if err != nil {
		t.Fatal(err)
	}
	if len(id) < 43 || !sess.expires.Equal(now.Add(sessionTTL)) {
		t.Fatalf("id %q (want ≥256 bits in base64), expires %v", id, sess.expires)
	}
	for k := range st.byID {
		if strings.Contains(string(k[:]), id) || k != sessionDigest(id) {
			t.Fatal("the store keys sessions by something else than the id's digest")
		}
	}
	k, got := st.lookup(id)
	if got != sess {
		t.Fatal("lookup does not find the session")
	}
	id2, _, _ := st.create(natsutil.RoleAdmin, "bob", [sha256.Size]byte{})
	if id2 == id || st.csrf(k) == st.csrf(sessionDigest(id2)) {
		t.Fatal("two sessions share an id or a CSRF token")
	}
	if _, s := st.lookup(id + "x"); s != nil {
		t.Fatal("a wrong id finds a session")
	}
	now = now.Add(sessionTTL - time.Second)
	if _, s := st.lookup(id); s == nil {
		t.Fatal("the session ended before its expiry")
	}
	now = now.Add(time.Second)
	if _, s := st.lookup(id); s != nil {
		t.Fatal("the session outlived its expiry")
	}
	if _, ok := st.byID[k]; ok {
		t.Fatal("an expired session is kept")
	}

	for _, tc := range []struct {
		role natsutil.Role
		name string
		want error
	}{
		{natsutil.RoleAgent, "x", ErrSessionRole},
		{natsutil.RoleRuntime, "x", ErrSessionRole},
		{"service", "x", ErrSessionRole},
		{natsutil.RoleApprover, "", ErrSessionName},
		{natsutil.RoleApprover, "a\nb", ErrSessionName},
		{natsutil.RoleApprover, strings.Repeat("n", maxNameLen+1), ErrSessionName},
	} {
		if _, _, err := st.create(tc.role, tc.name, [sha256.Size]byte{}); !errors.Is(err, tc.want) {
			t.Errorf("create(%s, %q): %v, want %v", tc.role, tc.name, err, tc.want)
		}
	}
	if n := st.endWhere(func(s *session) bool { return s.name == "bob" }); n != 1 {
		t.Fatalf("ended %d sessions named bob", n)
	}
	if _, s := st.lookup(id2); s != nil {
		t.Fatal("bob's session survived its end")
	}
}

// TestSessionStoreFull: a full store drops expired sessions to make room,
// and refuses when none has expired.
func TestSessionStoreFull(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := newSessionStore()
	st.now = func() time.Time { return now }
	for range maxSessions {
		if _, _, err := st.create(natsutil.RoleApprover, "a", [sha256.Size]byte{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := st.create(natsutil.RoleApprover, "a", [sha256.Size]byte{}); !errors.Is(err, ErrTooManySessions) {
		t.Fatalf("create in a full store: %v", err)
	}
	now = now.Add(sessionTTL)
	if _, _, err := st.create(natsutil.RoleApprover, "a", [sha256.Size]byte{}); err != nil {
		t.Fatalf("create once the others expired: %v", err)
	}
	if len(st.byID) != 1 {
		t.Fatalf("%d sessions kept, want 1", len(st.byID))
	}
}
