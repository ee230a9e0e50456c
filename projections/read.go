package projections

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/cockroachdb/pebble/v2"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/vigil-dev/vigil/events"
)

// Read APIs. Each returns ErrNotFound for an entry the read models do not
// hold, ErrCorrupt once corruption was met, and never data from a store
// that failed its checks at open. While Status().CatchingUp, answers
// reflect a prefix of the log.

// EventAt returns the log record at seq.
func (s *Store) EventAt(seq uint64) (events.Record, error) {
	v, ok, err := s.get(eventKey(seq))
	if err != nil {
		return events.Record{}, err
	}
	if !ok {
		return events.Record{}, fmt.Errorf("%w: no event at log sequence %d", ErrNotFound, seq)
	}
	n, w := binary.Uvarint(v)
	if w <= 0 || uint64(len(v)-w) < n {
		return events.Record{}, s.fail(pebble.ErrCorruption)
	}
	rec := events.Record{Seq: seq, Subject: string(v[w : w+int(n)]), Raw: v[w+int(n):]}
	// A record that does not decode is still returned, with an empty Event:
	// it is in the log as it is.
	rec.Event, _ = events.DecodeMsgpack(rec.Raw)
	return rec, nil
}

// GetEvent returns the event with the given id, at its first position in the log.
func (s *Store) GetEvent(id string) (events.Record, error) {
	seq, err := s.SeqOf(id)
	if err != nil {
		return events.Record{}, err
	}
	return s.EventAt(seq)
}

// SeqOf returns the log sequence of the first event with the given id
// (the id index the ingest service can deduplicate against).
func (s *Store) SeqOf(id string) (uint64, error) {
	prefix := key("e/i/", id, "\x00")
	var seq uint64
	err := s.scan(prefix, prefixEnd(prefix), func(k, _ []byte) bool {
		if len(k) == len(prefix)+8 {
			seq = binary.BigEndian.Uint64(k[len(prefix):])
		}
		return false
	})
	if err != nil {
		return 0, err
	}
	if seq == 0 {
		return 0, fmt.Errorf("%w: no event %q", ErrNotFound, id)
	}
	return seq, nil
}

// DefaultLimit bounds list reads when the caller gives no limit.
const DefaultLimit = 100

