package transport

import (
	"crypto/fips140"
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/vigil-dev/vigil/events"
)

// What a client reads in a node's data directory: the node's serve.json,
// the role seeds in creds/ and the fleet CA beside them (FleetCAFile).
// internal/datadir holds the whole layout of the directory and builds on
// these names.

// ServeInfoFile is the file `vigil serve` writes in its data directory so
// that clients find it (client.ServeInfo).
const ServeInfoFile = "serve.json"

// CredsDir is where role seeds live, inside a node's data directory.
func CredsDir(dataDir string) string { return filepath.Join(dataDir, "creds") }

// CredsFile is the seed file of a role in a node's data directory.
func CredsFile(dataDir string, r events.Role) string {
	return CredsFileIn(CredsDir(dataDir), r)
}

// CredsFileIn is the seed file of a role in a credentials directory.
func CredsFileIn(credsDir string, r events.Role) string {
	return filepath.Join(credsDir, string(r)+".nk")
}

// CredsOption returns the nats.Option that authenticates with a credentials
// file: a NATS .creds file (JWT and seed), or a bare nkey seed file as
// `vigil serve` writes them: nats.UserCredentials' and
// nats.NkeyOptionFromSeed's options, whose signatures are computed without
// crypto/ed25519's base-point table (ed25519Sign). In FIPS 140-3 mode
// (crypto/fips140.Enabled) they are nats.go's own, which sign with the
// FIPS module's crypto/ed25519.
func CredsOption(path string) (nats.Option, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read credentials %s: %w (pass --creds FILE, or --data DIR of a server)", path, err)
	}
	fips := fips140.Enabled()
	if strings.Contains(string(b), "BEGIN NATS USER JWT") {
		if fips {
			return nats.UserCredentials(path), nil
		}
		return credsFileOption(path), nil
	}
	var opt nats.Option
	if fips {
		clear(b)
		opt, err = nats.NkeyOptionFromSeed(path)
	} else {
		opt, err = nkeySeedOption(path, b) // wipes b
	}
	if err != nil {
		return nil, fmt.Errorf("credentials %s: not a .creds file or nkey seed: %w", path, err)
	}
	return opt, nil
}

// Every connection of a role with permissions may subscribe to one inbox
// subtree only: _INBOX.<token>.>, where token is a random value the
// connection declares when it connects (as its CONNECT user name, beside
// its nkey). Replies and JetStream deliveries to one connection therefore
// never reach another connection of the same credential (the server side
// is internal/natsutil's Authenticator and Permissions).

// InboxRoot is the first token of every reply inbox.
const InboxRoot = "_INBOX"

// InboxTokenLen is the length of a connection's inbox token (base32 of
// 20 random bytes: 160 bits, never guessed).
const InboxTokenLen = 32

// NewInboxToken returns a fresh random inbox token.
func NewInboxToken() string {
	var b [20]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("transport: no randomness: " + err.Error())
	}
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])
}

// ValidInboxToken reports whether tok can be a connection's inbox token.
func ValidInboxToken(tok string) bool {
	if len(tok) != InboxTokenLen {
		return false
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if !(c >= 'A' && c <= 'Z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// InboxOptions give a connection a fresh inbox token, declared to the
// server and used as its inbox prefix. Every Vigil connection that
// authenticates uses them; roles with no restrictions (admin, service)
// harmlessly so.
func InboxOptions() []nats.Option {
	tok := NewInboxToken()
	return []nats.Option{
		nats.CustomInboxPrefix(InboxRoot + "." + tok),
		func(o *nats.Options) error { o.User = tok; return nil },
	}
}
