package projections

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/vigil-dev/vigil/events"
)

// Token is one named HTTP API token (token.created), with its revocation
// when it was revoked. It never holds the token: Hash is its SHA-256
// digest ("sha256:<hex>") and Hint its last four characters.
type Token struct {
	ID      string `msgpack:"id" json:"id"`
	Role    string `msgpack:"role" json:"role"`
	Name    string `msgpack:"name,omitempty" json:"name,omitempty"`
	Hash    string `msgpack:"hash" json:"-"`
	Hint    string `msgpack:"hint,omitempty" json:"hint,omitempty"`
	By      string `msgpack:"by,omitempty" json:"by,omitempty"`
	Created string `msgpack:"created,omitempty" json:"created,omitempty"`
	// Seq is the log sequence of the token.created event.
	Seq uint64 `msgpack:"seq" json:"seq"`
	// RevokedSeq is the log sequence of the token.revoked event (0 while
	// the token is in force).
	RevokedSeq uint64 `msgpack:"revoked_seq,omitempty" json:"revoked_seq,omitempty"`
	Revoked    string `msgpack:"revoked,omitempty" json:"revoked,omitempty"`
	RevokedBy  string `msgpack:"revoked_by,omitempty" json:"revoked_by,omitempty"`
}

// Active reports whether the token is in force.
func (t Token) Active() bool { return t.RevokedSeq == 0 }

// tokenRoles are the roles a token may have: those of natsutil.TokenRoles
// (this package sits below internal/ and does not import it).
var tokenRoles = map[string]bool{"agent": true, "runtime": true, "approver": true, "admin": true}

func tokenIDKey(id string) []byte     { return key("t/i/", id) }
func tokenHashKey(hash string) []byte { return key("t/h/", hash) }

// foldTokens keeps the named HTTP tokens. Only events an admin credential
// sent count (the ingest service accepts token kinds only on the control
// subjects, and stamps the origin; this is the second lock). A creation
// whose id or digest is already known is ignored (the first one stands),
// as is a revocation of an unknown or revoked token.
func foldTokens(t *txn, a *Applied) error {
	rec := &a.Record
	ev := &rec.Event
	if ev.Kind != events.KindTokenCreated && ev.Kind != events.KindTokenRevoked {
		return nil
	}
	if ev.Origin != events.OriginAdmin {
		return nil
	}
	switch ev.Kind {
	case events.KindTokenCreated:
		c, err := events.DataAs[events.TokenCreated](ev)
		if err != nil || c.TokenID == "" || !tokenRoles[c.Role] || !strings.HasPrefix(c.Hash, "sha256:") {
			return nil
		}
		if _, found, err := t.get(tokenIDKey(c.TokenID)); err != nil || found {
			return err
		}
		if _, found, err := t.get(tokenHashKey(c.Hash)); err != nil || found {
			return err
		}
		by := c.By
		if by == "" {
			by = ev.Agent
		}
		tok := Token{ID: c.TokenID, Role: c.Role, Name: c.Name, Hash: c.Hash, Hint: c.Hint, By: by, Created: timeOf(rec), Seq: rec.Seq}
		b, err := msgpack.Marshal(&tok)
		if err != nil {
			return err
		}
		if err := t.set(tokenIDKey(c.TokenID), b); err != nil {
			return err
		}
		return t.set(tokenHashKey(c.Hash), []byte(c.TokenID))
	case events.KindTokenRevoked:
		r, err := events.DataAs[events.TokenRevoked](ev)
		if err != nil || r.TokenID == "" {
			return nil
		}
		v, found, err := t.get(tokenIDKey(r.TokenID))
		if err != nil || !found {
			return err
		}
		var tok Token
		if msgpack.Unmarshal(v, &tok) != nil || !tok.Active() {
			return nil
		}
		by := r.By
		if by == "" {
			by = ev.Agent
		}
		tok.RevokedSeq, tok.Revoked, tok.RevokedBy = rec.Seq, timeOf(rec), by
		b, err := msgpack.Marshal(&tok)
		if err != nil {
			return err
		}
		if err := t.set(tokenIDKey(r.TokenID), b); err != nil {
			return err
		}
		// The digest stays known (a later creation cannot reuse it), but
		// no longer leads to a token in force.
		return t.set(tokenHashKey(tok.Hash), nil)
	}
	return nil
}

// TokenByHash returns the token in force whose digest is hash
// ("sha256:<hex>"), or ErrNotFound (never created, or revoked).
func (s *Store) TokenByHash(hash string) (Token, error) {
	v, ok, err := s.get(tokenHashKey(hash))
	if err != nil {
		return Token{}, err
	}
	if !ok || len(v) == 0 {
		return Token{}, fmt.Errorf("%w: no token in force with that digest", ErrNotFound)
	}
	tok, err := s.Token(string(v))
	if err != nil {
		return Token{}, err
	}
	if !tok.Active() || tok.Hash != hash {
		return Token{}, fmt.Errorf("%w: no token in force with that digest", ErrNotFound)
	}
	return tok, nil
}

// Token returns a named token by id, revoked or not.
func (s *Store) Token(id string) (Token, error) {
	var tok Token
	v, ok, err := s.get(tokenIDKey(id))
	if err != nil {
		return tok, err
	}
	if !ok {
		return tok, fmt.Errorf("%w: no token %q", ErrNotFound, id)
	}
	if err := msgpack.Unmarshal(v, &tok); err != nil {
		return tok, s.fail(pebble.ErrCorruption)
	}
	return tok, nil
}

// Tokens lists the named tokens in creation order, revoked ones included.
func (s *Store) Tokens() ([]Token, error) {
	var out []Token
	err := scanDecode(s, []byte("t/i/"), func(t Token) { out = append(out, t) })
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, err
}
