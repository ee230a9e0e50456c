package projections

import (
	"errors"
	"testing"

	"github.com/vigil-dev/vigil/events"
)

func tokenEvent(id string, kind events.Kind, origin events.Origin, data any) events.Event {
	ev := control(id, "", kind, data)
	ev.Origin = origin
	return ev
}

const (
	hashA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	hashB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	hashC = "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
	hashD = "sha256:dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
)

// TestTokenFold: the token read model takes creations and revocations
// from admins only; the first creation of an id or a digest stands; a
// revoked digest no longer leads to a token, and cannot be created again.
func TestTokenFold(t *testing.T) {
	created := func(id, role, hash string) events.TokenCreated {
		return events.TokenCreated{TokenID: id, Role: role, Name: "n-" + id, Hash: hash, Hint: "wxyz"}
	}
	log := []events.Event{
		tokenEvent("e1", events.KindTokenCreated, events.OriginAdmin, created("t1", "approver", hashA)),
		tokenEvent("e2", events.KindTokenCreated, events.OriginAgent, created("t2", "admin", hashB)),    // not an admin: ignored
		tokenEvent("e3", events.KindTokenCreated, events.OriginApprover, created("t3", "admin", hashB)), // not an admin: ignored
		tokenEvent("e4", events.KindTokenCreated, events.OriginAdmin, created("t1", "admin", hashB)),    // id taken: ignored
		tokenEvent("e5", events.KindTokenCreated, events.OriginAdmin, created("t5", "admin", hashA)),    // digest taken: ignored
		tokenEvent("e6", events.KindTokenCreated, events.OriginAdmin, created("t6", "service", hashC)),  // no HTTP role: ignored
		tokenEvent("e7", events.KindTokenCreated, events.OriginAdmin, created("t7", "agent", hashD)),
		tokenEvent("e8", events.KindTokenRevoked, events.OriginAgent, events.TokenRevoked{TokenID: "t1"}), // not an admin: ignored
		tokenEvent("e9", events.KindTokenRevoked, events.OriginAdmin, events.TokenRevoked{TokenID: "t7", By: "ops"}),
		tokenEvent("e10", events.KindTokenCreated, events.OriginAdmin, created("t10", "admin", hashD)), // a revoked digest: ignored
		tokenEvent("e11", events.KindTokenRevoked, events.OriginAdmin, events.TokenRevoked{TokenID: "nope"}),
	}
	var batch []Applied
	for i, ev := range log {
		batch = append(batch, Applied{Record: mkRec(t, uint64(i+1), ev)})
	}
	s := openTest(t, t.TempDir(), Options{SkipVerify: true})
	if err := s.Apply(batch); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		hash, id, role string
	}{
		{hashA, "t1", "approver"},
		{hashB, "", ""},
		{hashC, "", ""},
		{hashD, "", ""},
	}
	for _, c := range cases {
		tok, err := s.TokenByHash(c.hash)
		switch {
		case c.id == "" && !errors.Is(err, ErrNotFound):
			t.Errorf("%s: %+v %v, want not found", c.hash[:9], tok, err)
		case c.id != "" && (err != nil || tok.ID != c.id || tok.Role != c.role):
			t.Errorf("%s: %+v %v, want %s (%s)", c.hash[:9], tok, err, c.id, c.role)
		}
	}
	all, err := s.Tokens()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].ID != "t1" || !all[0].Active() || all[1].ID != "t7" || all[1].Active() || all[1].RevokedBy != "ops" || all[1].RevokedSeq != 9 {
		t.Fatalf("tokens: %+v", all)
	}
	if all[0].Hint != "wxyz" || all[0].Created == "" {
		t.Fatalf("token t1: %+v", all[0])
	}
}
