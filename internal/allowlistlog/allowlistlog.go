// Package allowlistlog is how a revocation of a global allowlist entry
// becomes an allowlist.changed event: `vigil allowlist revoke` and
// DELETE /v1/allowlist/{entry_id} both make it here, so the log holds the
// same event whichever way a person revoked. It reads and writes nothing:
// callers find the entry in force (from the log or the read models) and
// append the event it returns.
//
// On the data path: a use case shared by the CLI and the HTTP API, on the
// way into the log.
package allowlistlog

import (
	"errors"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/vigil-dev/vigil/events"
)

// ErrBadRevoke: a revocation that names no valid entry or no person.
var ErrBadRevoke = errors.New("allowlistlog: bad revocation")

// Revoke is a person's revocation of an allowlist entry in force.
type Revoke struct {
	// EntryID is the entry's id (as the allowlist lists it).
	EntryID string
	// By names the person revoking (the event's agent and data.by).
	By string
	// Reason is recorded when not empty.
	Reason string
	// Via adds where the revocation came from to the event's data ("via",
	// "credential"); it may not override the fields above.
	Via map[string]any
}

// RevokeEvent returns the allowlist.changed event that ends r.EntryID.
func RevokeEvent(r Revoke) (events.Event, error) {
	if !events.ValidID(r.EntryID) {
		return events.Event{}, fmt.Errorf("%w: %q is not an allowlist entry id", ErrBadRevoke, r.EntryID)
	}
	if r.By == "" {
		return events.Event{}, fmt.Errorf("%w: no person named", ErrBadRevoke)
	}
	data := map[string]any{}
	for k, v := range r.Via {
		data[k] = v
	}
	data["op"], data["entry_id"], data["by"] = events.AllowlistRevoke, r.EntryID, r.By
	if r.Reason != "" {
		data["reason"] = r.Reason
	} else {
		delete(data, "reason")
	}
	return events.Event{V: events.CurrentVersion, ID: ulid.Make().String(), Kind: events.KindAllowlistChanged,
		Agent: r.By, Time: time.Now().UTC(), Data: data}, nil
}