// ByConversation returns up to limit events of a conversation ("_" or ""
// for global events), in log order, starting at log sequence from.
func (s *Store) ByConversation(conversation string, from uint64, limit int) ([]events.Record, error) {
	if conversation == "" {
		conversation = events.GlobalScope
	}
	if limit <= 0 {
		limit = DefaultLimit
	}
	prefix := key("e/c/", conversation, "\x00")
	var seqs []uint64
	err := s.scan(convKey(conversation, from), prefixEnd(prefix), func(k, _ []byte) bool {
		if len(k) == len(prefix)+8 {
			seqs = append(seqs, binary.BigEndian.Uint64(k[len(prefix):]))
		}
		return len(seqs) < limit
	})
	if err != nil {
		return nil, err
	}
	out := make([]events.Record, 0, len(seqs))
	for _, seq := range seqs {
		r, err := s.EventAt(seq)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// RiskOf returns the risk assessment of an action.
func (s *Store) RiskOf(actionID string) (events.RiskAssessed, error) {
	_, ra, err := getDerived[events.RiskAssessed](s, key("r/", actionID), "risk assessment of action "+actionID)
	return ra, err
}

// Decision returns the gate's final decision on an action.
func (s *Store) Decision(actionID string) (events.GateDecided, error) {
	_, gd, err := getDerived[events.GateDecided](s, key("g/d/", actionID), "decision on action "+actionID)
	return gd, err
}

// PendingApproval is an action waiting for a person.
type PendingApproval struct {
	Conversation string `json:"conversation"`
	// Seq is the log sequence of the action; Time its time.
	Seq     uint64               `json:"seq"`
	Time    string               `json:"time"`
	Request events.GateRequested `json:"request"`
}

// Pending lists the actions waiting for a person, oldest first.
func (s *Store) Pending() ([]PendingApproval, error) {
	var out []PendingApproval
	var derr error
	p := []byte("g/p/")
	err := s.scan(p, prefixEnd(p), func(_, v []byte) bool {
		d, req, err := decodeOutput[events.GateRequested](v)
		if err != nil {
			derr = s.fail(pebble.ErrCorruption)
			return false
		}
		out = append(out, PendingApproval{Conversation: d.Conversation, Seq: d.Seq, Time: d.Time, Request: req})
		return true
	})
	if err == nil {
		err = derr
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, err
}

// Allowlist lists the allowlist entries in force, oldest first.
func (s *Store) Allowlist() ([]AllowEntry, error) {
	var out []AllowEntry
	err := scanDecode(s, []byte("a/e/"), func(e AllowEntry) { out = append(out, e) })
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, err
}

// Pairings lists the pairing state of every user, by platform then user.
func (s *Store) Pairings() ([]Pairing, error) {
	var out []Pairing
	err := scanDecode(s, []byte("p/"), func(p Pairing) { out = append(out, p) })
	return out, err
}

// PairingOf returns the pairing state of one user.
func (s *Store) PairingOf(platform, user string) (Pairing, error) {
	var p Pairing
	v, ok, err := s.get(pairingKey(platform, user))
	if err != nil {
		return p, err
	}
	if !ok {
		return p, fmt.Errorf("%w: no pairing for %s user %q", ErrNotFound, platform, user)
	}
	if err := msgpack.Unmarshal(v, &p); err != nil {
		return p, s.fail(pebble.ErrCorruption)
	}
	return p, nil
}

// SecurityRiskHint answers, for one conversation, "should the agent's tools
// ask the LLM for security_risk right now?". It agrees with the gate
// processor's Hint (processors/gate.HintFor) for the same log prefix.
type SecurityRiskHint struct {
	Conversation string `json:"conversation"`
	Ask          bool   `json:"ask"`
	// Source is "conversation" (a conversation-scoped config), "global", or
	// "default" (no config event yet).
	Source        string `json:"source"`
	ConfigVersion int64  `json:"config_version"`
	// ConfigSeq is the log sequence of the config event (0: the default).
	ConfigSeq uint64 `json:"config_seq"`
	// Schema is the fragment to add to the tools' parameter properties
	// (never to "required") while Ask is true; absent otherwise.
	Schema json.RawMessage `json:"schema,omitempty"`
}

// ConfigFor returns the config in force for a conversation ("" for the
// global one) and where it comes from: "conversation", "global" or "default".
func (s *Store) ConfigFor(conversation string) (ConfigState, string, error) {
	var cs ConfigState
	keys := [][]byte{[]byte("c/g")}
	sources := []string{"global"}
	if conversation != "" && conversation != events.GlobalScope {
		keys = append([][]byte{key("c/c/", conversation)}, keys...)
		sources = append([]string{"conversation"}, sources...)
	}
	for i, k := range keys {
		v, ok, err := s.get(k)
		if err != nil {
			return cs, "", err
		}
		if ok {
			if err := msgpack.Unmarshal(v, &cs); err != nil {
				return cs, "", s.fail(pebble.ErrCorruption)
			}
			return cs, sources[i], nil
		}
	}
	return ConfigState{Config: events.DefaultConfig()}, "default", nil
}

// AskSecurityRisk answers whether the agent in conversation should be
// asked for security_risk: true exactly when the config in force there
// enables the LLM hint analyzer (Config.AsksSecurityRisk). Runtimes poll it (or read it after
// each config change) to follow mid-conversation switches.
func (s *Store) AskSecurityRisk(conversation string) (SecurityRiskHint, error) {
	cs, source, err := s.ConfigFor(conversation)
	if err != nil {
		return SecurityRiskHint{}, err
	}
	cfg := cs.Config.WithDefaults()
	h := SecurityRiskHint{Conversation: conversation, Ask: cfg.AsksSecurityRisk(), Source: source,
		ConfigVersion: cfg.Version, ConfigSeq: cs.Seq}
	if h.Ask {
		h.Schema = json.RawMessage(events.SecurityRiskSchema)
	}
	return h, nil
}

// Stats returns the counts of a conversation ("_" for global events), or
// of the whole log when conversation is "".
func (s *Store) Stats(conversation string) (Stats, error) {
	k := keyTotals
	if conversation != "" {
		k = key("s/", conversation)
	}
	var st Stats
	v, ok, err := s.get(k)
	if err != nil {
		return st, err
	}
	if !ok {
		if conversation == "" {
			return Stats{ByKind: map[string]uint64{}}, nil
		}
		return st, fmt.Errorf("%w: no conversation %q", ErrNotFound, conversation)
	}
	if err := msgpack.Unmarshal(v, &st); err != nil {
		return st, s.fail(pebble.ErrCorruption)
	}
	return st, nil
}

// Conversations lists the stats of every conversation, by token.
func (s *Store) Conversations() ([]Stats, error) {
	var out []Stats
	err := scanDecode(s, []byte("s/"), func(st Stats) { out = append(out, st) })
	return out, err
}

// scan calls fn for each key in [lo, hi) until fn returns false. k and v
// are valid only during the call.
func (s *Store) scan(lo, hi []byte, fn func(k, v []byte) bool) error {
	s.rw.RLock()
	defer s.rw.RUnlock()
	if err := s.usable(); err != nil {
		return err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return s.fail(err)
	}
	for valid := it.First(); valid; valid = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return s.fail(err)
		}
		if !fn(it.Key(), v) {
			break
		}
	}
	if err := it.Error(); err != nil {
		it.Close()
		return s.fail(err)
	}
	return s.fail(it.Close())
}

func scanDecode[T any](s *Store, prefix []byte, fn func(T)) error {
	var derr error
	err := s.scan(prefix, prefixEnd(prefix), func(_, v []byte) bool {
		var x T
		if err := msgpack.Unmarshal(v, &x); err != nil {
			derr = s.fail(pebble.ErrCorruption)
			return false
		}
		fn(x)
		return true
	})
	if err != nil {
		return err
	}
	return derr
}

func getDerived[T any](s *Store, k []byte, what string) (storedOutput, T, error) {
	var zero T
	v, ok, err := s.get(k)
	if err != nil {
		return storedOutput{}, zero, err
	}
	if !ok {
		return storedOutput{}, zero, fmt.Errorf("%w: no %s", ErrNotFound, what)
	}
	d, x, err := decodeOutput[T](v)
	if err != nil {
		return d, x, s.fail(pebble.ErrCorruption)
	}
	return d, x, nil
}

// decodeOutput decodes a storedOutput and its data as T.
func decodeOutput[T any](b []byte) (storedOutput, T, error) {
	var x T
	var raw struct {
		Conversation string             `msgpack:"c,omitempty"`
		Seq          uint64             `msgpack:"s"`
		Time         string             `msgpack:"t,omitempty"`
		Data         msgpack.RawMessage `msgpack:"d"`
	}
	if err := msgpack.Unmarshal(b, &raw); err != nil {
		return storedOutput{}, x, err
	}
	d := storedOutput{Conversation: raw.Conversation, Seq: raw.Seq, Time: raw.Time}
	if err := msgpack.Unmarshal(raw.Data, &x); err != nil {
		return d, x, err
	}
	return d, x, nil
}
