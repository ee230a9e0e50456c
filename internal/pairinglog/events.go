package pairinglog

import (
	"fmt"

	"github.com/oklog/ulid/v2"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/pairing"
)

// The pairing events, as the HTTP API, `vigil pairing` and the Timer send
// them: control kinds, in pairing.Conversation, with no time (the ingest
// service stamps its own), and never a code or a secret in clear.

// RequestEvent is a browser's request: its id, the keyed hashes of its
// code, its claim secret and its client address.
func RequestEvent(key []byte, requestID, code, secret, clientAddr, by string) events.Event {
	return pairingEvent(events.KindPairingRequested, "", events.Pairing{
		User: requestID, Platform: pairing.PlatformWeb, By: by,
		CodeHash: pairing.HashCode(key, code), ClaimHash: pairing.HashClaim(key, secret), Client: pairing.HashClient(key, clientAddr),
	})
}

// AttemptEvent is an admin's approval (kind pairing.approved, naming the
// device name) or denial (pairing.denied) of the request whose code is
// code. user says which request the admin meant (what `vigil pairing`
// matched, or "unmatched"); the fold goes by the code's hash alone.
func AttemptEvent(kind events.Kind, key []byte, platform, code, user, name, by, reason string) events.Event {
	if user == "" {
		user = "unmatched"
	}
	return pairingEvent(kind, "", events.Pairing{
		User: user, Platform: platform, CodeHash: pairing.HashCode(key, code), Name: name, By: by, Reason: reason,
	})
}

// RevokeEvent ends an approved device's pairing, or cancels a pending request.
func RevokeEvent(requestID, by, reason string) events.Event {
	return pairingEvent(events.KindPairingRevoked, "", events.Pairing{User: requestID, Platform: pairing.PlatformWeb, By: by, Reason: reason})
}

// ExpiredEvent is the timer's expiry of a pending request: its id is fixed
// ("pairing-expired:<request>"), so every timer of a fleet appends it once.
func ExpiredEvent(requestID string) events.Event {
	return pairingEvent(events.KindPairingExpired, "pairing-expired:"+requestID, events.Pairing{
		User: requestID, Platform: pairing.PlatformWeb, By: TimerAgent,
		Reason: fmt.Sprintf("not approved within %s", pairing.CodeTTL),
	})
}

// UnlockEvent is the timer's end of the lockout that began at log seq
// lockSeq (id "pairing-unlock:<seq>").
func UnlockEvent(lockSeq uint64) events.Event {
	user := pairing.UnlockID(lockSeq)
	return pairingEvent(events.KindPairingExpired, "pairing-unlock:"+fmt.Sprint(lockSeq), events.Pairing{
		User: user, By: TimerAgent, Reason: fmt.Sprintf("lockout over after %s", pairing.LockoutFor),
	})
}

// TimerAgent names the timer in the events it appends.
const TimerAgent = "vigil-pairing-timer"

func pairingEvent(kind events.Kind, id string, p events.Pairing) events.Event {
	data := map[string]any{"user": p.User}
	set := func(k, v string) {
		if v != "" {
			data[k] = v
		}
	}
	set("platform", p.Platform)
	set("code_hash", p.CodeHash)
	set("claim_hash", p.ClaimHash)
	set("client", p.Client)
	set("name", p.Name)
	set("by", p.By)
	set("reason", p.Reason)
	if id == "" {
		id = ulid.Make().String()
	}
	return events.Event{V: events.CurrentVersion, ID: id, Kind: kind, Conversation: pairing.Conversation, Data: data}
}
