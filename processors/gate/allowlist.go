package gate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vigil-dev/vigil/events"
)

// Entry is one global allowlist entry: actions of its shape that need a
// person are allowed, in every conversation, until it is revoked. Deny
// rules and ask rules still win over it.
type Entry struct {
	ID       string `json:"entry_id"`
	Shape    string `json:"shape"`
	ActionID string `json:"action_id,omitempty"`
	By       string `json:"by,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Seq is the log sequence of the allowlist.changed event that added it.
	Seq uint64 `json:"seq"`
}

// Allowlist folds allowlist.changed events. The gate uses it, and so does
// `vigil allowlist list`, so both always agree on what is in force.
type Allowlist struct {
	entries map[string]*Entry
}

// NewAllowlist returns an empty allowlist.
func NewAllowlist() *Allowlist { return &Allowlist{entries: map[string]*Entry{}} }

// Apply folds rec if it is an allowlist.changed event. It returns the entry
// added, if any, and a description of what was wrong with the event, if
// anything (the event is then ignored). Only an event with origin approver
// or admin changes the list.
func (a *Allowlist) Apply(rec *events.Record) (added *Entry, problem string) {
	ev := &rec.Event
	if ev.Kind != events.KindAllowlistChanged {
		return nil, ""
	}
	if !isPerson(ev.Origin) {
		// Ingest refuses control kinds from agents; this is an old or a
		// foreign log, or a bypass. An allowlist entry allows in a
		// person's name, so only a person's credentials change the list.
		return nil, fmt.Sprintf("allowlist.changed %s came with %s credentials; only approver or admin credentials change the allowlist; ignored", ev.ID, originName(ev.Origin))
	}
	ac, err := events.DataAs[events.AllowlistChanged](ev)
	if err != nil || ac.EntryID == "" {
		return nil, fmt.Sprintf("allowlist.changed %s is unreadable and was ignored", ev.ID)
	}
	switch ac.Op {
	case events.AllowlistAdd:
		if ac.Shape == "" {
			return nil, fmt.Sprintf("allowlist.changed %s adds entry %s with no shape; ignored", ev.ID, ac.EntryID)
		}
		if _, ok := a.entries[ac.EntryID]; ok {
			return nil, fmt.Sprintf("allowlist entry %s already exists; %s ignored", ac.EntryID, ev.ID)
		}
		by := ac.By
		if by == "" {
			by = ev.Agent
		}
		e := &Entry{ID: ac.EntryID, Shape: ac.Shape, ActionID: ac.ActionID, By: by, Reason: ac.Reason, Seq: rec.Seq}
		a.entries[e.ID] = e
		return e, ""
	case events.AllowlistRevoke:
		if _, ok := a.entries[ac.EntryID]; !ok {
			return nil, fmt.Sprintf("allowlist entry %s does not exist; revoke %s ignored", ac.EntryID, ev.ID)
		}
		delete(a.entries, ac.EntryID)
		return nil, ""
	}
	return nil, fmt.Sprintf("allowlist.changed %s has op %q; it must be add or revoke", ev.ID, ac.Op)
}

// forShape returns the oldest entry for shape, or nil.
func (a *Allowlist) forShape(shape string) *Entry {
	var best *Entry
	for _, e := range a.entries {
		if e.Shape == shape && older(e, best) {
			best = e
		}
	}
	return best
}

// forAction returns the oldest entry made for action id, or nil.
func (a *Allowlist) forAction(id string) *Entry {
	var best *Entry
	for _, e := range a.entries {
		if e.ActionID == id && older(e, best) {
			best = e
		}
	}
	return best
}

func older(e, than *Entry) bool {
	return than == nil || e.Seq < than.Seq || (e.Seq == than.Seq && e.ID < than.ID)
}

// Entries returns the entries in force, oldest first.
func (a *Allowlist) Entries() []Entry {
	out := make([]Entry, 0, len(a.entries))
	for _, e := range a.entries {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(x, y Entry) int {
		if c := cmpUint(x.Seq, y.Seq); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	return out
}
